/**
 * Cancellations on demand during a chaos run: once a booking of the `cancelAfterConfirm` class ends confirmed,
 * the chaos client quotes the fee with the client helper `cancelBooking` (`{confirm: false}`) and cancels with
 * `{confirm: true, acceptedFee: <the quoted fee>}`, the Cancel faults of its kind (chaos/mix.ts) planned in the
 * Book's Test header, while workers are being killed.
 *
 * Overlapping cancellations (class `cancelOverlaps`, chaos/mix.ts OVERLAP_KINDS) go the same way with two confirms
 * at once (`duplicateConfirm`), or are asked while the booking still recovers its order (cancelDuringRecovery): the
 * caller's cancelBooking through `order:<ref>` first (to be refused, naming the booking's own cancel), then the
 * booking's own cancel (a workflow cancellation; its `onCancelAfterBook: 'cancel'` hands the order run an
 * `autoCancel`), followed to the order run that took it.
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
  bookingStateQuery,
  bookingWorkflowId,
  cancelBooking,
  cancelBookingUpdate,
  CustomerReferenceNoKey,
  DEFAULT_TASK_QUEUE,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  serverAskedToRetry,
  type BookingOutcome,
  type CancelBookingAnswer,
  type CancelBookingRequest,
  type CancelFeeQuote,
  type OrderOutcome,
  type OrderWorkflowInput,
  type RecoveryOptions,
} from '../src/api/client/index';
import type { Sandbox } from '../dev/sandbox/server';
import { type CancellationObservation } from './check/observation';
import { DURING_RECOVERY, EXPECTED_BY_KIND, type PlannedBooking } from './mix';
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

/** No answer by the run's hard limit (or the run stopped): the request is left open, not failed. */
class OutOfTime extends Error {}

/** One cancellation under way: what it observed so far, and calls that persist through restarts. */
interface Driver {
  ref: string;
  booking: PlannedBooking;
  obs: CancellationObservation;
  o: CancelDriverOptions;
  /** Calls `fn` until it answers, through server restarts and transport errors; final errors are thrown. */
  persist<T>(what: string, fn: () => Promise<T>): Promise<T>;
}

function driverFor(booking: PlannedBooking, o: CancelDriverOptions): Driver {
  const plan = booking.cancel!;
  const ref = booking.request.customerReferenceNo;
  const obs: CancellationObservation = {
    customerReferenceNo: ref,
    kind: plan.kind,
    expected: EXPECTED_BY_KIND[plan.kind],
    state: 'open',
    runIds: [],
    retries: 0,
  };
  const persist = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await byTheHardLimit(what, fn(), o.until);
      } catch (err) {
        if (final(err) || err instanceof OutOfTime) throw err;
        if (Date.now() > o.until || o.signal.aborted) throw new OutOfTime(`${what}: ${message(err)}`);
        obs.retries++;
        await sleep(Math.min(500 * attempt, 3_000), o.signal);
      }
    }
  };
  return { ref, booking, obs, o, persist };
}

/** Cancels the booking as its plan says (either class); never throws. */
export async function cancelPlanned(booking: PlannedBooking, o: CancelDriverOptions): Promise<CancellationObservation> {
  const d = driverFor(booking, o);
  try {
    if (DURING_RECOVERY.has(booking.cancel!.kind)) return await cancelDuringRecovery(d);
    return await cancelAfterConfirm(d);
  } catch (err) {
    if (err instanceof OutOfTime)
      return { ...d.obs, state: 'open', detail: `no ending by the hard limit (${err.message})` };
    return { ...d.obs, state: 'error', detail: message(err) };
  }
}

/** Waits for the booking's outcome, then cancels it as planned. */
async function cancelAfterConfirm(d: Driver): Promise<CancellationObservation> {
  // 1. The booking's outcome: only a confirmed booking is cancelled.
  let outcome: BookingOutcome;
  try {
    outcome = await d.persist('booking outcome', () =>
      d.o.client.workflow.getHandle(bookingWorkflowId(d.ref)).result(),
    );
  } catch (err) {
    if (err instanceof OutOfTime) throw err;
    return { ...d.obs, state: 'skipped', detail: `the booking ended without an outcome: ${message(err)}` };
  }
  if (outcome.kind !== 'confirmed') {
    return { ...d.obs, state: 'skipped', detail: `the booking ended ${outcome.kind}` };
  }
  return quoteAndConfirm(d);
}

