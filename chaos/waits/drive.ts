/**
 * What the class's caller does for each booking once it is started: nothing more for `bookRetryAfter`; a caller's
 * cancellation asked again after each refusal (`callerCancelRetryAfter`); the booking's own cancel while it recovers
 * (`autoCancelRetryAfter`); a cancellation under bursts of overlapping requests (`overlapsAcrossContinueAsNew`). Every
 * answer is recorded with how long it took; nothing here judges (chaos/waits/check.ts does).
 */
import type { WorkflowHandle } from '@temporalio/client';
import {
  bookingStateQuery,
  bookingWorkflowId,
  cancelBooking,
  checkOrderNow,
  orderWorkflowId,
  type BookingOutcome,
  type CancelBookingRequest,
  type CancelFeeQuote,
  type OrderOutcome,
} from '../../src/api/client/index';
import { confirmCancel, type ConfirmOptions } from '../cancel';
import { untilAnswered as persist } from '../classes';
import { sleep } from '../timing';
import type { WaitBooking } from './plan';

/** A caller's request and what came back. */
export interface AskRecord {
  what: 'quote' | 'confirm' | 'check';
  /** The answer's kind, `update-failed:<type>` for a refusal, `error:<message>` when none came. */
  answer: string;
  ms: number;
  /** The run the request went to, when known. */
  runId?: string;
}

export interface WaitObservation {
  customerReferenceNo: string;
  kind: WaitBooking['kind'];
  bookingOutcome?: string;
  cancelRequested?: boolean;
  /** The cancel kinds: the order runs this cancellation went through (the first run of each chain). */
  orderRunIds: string[];
  /** The order run's ending (the last chain's, through its continued runs). */
  orderOutcome?: string;
  orderOutcomeDetail?: string;
  asks: AskRecord[];
  /** Nothing more could be done by the hard limit, or the driver failed. */
  problem?: string;
}

/** The client, the cancellation's recovery schedule (an order run continues as new after its `continueAsNewAfterEvents`), the hard limit and the stop. */
export type DriveOptions = ConfirmOptions;

/** How many times a caller told `cancel-refused` (rate limited) asks again, and how long after. */
const CALLER_ASKS = 6;
const CALLER_ASKS_AGAIN_AFTER_MS = 3_000;
/** Overlapping requests: this many at once, every this often, while the cancellation's run is open. */
const BURST_SIZE = 8;
const BURST_EVERY_MS = 1_500;

/** Drives one booking as its kind says; never throws. */
export async function drive(b: WaitBooking, o: DriveOptions): Promise<WaitObservation> {
  const obs: WaitObservation = {
    customerReferenceNo: b.request.customerReferenceNo,
    kind: b.kind,
    orderRunIds: [],
    asks: [],
  };
  try {
    if (b.kind === 'autoCancelRetryAfter') return await cancelWhileRecovering(obs, o);
    const outcome = await bookingOutcome(obs, o);
    if (b.kind === 'bookRetryAfter' || outcome?.kind !== 'confirmed') return obs;
    if (b.kind === 'callerCancelRetryAfter') return await cancelAskingAgain(obs, o);
    return await cancelUnderBursts(obs, o);
  } catch (err) {
    obs.problem = message(err);
    return obs;
  }
}

async function bookingOutcome(obs: WaitObservation, o: DriveOptions): Promise<BookingOutcome | undefined> {
  const handle = o.client.workflow.getHandle(bookingWorkflowId(obs.customerReferenceNo));
  const outcome = await persist(o, () => handle.result() as Promise<BookingOutcome>);
  obs.bookingOutcome = outcome.kind;
  if ('cancelRequested' in outcome) obs.cancelRequested = outcome.cancelRequested;
  return outcome;
}

