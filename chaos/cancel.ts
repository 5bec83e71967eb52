/**
 * Cancellations on demand during a chaos run: once a booking of the `cancelAfterConfirm` class ends confirmed,
 * the chaos client quotes the fee with the client helper `cancelBooking` (`{confirm: false}`) and cancels with
 * `{confirm: true, acceptedFee: <the quoted fee>}`, the Cancel faults of its kind (chaos/mix.ts) planned in the
 * Book's Test header, while workers are being killed.
 *
 * The confirm is cancelBooking's own Update-With-Start (same workflow id `order:<ref>`, task queue, conflict and
 * reuse policies, CustomerReferenceNo attribute and summary) with one thing added to the start input: the run's
 * recovery schedule, scaled down 60× like the bookings' (`request.recovery`). The helper itself starts order
 * runs on the production schedule (re-send after 10 min, deadline 24 h), which would put a lost answer's re-send
 * 15.5 minutes after the first send: outside any chaos run. The quote uses the helper as it is.
 */
import {
  WithStartWorkflowOperation,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  bookingWorkflowId,
  cancelBooking,
  cancelBookingUpdate,
  CustomerReferenceNoKey,
  DEFAULT_TASK_QUEUE,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  type BookingOutcome,
  type CancelBookingAnswer,
  type CancelBookingRequest,
  type CancelFeeQuote,
  type OrderOutcome,
  type OrderWorkflowInput,
  type RecoveryOptions,
} from '../src/client';
import type { Sandbox } from '../dev/sandbox/server';
import type { CancellationObservation } from './check';
import { CANCEL_EXPECTED, type PlannedBooking } from './mix';
import { sleep } from './timing';

export interface CancelDriverOptions {
  client: Client;
  sandbox: Sandbox;
  /** The bookings' recovery schedule; the order run follows its Cancel on the same one. */
  recovery: RecoveryOptions;
  /** Epoch ms: the run's hard limit. A cancellation without an ending by then is `open`. */
  until: number;
  signal: AbortSignal;
}

/** The order run's schedule: the bookings' (without `testing`, a booking request's switch). */
export function orderRecovery(recovery: RecoveryOptions): NonNullable<OrderWorkflowInput['recovery']> {
  const { testing: _testing, ...policy } = recovery;
  return policy as NonNullable<OrderWorkflowInput['recovery']>;
}

class OutOfTime extends Error {}