/** Quotes with the client helper, then confirms at the quoted fee (once, or twice for a duplicate), followed to the end. */
async function quoteAndConfirm(d: Driver): Promise<CancellationObservation> {
  const { obs, o, ref } = d;
  const plan = d.booking.cancel!;
  // 2. The quote, through the client helper as it is; its run ends `quoted`.
  let quote: CancelFeeQuote | undefined;
  for (let attempt = 1; !quote; attempt++) {
    try {
      const answer = await d.persist('quote', () =>
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
  const quoteRun = await d.persist('quote run', async () => {
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

  // 4. The confirm at the quoted fee (twice for a duplicate), followed to the order run's end.
  const request: CancelBookingRequest = {
    confirm: true,
    acceptedFee: quote.fee,
    reason: 'chaos: guest cancelled',
    requestedBy: 'chaos',
  };
  obs.acceptedFee = quote.fee;
  obs.confirmSentAt = new Date().toISOString();
  let handle: WorkflowHandle;
  if (plan.kind === 'duplicateConfirm') {
    const second = sleep(plan.secondAfterMs ?? 0, o.signal).then(() => confirm(d, request, quoteRun.runId));
    const both = await Promise.all([confirm(d, request, quoteRun.runId), second]);
    obs.answers = both.map((c) => c.answer);
    // The answer that took the cancellation is the cancellation's; the other should be a refusal.
    const taken = both.find((c) => c.answer.startsWith('cancel-requested')) ?? both[0];
    obs.answer = taken.answer;
    handle = taken.run;
  } else {
    const once = await confirm(d, request, quoteRun.runId);
    obs.answer = once.answer;
    handle = once.run;
  }
  return followOrderRun(d, handle);
}

/** One confirm of the cancellation driver: its retries counted on the cancellation's observation. */
function confirm(
  d: Driver,
  request: CancelBookingRequest,
  quoteRunId: string,
): Promise<{ answer: string; run: WorkflowHandle }> {
  return confirmCancel(d.o, d.ref, request, {
    previousRunId: quoteRunId,
    persist: d.persist,
    onRetry: () => d.obs.retries++,
  });
}

/** What a confirm needs besides its request: the client, the run's schedule, its hard limit and its stop. */
export type ConfirmOptions = Pick<CancelDriverOptions, 'client' | 'recovery' | 'until' | 'signal'>;

/**
 * One confirm: cancelBooking's Update-With-Start with the run's recovery schedule in the start input; its answer
 * (`update-failed:<type>` when refused) and the run it went to. Asked again when the server says to (the update was
 * not applied); lost on the way (a server restart): the run it started after being sent, if any (one other than
 * `previousRunId`), with the answer `unknown (...)`, else sent again. Throws OutOfTime after 20 tries or at the limit.
 */
export async function confirmCancel(
  o: ConfirmOptions,
  ref: string,
  request: CancelBookingRequest,
  h: {
    previousRunId?: string;
    persist?: <T>(what: string, fn: () => Promise<T>) => Promise<T>;
    onRetry?: () => void;
  } = {},
): Promise<{ answer: string; run: WorkflowHandle }> {
  const persist = h.persist ?? ((_what, fn) => fn());
  const sentAtMs = Date.now();
  for (let attempt = 1; ; attempt++) {
    const op = withStart(ref, o);
    try {
      const answer: CancelBookingAnswer = await o.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
        args: [request],
        startWorkflowOperation: op,
      });
      const label =
        answer.kind === 'cancel-requested' && answer.ambiguous ? 'cancel-requested (ambiguous)' : answer.kind;
      return { answer: label, run: await op.workflowHandle() };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // Refused by the run (the fee changed, a cancellation already asked for): nothing sent by this request.
        return { answer: `update-failed:${failureType(err)}`, run: await op.workflowHandle() };
      }
      // The server said the update was not applied and to ask again (as the client helper does): not a lost request.
      const askedAgain = serverAskedToRetry(err);
      const latest = await persist('describe order run', () =>
        o.client.workflow
          .getHandle(orderWorkflowId(ref))
          .describe()
          .then((x) => ({ runId: x.runId, startMs: x.startTime.getTime() })),
      ).catch(() => undefined);
      if (!askedAgain && latest && latest.runId !== h.previousRunId && latest.startMs >= sentAtMs - 1_000) {
        return {
          answer: `unknown (${message(err)})`,
          run: o.client.workflow.getHandle(orderWorkflowId(ref), latest.runId),
        };
      }
      if (Date.now() > o.until || o.signal.aborted || attempt >= 20) throw new OutOfTime(`confirm: ${message(err)}`);
      h.onRetry?.();
      await sleep(Math.min(500 * attempt, 3_000), o.signal);
    }
  }
}

/** cancelBooking's Update-With-Start operation, with the run's recovery schedule added to the start input. */
export function withStart(ref: string, o: Pick<CancelDriverOptions, 'recovery'>) {
  return new WithStartWorkflowOperation(ORDER_WORKFLOW_TYPE, {
    workflowId: orderWorkflowId(ref),
    taskQueue: process.env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    args: [{ customerReferenceNo: ref, recovery: orderRecovery(o.recovery) } satisfies OrderWorkflowInput],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: ref }],
    staticSummary: `Order · ref ${ref}`,
  });
}