/** The quote through the client helper as it is, and the end of the run that answered it. */
async function quote(obs: WaitObservation, o: DriveOptions): Promise<CancelFeeQuote> {
  const ref = obs.customerReferenceNo;
  const t = Date.now();
  const answer = await persist(o, () =>
    cancelBooking(o.client, ref, { confirm: false, reason: 'chaos: guest asks the fee', requestedBy: 'chaos' }),
  );
  obs.asks.push({ what: 'quote', answer: answer.kind, ms: Date.now() - t });
  if (answer.kind !== 'quote') throw new Error(`a quote was asked, the answer was ${answer.kind}`);
  await persist(o, () => o.client.workflow.getHandle(orderWorkflowId(ref)).result());
  return answer.quote;
}

/**
 * One confirm, as chaos/cancel.ts sends it (Update-With-Start with the class's schedule, asked again when the server
 * says to); its answer (`error:` when none came), latency and run.
 */
async function confirm(obs: WaitObservation, o: DriveOptions, request: CancelBookingRequest): Promise<AskRecord> {
  const t = Date.now();
  let answer: string;
  let run: WorkflowHandle | undefined;
  try {
    ({ answer, run } = await confirmCancel(o, obs.customerReferenceNo, request, {
      persist: (_what, fn) => persist(o, fn),
    }));
  } catch (err) {
    answer = `error:${grpcCode(err)}${message(err)}`;
  }
  const ms = Date.now() - t;
  // The run the request went to: the one it started, else the one it joined (described at once, as chaos/cancel.ts).
  const runId =
    run &&
    ((run as { firstExecutionRunId?: string }).firstExecutionRunId ??
      (await run.describe().then(
        (x) => x.runId,
        () => undefined,
      )));
  const ask: AskRecord = { what: 'confirm', answer, ms, ...(runId ? { runId } : {}) };
  obs.asks.push(ask);
  return ask;
}

const confirmAt = (fee: CancelFeeQuote['fee']): CancelBookingRequest => ({
  confirm: true,
  acceptedFee: fee,
  reason: 'chaos: guest cancelled',
  requestedBy: 'chaos',
});

/** The caller confirms; told `cancel-refused` (the supplier's wait), it asks again a few seconds later. */
async function cancelAskingAgain(obs: WaitObservation, o: DriveOptions): Promise<WaitObservation> {
  const q = await quote(obs, o);
  for (let ask = 1; ask <= CALLER_ASKS; ask++) {
    if (Date.now() > o.until || o.signal.aborted) throw new Error('out of time asking to cancel');
    const a = await confirm(obs, o, confirmAt(q.fee));
    if (a.runId) obs.orderRunIds.push(a.runId);
    if (a.answer.startsWith('cancel-requested') && a.runId) return followChain(obs, o, a.runId);
    // Refused (rate limited, nothing sent) or lost on the way: the run it went to ends; then the caller asks again.
    if (a.runId) {
      const ended = await persist(
        o,
        () => runOf(o, obs.customerReferenceNo, a.runId!).result() as Promise<OrderOutcome>,
      );
      obs.orderOutcome = ended.kind;
      obs.orderOutcomeDetail = detail(ended);
      if (ended.kind === 'cancelled' || ended.kind === 'cancel-unresolved') return obs;
    }
    await sleep(CALLER_ASKS_AGAIN_AFTER_MS, o.signal);
  }
  obs.problem = `still refused after ${CALLER_ASKS} asks`;
  return obs;
}

/** Waits until the booking recovers its order, cancels the booking itself, and follows the order run that took it. */
async function cancelWhileRecovering(obs: WaitObservation, o: DriveOptions): Promise<WaitObservation> {
  const handle = o.client.workflow.getHandle(bookingWorkflowId(obs.customerReferenceNo));
  for (;;) {
    if (Date.now() > o.until || o.signal.aborted) throw new Error('out of time waiting for the booking to recover');
    const stage = await handle
      .query(bookingStateQuery)
      .then((s) => s.stage as string)
      .catch(() => 'unknown');
    if (stage === 'recovering') break;
    if (stage === 'completed') {
      obs.problem = 'the booking ended before it was seen recovering';
      await bookingOutcome(obs, o);
      return obs;
    }
    await sleep(500, o.signal);
  }
  await persist(o, () => handle.cancel());
  const outcome = await bookingOutcome(obs, o);
  if (outcome?.kind !== 'confirmed' || !obs.cancelRequested) return obs;
  const latest = await persist(o, () =>
    o.client.workflow.getHandle(orderWorkflowId(obs.customerReferenceNo)).describe(),
  );
  obs.orderRunIds.push(latest.runId);
  return followChain(obs, o, latest.runId);
}