/** Waits for the booking's outcome, then cancels it as planned; never throws. */
export async function cancelAfterConfirm(
  booking: PlannedBooking,
  o: CancelDriverOptions,
): Promise<CancellationObservation> {
  const plan = booking.cancel!;
  const ref = booking.request.customerReferenceNo;
  const obs: CancellationObservation = {
    customerReferenceNo: ref,
    kind: plan.kind,
    expected: CANCEL_EXPECTED[plan.kind],
    state: 'open',
    runIds: [],
    retries: 0,
  };

  /** Calls `fn` until it answers, through server restarts and transport errors; final errors are thrown. */
  const persist = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (final(err)) throw err;
        if (Date.now() > o.until || o.signal.aborted) throw new OutOfTime(`${what}: ${message(err)}`);
        obs.retries++;
        await sleep(Math.min(500 * attempt, 3_000), o.signal);
      }
    }
  };

  try {
    // 1. The booking's outcome: only a confirmed booking is cancelled.
    let outcome: BookingOutcome;
    try {
      outcome = await persist('booking outcome', () => o.client.workflow.getHandle(bookingWorkflowId(ref)).result());
    } catch (err) {
      if (err instanceof OutOfTime) throw err;
      return { ...obs, state: 'skipped', detail: `the booking ended without an outcome: ${message(err)}` };
    }
    if (outcome.kind !== 'confirmed') {
      return { ...obs, state: 'skipped', detail: `the booking ended ${outcome.kind}` };
    }

    // 2. The quote, through the client helper as it is; its run ends `quoted`.
    let quote: CancelFeeQuote | undefined;
    for (let attempt = 1; !quote; attempt++) {
      try {
        const answer = await persist('quote', () =>
          cancelBooking(o.client, ref, { confirm: false, reason: 'chaos: guest asks the fee', requestedBy: 'chaos' }),
        );
        if (answer.kind !== 'quote') throw new Error(`a quote was asked, the answer was ${answer.kind}`);
        quote = answer.quote;
      } catch (err) {
        // Refused (the order could not be read through a QueryOrders burst, say): ask again a few times.
        if (!(err instanceof WorkflowUpdateFailedError) || attempt >= 5) throw err;
        obs.retries++;
        obs.detail = `quote refused ${attempt}×: ${message(err)}`;
        await sleep(2_000, o.signal);
      }
    }
    obs.quote = quote;
    // The quote's run ends once it answered; wait for it, so the confirm starts a run of its own.
    const quoteRun = await persist('quote run', async () => {
      const handle = o.client.workflow.getHandle(orderWorkflowId(ref));
      const result = (await handle.result()) as OrderOutcome;
      return { result, runId: (await handle.describe()).runId };
    });
    obs.runIds!.push(quoteRun.runId);

    // 3. The window kinds: when to send, so free cancellation ends where the kind says.
    const order = o.sandbox.orders().find((x) => x.customerReferenceNo === ref);
    const windowEndsAt = order && plan.freeCancelForMs ? Date.parse(order.createdAt) + plan.freeCancelForMs : NaN;
    const free = quote.basis === 'free';
    if (plan.kind === 'freeWindowClosesBeforeConfirm') {
      // Quoted free; confirmed with that free fee 2 s after free cancellation ended.
      if (free && Date.now() < windowEndsAt - 2_000) await sleep(windowEndsAt + 2_000 - Date.now(), o.signal);
      else obs.windowMissed = true;
    }
    if (plan.kind === 'freeWindowClosesBeforeResend') {
      // The first (lost) Cancel 8 s before free cancellation ends; the re-send point is 15.5 s after it.
      if (free && Date.now() <= windowEndsAt - 10_000) await sleep(windowEndsAt - 8_000 - Date.now(), o.signal);
      else obs.windowMissed = true;
    }
    if (o.signal.aborted) throw new OutOfTime('aborted');

    // 4. The confirm at the quoted fee, followed to the order run's end.
    const request: CancelBookingRequest = {
      confirm: true,
      acceptedFee: quote.fee,
      reason: 'chaos: guest cancelled',
      requestedBy: 'chaos',
    };
    obs.acceptedFee = quote.fee;
    obs.confirmSentAt = new Date().toISOString();
    const sentAtMs = Date.now();
    let run: WorkflowHandle | undefined;
    for (let attempt = 1; !run; attempt++) {
      const op = new WithStartWorkflowOperation(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(ref),
        taskQueue: process.env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
        args: [{ customerReferenceNo: ref, recovery: orderRecovery(o.recovery) } satisfies OrderWorkflowInput],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: ref }],
        staticSummary: `Order · ref ${ref}`,
      });
      try {
        const answer: CancelBookingAnswer = await o.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
          args: [request],
          startWorkflowOperation: op,
        });
        obs.answer =
          answer.kind === 'cancel-requested' && answer.ambiguous ? 'cancel-requested (ambiguous)' : answer.kind;
        run = await op.workflowHandle();
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) {
          // Refused by the run (the fee changed, say): nothing sent; the run ends with its own outcome.
          obs.answer = `update-failed:${failureType(err)}`;
          run = await op.workflowHandle();
          continue;
        }
        // Lost on the way (a server restart): did it start a run after we sent it? Then follow that run.
        const latest = await persist('describe order run', () =>
          o.client.workflow
            .getHandle(orderWorkflowId(ref))
            .describe()
            .then((d) => ({ runId: d.runId, startMs: d.startTime.getTime() })),
        ).catch(() => undefined);
        if (latest && latest.runId !== quoteRun.runId && latest.startMs >= sentAtMs - 1_000) {
          obs.answer = `unknown (${message(err)})`;
          run = o.client.workflow.getHandle(orderWorkflowId(ref), latest.runId);
          continue;
        }
        if (Date.now() > o.until || o.signal.aborted || attempt >= 20) throw new OutOfTime(`confirm: ${message(err)}`);
        obs.retries++;
        await sleep(Math.min(500 * attempt, 3_000), o.signal);
      }
    }
    const handle = run;
    const first = (handle as { firstExecutionRunId?: string }).firstExecutionRunId;
    const ended = (await persist('order run outcome', () => handle.result())) as OrderOutcome;
    obs.runIds!.push(first ?? (await persist('describe', () => handle.describe())).runId);
    obs.state = 'done';
    obs.outcome = ended.kind;
    obs.outcomeDetail = outcomeDetail(ended);
    return obs;
  } catch (err) {
    if (err instanceof OutOfTime)
      return { ...obs, state: 'open', detail: `no ending by the hard limit (${err.message})` };
    return { ...obs, state: 'error', detail: message(err) };
  }
}

/** Errors a retry cannot change: the workflow's or the update's own answer. */
function final(err: unknown): boolean {
  return (
    err instanceof WorkflowFailedError ||
    err instanceof WorkflowUpdateFailedError ||
    err instanceof WorkflowNotFoundError
  );
}

function failureType(err: WorkflowUpdateFailedError): string {
  const cause = err.cause as { type?: string; message?: string } | undefined;
  return cause?.type ?? cause?.message ?? err.message;
}

function message(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

function outcomeDetail(o: OrderOutcome): string {
  const money = (m: { amount: number; currency: string } | null | undefined) =>
    m ? `${m.amount} ${m.currency}` : 'unknown';
  const sends =
    'cancellation' in o && o.cancellation ? o.cancellation.cancelAttempts.map((a) => a.result).join(', ') : '';
  const parts = [
    'reason' in o && o.reason ? o.reason : '',
    o.kind === 'cancel-stopped' ? `fee now ${money(o.feeNow)}` : '',
    'cancellation' in o && o.cancellation?.serviceFee ? `service fee ${money(o.cancellation.serviceFee)}` : '',
    sends ? `sends [${sends}]` : '',
    'order' in o && o.order ? `order status ${o.order.status}` : '',
  ];
  return parts.filter(Boolean).join('; ');
}