/** Waits for the order run (and the runs it continued as) to end; its outcome is the cancellation's. */
async function followOrderRun(d: Driver, handle: WorkflowHandle): Promise<CancellationObservation> {
  const { obs } = d;
  const first = (handle as { firstExecutionRunId?: string }).firstExecutionRunId;
  const ended = (await d.persist('order run outcome', () => handle.result())) as OrderOutcome;
  obs.runIds!.push(first ?? (await d.persist('describe', () => handle.describe())).runId);
  obs.state = 'done';
  obs.outcome = ended.kind;
  obs.outcomeDetail = outcomeDetail(ended);
  const origin =
    ended.kind === 'cancel-not-done' ? ended.origin : 'cancellation' in ended ? ended.cancellation?.origin : undefined;
  if (origin) obs.origin = origin;
  return obs;
}

/**
 * Cancelled while the booking recovers its order: cancelBooking through `order:<ref>` (to be refused
 * BookingInProgress, nothing sent), then the booking's own cancel; its order run, started by the hand-off of
 * onCancelAfterBook, followed to its end. A booking that ended before it recovered, or confirmed before its cancel
 * reached it (no `cancelRequested`), is cancelled as a caller would then: quoted and confirmed.
 */
async function cancelDuringRecovery(d: Driver): Promise<CancellationObservation> {
  const { obs, o, ref } = d;
  const booking = o.client.workflow.getHandle(bookingWorkflowId(d.ref));
  if ((await untilRecovering(d)) === 'ended') {
    obs.detail = 'the booking ended before it was seen recovering: cancelled as a caller would';
    return cancelAfterConfirm(d);
  }
  // The caller's try through order:<ref>: a confirm at no fee, which must be refused before anything is sent.
  let callerRunId: string | undefined;
  obs.callerAnswer = await d
    .persist('cancelBooking during recovery', async () => {
      const op = withStart(ref, o);
      try {
        const answer = await o.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
          args: [{ confirm: true, acceptedFee: { amount: 0, currency: 'USD' }, reason: 'chaos: guest cancels early' }],
          startWorkflowOperation: op,
        });
        return answer.kind;
      } catch (err) {
        if (!(err instanceof WorkflowUpdateFailedError)) throw err;
        return `update-failed:${failureType(err)}`;
      } finally {
        // The run the request went to (describe at once: the booking's cancellation cannot have started another yet).
        const run = await op.workflowHandle().catch(() => undefined);
        const runId =
          run &&
          ((run as { firstExecutionRunId?: string }).firstExecutionRunId ??
            (await run.describe().then(
              (x) => x.runId,
              () => undefined,
            )));
        if (runId) {
          obs.runIds!.push(runId);
          callerRunId = runId;
        }
      }
    })
    .catch((err: unknown) => (err instanceof OutOfTime ? Promise.reject(err) : `error: ${message(err)}`));
  // The booking's own cancel: what the refusal named.
  obs.bookingCancelAskedAt = new Date().toISOString();
  await d
    .persist('cancel the booking', () => booking.cancel())
    .catch((err: unknown) => {
      if (err instanceof OutOfTime) throw err;
      obs.detail = `the booking's cancel was not taken: ${message(err)}`;
    });
  obs.acceptedFee = 'any';
  let outcome: BookingOutcome;
  try {
    outcome = await d.persist('booking outcome', () => booking.result());
  } catch (err) {
    if (err instanceof OutOfTime) throw err;
    return {
      ...obs,
      state: 'done',
      bookingOutcome: 'no outcome',
      detail: `the booking ended without an outcome: ${message(err)}`,
    };
  }
  obs.bookingOutcome = outcome.kind;
  if ('cancelRequested' in outcome) obs.cancelRequested = outcome.cancelRequested;
  if (outcome.kind !== 'confirmed') return { ...obs, state: 'done' };
  if (!outcome.cancelRequested) {
    obs.detail = 'the booking confirmed before its cancel reached it: cancelled as a caller would';
    obs.acceptedFee = undefined;
    return quoteAndConfirm(d);
  }
  // The hand-off started (or joined) the order run before the booking's result was out: the latest run took it.
  const latest = await d.persist('describe the auto-cancel run', () =>
    o.client.workflow.getHandle(orderWorkflowId(ref)).describe(),
  );
  // How the caller's refused run ended, when another run took the booking's cancellation: nothing sent, nobody told?
  if (callerRunId && callerRunId !== latest.runId) {
    const callerRun = o.client.workflow.getHandle(orderWorkflowId(ref), callerRunId);
    const ended = (await d.persist('the refused run', () => callerRun.result()).catch(() => undefined)) as
      OrderOutcome | undefined;
    obs.callerRunOutcome = ended ? `${ended.kind}${'reason' in ended ? `: ${ended.reason}` : ''}` : 'unknown';
  }
  await followOrderRun(d, o.client.workflow.getHandle(orderWorkflowId(ref), latest.runId));
  return withEarlierAutoRuns(d, [callerRunId, latest.runId]);
}