/**
 * Confirms, then while the cancellation's run (and the runs it continues as) is open, sends bursts of quotes, confirms
 * and checks at once on the same order; a request refused because the run continues as new is asked again.
 */
async function cancelUnderBursts(obs: WaitObservation, o: DriveOptions): Promise<WaitObservation> {
  const q = await quote(obs, o);
  const first = await confirm(obs, o, confirmAt(q.fee));
  if (!first.runId) throw new Error(`the confirm reached no run: ${first.answer}`);
  obs.orderRunIds.push(first.runId);
  const ref = obs.customerReferenceNo;
  const bursts = (async () => {
    for (let n = 0; Date.now() < o.until && !o.signal.aborted; n++) {
      const d = await o.client.workflow
        .getHandle(orderWorkflowId(ref))
        .describe()
        .catch(() => undefined);
      if (!d || d.status.name !== 'RUNNING') return;
      await Promise.all(
        Array.from({ length: BURST_SIZE }, (_, k) => {
          const what = (['quote', 'confirm', 'check'] as const)[(n + k) % 3]!;
          return overlapping(obs, o, what, q);
        }),
      );
      await sleep(BURST_EVERY_MS, o.signal);
    }
  })();
  const result = await followChain(obs, o, first.runId);
  await bursts;
  return result;
}

/** One overlapping request on the open run; asked again (up to 3 times) when the run was continuing as new. */
async function overlapping(
  obs: WaitObservation,
  o: DriveOptions,
  what: 'quote' | 'confirm' | 'check',
  q: CancelFeeQuote,
): Promise<void> {
  const ref = obs.customerReferenceNo;
  for (let attempt = 1; attempt <= 3; attempt++) {
    if (what === 'check') {
      const t = Date.now();
      const answer = await checkOrderNow(o.client, ref, { reason: 'chaos: overlapping check' }).then(
        (h) => `signalled:${(h as { firstExecutionRunId?: string }).firstExecutionRunId ?? ''}`,
        (err: unknown) => `error:${message(err)}`,
      );
      obs.asks.push({ what, answer, ms: Date.now() - t });
      return;
    }
    const request: CancelBookingRequest =
      what === 'quote' ? { confirm: false, reason: 'chaos: overlapping quote' } : confirmAt(q.fee);
    const a = await confirm(obs, o, request);
    a.what = what;
    if (a.answer !== 'update-failed:OrderRunContinuing') return;
  }
}

/** Follows a chain of order runs (continue-as-new included) to its end. */
async function followChain(obs: WaitObservation, o: DriveOptions, firstRunId: string): Promise<WaitObservation> {
  const ended = await persist(o, () => runOf(o, obs.customerReferenceNo, firstRunId).result() as Promise<OrderOutcome>);
  obs.orderOutcome = ended.kind;
  obs.orderOutcomeDetail = detail(ended);
  return obs;
}

function runOf(o: DriveOptions, ref: string, runId: string): WorkflowHandle {
  return o.client.workflow.getHandle(orderWorkflowId(ref), runId, { followRuns: true });
}

function detail(o: OrderOutcome): string {
  const sends =
    'cancellation' in o && o.cancellation ? o.cancellation.cancelAttempts.map((a) => a.result).join(', ') : '';
  return [('reason' in o && o.reason) || '', sends ? `sends [${sends}]` : ''].filter(Boolean).join('; ');
}

/** The gRPC status an error carries (its own or its cause's), as `code N: `; empty without one. */
function grpcCode(err: unknown): string {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === 'number') return `code ${e.code}: `;
  }
  return '';
}

function message(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`.slice(0, 300);
}