/**
 * The hand-off is delivered again when its worker is lost after the signal: once the first run has ended, that starts
 * a second run, which finds the order Cancelled and ends `checked`. The cancellation's outcome is the one of the run
 * that acted: every other run started since the booking's cancel was asked is read, and its outcome noted.
 */
async function withEarlierAutoRuns(d: Driver, known: Array<string | undefined>): Promise<CancellationObservation> {
  const { obs, o, ref } = d;
  const since = Date.parse(obs.bookingCancelAskedAt ?? '') - 1_000;
  const others = await d
    .persist('list order runs', async () => {
      const runIds: string[] = [];
      for await (const info of o.client.workflow.list({ query: `WorkflowId = '${orderWorkflowId(ref)}'` })) {
        if (!known.includes(info.runId) && info.startTime.getTime() >= since) runIds.push(info.runId);
      }
      return runIds;
    })
    .catch((err: unknown) => (err instanceof OutOfTime ? Promise.reject(err) : []));
  for (const runId of others) {
    const ended = (await d
      .persist('an earlier order run', () => o.client.workflow.getHandle(orderWorkflowId(ref), runId).result())
      .catch(() => undefined)) as OrderOutcome | undefined;
    obs.runIds!.push(runId);
    (obs.otherRunOutcomes ??= []).push(ended?.kind ?? 'unknown');
    if (ended?.kind === 'cancelled' && obs.outcome === 'checked') {
      obs.detail = `the hand-off was delivered twice: run ${runId} cancelled the order, the last run found it cancelled`;
      obs.outcome = ended.kind;
      obs.outcomeDetail = outcomeDetail(ended);
      if (ended.cancellation?.origin) obs.origin = ended.cancellation.origin;
    }
  }
  return obs;
}

/** Waits until the booking reads `recovering` (its Book answer lost, the order made), or has ended. */
async function untilRecovering(d: Driver): Promise<'recovering' | 'ended'> {
  const handle = d.o.client.workflow.getHandle(bookingWorkflowId(d.ref));
  for (;;) {
    if (Date.now() > d.o.until || d.o.signal.aborted) throw new OutOfTime('waiting for the booking to recover');
    try {
      const described = await handle.describe();
      if (described.status.name !== 'RUNNING') return 'ended';
      const state = await handle.query(bookingStateQuery);
      if (state.stage === 'recovering') return 'recovering';
      if (state.stage === 'completed') return 'ended';
    } catch {
      // Not started yet, a worker killed, the server restarting: ask again.
    }
    await sleep(500, d.o.signal);
  }
}

/**
 * The call's answer, or OutOfTime at the hard limit: a workflow that never ends (a result long-polled for ever)
 * must not hold the run past it.
 */
function byTheHardLimit<T>(what: string, call: Promise<T>, until: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutOfTime(`${what}: no answer by the hard limit`)),
      Math.max(0, until - Date.now()),
    );
    timer.unref();
  });
  return Promise.race([call, limit]).finally(() => clearTimeout(timer));
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
