/**
 * Cancelling an order, by one rule for every send and re-send (the Cancel rule, src/runtime/rules/cancel.ts):
 *  1. Re-quote first: the fee that applies now, from the order as last read. Above what was accepted (or no
 *     longer free for cancel-if-free), nothing is sent: the run stops and hands to a person (`cancel-stopped`).
 *  2. Send Cancel once. `accepted` and `ambiguous` answers may have cancelled; a `rejected` one is a refusal
 *     only while no earlier send may have acted; `refused` (429, never reached) is sent again after a pause,
 *     for at most 10 minutes, on the first send only; a caller's update is held for at most 10 s of pauses, then
 *     answered `cancel-refused` with the supplier's wait, so nobody waits minutes on an update.
 *  3. Follow the order with QueryOrders on the recovery schedule (at once, 30 s, 1, 2, 4, 8 min, then every
 *     10 min; a supplier hint brings a poll forward) until Cancelled, CancelFailed, or the deadline. When the last
 *     send was ambiguous and the order still shows Confirmed long after (`rebookAfterSeconds`), Cancel is sent
 *     again (back to 1), at most `maxBookAttempts` sends that may have acted in all; a re-send refused in words
 *     that prove it did nothing ends the sends (an earlier one may be what the supplier is working on).
 */
import { allHandlersFinished, condition, continueAsNew, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { CancelSendOutcome } from '../../runtime/rules/cancel';
import type { CancelBookingAnswer, CancelFeeQuote, CancellationRecord, OrderOutcome } from '../../api/contract/index';
import { feeWithin, type AcceptedFee } from '../../runtime/rules/cancel-fee';
import { countFromSend, followOrder, maySendAgain } from '../follow';
import { cancelActivity, earlierCancelSends } from './proxies';
import { failureType, neverStarted } from '../failure';
import { describeOrder, fee, feeClock, type OrderRun } from './run';
import type { CancelPlan, FollowState, OrderCarry, OrderWorkflowArgs } from './carry';

/** How long the first send keeps trying while the supplier refuses before any work (429): Book's figure. */
const REFUSALS_FOR_MS = 10 * 60_000;
/** The longest a caller's update is held by such refusals before it is answered `cancel-refused`, with the wait. */
const CALLER_HOLD_MS = 10_000;

/**
 * How a cancellation's first send went: the answer a caller gets, and either the run's outcome (nothing was sent, or
 * the send was refused) or where its follow-up starts.
 */
export type FirstSend = { answer: CancelBookingAnswer } & ({ ended: OrderOutcome } | { follow: FollowState });

/** Cancels the order (read just before by the caller of this function) and follows it to an ending. */
export async function cancelOrder(run: OrderRun, plan: CancelPlan, input: OrderWorkflowArgs): Promise<OrderOutcome> {
  const first = await sendFirst(run, plan);
  return 'ended' in first ? first.ended : follow(run, plan, first.follow, input);
}

/** Records the cancellation, re-quotes and sends the first Cancel by the rule; what a caller is answered comes back. */
export async function sendFirst(run: OrderRun, plan: CancelPlan): Promise<FirstSend> {
  const record: CancellationRecord = {
    requestedAt: new Date().toISOString(),
    reason: plan.reason,
    ...(plan.requestedBy ? { requestedBy: plan.requestedBy } : {}),
    origin: plan.origin,
    quote: run.quoteAt(await feeClock()),
    accepted: plan.accepted,
    cancelAttempts: [],
    polls: [],
  };
  run.state.cancellation = record;
  run.setStage('cancelling');

  const first = await send(run, plan, record, { mayHaveActed: false });
  const order = run.state.order!;
  // A first send cannot come back not-taken (only a re-send can): narrowed here for the compiler.
  if (first.kind === 'not-taken') throw new Error('unreachable: a first Cancel send is never not-taken');
  if (first.kind === 'stopped') {
    return {
      answer: { kind: 'cancel-refused', quote: first.quote, errorType: 'CancelStopped', reason: first.reason },
      ended: { kind: 'cancel-stopped', order, cancellation: record, feeNow: first.quote.fee, reason: first.reason },
    };
  }
  if (first.kind === 'refused') {
    return {
      answer: { kind: 'cancel-refused', quote: record.quote, errorType: first.errorType, reason: first.message },
      ended: { kind: 'cancel-refused', order, cancellation: record, errorType: first.errorType, reason: first.message },
    };
  }
  const now = Date.now();
  return {
    answer: {
      kind: 'cancel-requested',
      quote: record.quote,
      ambiguous: first.ambiguous,
      ...(record.serviceFee ? { serviceFee: record.serviceFee } : {}),
    },
    follow: {
      anchorMs: now,
      nextIndex: 0,
      deadlineMs: now + run.recovery.deadlineSeconds * 1000,
      ambiguous: first.ambiguous,
    },
  };
}

/** Polls until the order is Cancelled, CancelFailed (or Failed), or the deadline; continues-as-new when long. */
export async function follow(
  run: OrderRun,
  plan: CancelPlan,
  from: FollowState,
  input: OrderWorkflowArgs,
): Promise<OrderOutcome> {
  const { state, recovery } = run;
  const record = state.cancellation!;
  const place = { anchorMs: from.anchorMs, nextIndex: from.nextIndex, deadlineMs: from.deadlineMs };
  let { ambiguous } = from;
  record.deadlineAt = new Date(place.deadlineMs).toISOString();
  return followOrder<Awaited<ReturnType<OrderRun['read']>>, OrderOutcome>({
    place,
    schedule: recovery,
    hints: { of: run, log: record.polls },
    stop: () => run.interrupted,
    waitSummary: (nextIndex) => `Wait for cancellation poll ${nextIndex + 1}`,
    due(dueMs) {
      record.nextPollAt = new Date(dueMs).toISOString();
      setCurrentDetails(describeOrder(state));
    },
    handOver: {
      when: 'before-wait',
      to: () => continueWith(run, input, { cancel: { plan, follow: { ...place, ambiguous } } }),
    },
    read: (trigger) => run.read(place.anchorMs, trigger, record.polls),
    async decide(step) {
      const { poll, atDeadline } = step;
      if (poll.kind === 'found') {
        const ended = endingOf(run, record);
        if (ended) return ended;
      }
      if (run.interrupted) {
        return { kind: 'cancel-unresolved', order: state.order!, cancellation: record, interrupted: true };
      }
      if (atDeadline) return { kind: 'cancel-unresolved', order: state.order!, cancellation: record };
      const stillConfirmed = poll.kind === 'found' && run.orderState === 'confirmed';
      // The last send's ending was unclear and nothing changed long after: it most likely never arrived. When the read
      // was due on the schedule counts, never the clock: a workflow task delayed by a lost worker would otherwise make
      // a read from before the re-send point look like one from after it (a second Cancel over a first the supplier
      // had taken, as the chaos run found).
      if (ambiguous && stillConfirmed && maySendAgain(step, place, run.recovery, cancelsSent(record))) {
        const again = await send(run, plan, record, { mayHaveActed: true });
        if (again.kind === 'stopped') {
          return {
            kind: 'cancel-stopped',
            order: state.order!,
            cancellation: record,
            feeNow: again.quote.fee,
            reason: again.reason,
          };
        }
        if (again.kind === 'sent') {
          ambiguous = again.ambiguous;
          countFromSend(place, step.dueMs);
        }
      }
      return undefined;
    },
  });
}

/** The order's ending from its state as last read, or undefined while it is still confirmed or pending. */
export function endingOf(run: OrderRun, record: CancellationRecord): OrderOutcome | undefined {
  const order = run.state.order!;
  if (run.orderState === 'cancelled') return { kind: 'cancelled', order, cancellation: record };
  if (run.orderState === 'cancel-failed') return { kind: 'cancel-failed', order, cancellation: record };
  if (run.orderState === 'failed') {
    return {
      kind: 'changed-by-supplier',
      order,
      reason: `the order failed (status ${order.status}) while being cancelled`,
    };
  }
  return undefined;
}

/**
 * Continues as new with what the run follows. A request queued meanwhile (one that came while an automatic
 * cancellation read the order) would wait for the loop forever: it is refused, to be asked of the next run, so
 * every handler can finish. Automatic cancellations not taken yet join the one carried.
 */
export async function continueWith(
  run: OrderRun,
  input: OrderWorkflowArgs,
  work: Pick<OrderCarry, 'cancel' | 'wait'>,
): Promise<never> {
  refuseQueued(run, 'The order run continues as new while it follows a cancellation: ask again');
  await condition(allHandlersFinished);
  const autoAsked = run.autoAsked ?? run.autoCancels[0]?.origin;
  return continueAsNew<(input: OrderWorkflowArgs) => Promise<OrderOutcome>>({
    ...input,
    carry: {
      state: run.state,
      ...(autoAsked ? { autoAsked } : {}),
      ...(run.outcome ? { outcome: run.outcome } : {}),
      ...work,
    },
  });
}

/** The Cancel sends that may have acted: taken, or ended unclear. */
function cancelsSent(record: CancellationRecord): number {
  return record.cancelAttempts.filter((a) => a.result === 'accepted' || a.result === 'ambiguous').length;
}

type Sent =
  /** It may have acted: followed with QueryOrders. */
  | { kind: 'sent'; ambiguous: boolean }
  /** The supplier surely did nothing (first send only): the order stands. */
  | { kind: 'refused'; errorType: string; message: string }
  /** A re-send that never reached the supplier: the follow-up goes on. */
  | { kind: 'not-taken' }
  /** Not sent: the fee is above what was accepted, or an operator stopped the run first. */
  | { kind: 'stopped'; quote: CancelFeeQuote; reason: string };

/** One send by the rule above, re-quoted first; the first send retries refusals in place. */
async function send(
  run: OrderRun,
  plan: CancelPlan,
  record: CancellationRecord,
  { mayHaveActed }: { mayHaveActed: boolean },
): Promise<Sent> {
  // The refusal window is counted in the pauses asked for (recorded as timers), never read from the clock.
  let pausedMs = 0;
  let pauseMs = 1000;
  for (;;) {
    const quotedAtMs = await feeClock();
    const quote = run.quoteAt(quotedAtMs);
    const at = new Date(quotedAtMs).toISOString();
    if (run.interrupted) {
      record.cancelAttempts.push({ at, result: 'not-sent', error: 'Interrupted', quote });
      return { kind: 'stopped', quote, reason: 'the order run was cancelled by an operator before Cancel was sent' };
    }
    const above = aboveAccepted(run, plan.accepted, quote, quotedAtMs);
    if (above) {
      record.cancelAttempts.push({ at, result: 'not-sent', error: above.error, quote });
      return { kind: 'stopped', quote, reason: above.reason };
    }
    const answer = await sendOnce(run, record, quote, at);
    if (answer.kind === 'accepted') return { kind: 'sent', ambiguous: false };
    if (answer.kind === 'ambiguous') return { kind: 'sent', ambiguous: true };
    if (answer.kind === 'rejected') {
      if (!mayHaveActed && (await earlierSendsSettled(run, record))) {
        return { kind: 'refused', errorType: answer.errorType, message: answer.message };
      }
      // After a send that may have acted, "cannot be cancelled" may well mean "already being cancelled": this send
      // did nothing, and another would be refused the same way. Only QueryOrders goes on, to the deadline, where a
      // person is told; Cancel is not sent again.
      return { kind: 'sent', ambiguous: false };
    }
    // Refused before any work: nothing was done by this send.
    if (mayHaveActed) return { kind: 'not-taken' };
    if (pausedMs >= REFUSALS_FOR_MS) {
      return { kind: 'refused', errorType: answer.errorType, message: `${answer.message} (refused for 10 minutes)` };
    }
    // The supplier's hint (already cut to the profile's ceiling), never past the window refusals are retried in.
    const pause = Math.max(Math.min(answer.retryAfterMs ?? pauseMs, REFUSALS_FOR_MS - pausedMs), 1);
    // A caller waits on this send's answer: held for a short pause at most, then told at once, never kept for minutes
    // (the free window may close meanwhile, unseen by them). Nothing was sent; the order stands; they ask again.
    if (plan.origin === 'caller' && pausedMs + pause > CALLER_HOLD_MS) {
      const after = new Date(Date.now() + pause).toISOString();
      return {
        kind: 'refused',
        errorType: answer.errorType,
        message:
          `${answer.message}: the supplier refused the Cancel before any work and asks to wait ` +
          `${Math.ceil(pause / 1000)} s; nothing was sent and the order stands: ask again after ${after}`,
      };
    }
    pausedMs += pause;
    await condition(() => run.interrupted, pause);
    pauseMs = Math.min(pauseMs * 2, 30_000);
  }
}

/**
 * Why a send now would be above what was accepted: the fee that applies now, or the one after a change of fee within
 * the run's margin (the send may land after the change); undefined when it is within.
 */
function aboveAccepted(
  run: OrderRun,
  accepted: AcceptedFee,
  quote: CancelFeeQuote,
  quotedAtMs: number,
): { error: string; reason: string } | undefined {
  const acceptedText = accepted.kind === 'fee' ? fee(accepted.fee) : 'fee';
  if (!feeWithin(accepted, quote)) {
    const reason =
      accepted.kind === 'free'
        ? `cancellation is no longer free (fee now ${fee(quote.fee)})`
        : `the fee now is ${fee(quote.fee)}, above the accepted ${acceptedText}`;
    return { error: 'FeeAboveAccepted', reason };
  }
  const soon = run.feeSoon(quote, quotedAtMs);
  if (soon && !feeWithin(accepted, soon)) {
    const what = accepted.kind === 'free' ? 'only while free' : `up to ${acceptedText}`;
    const reason =
      `the fee changes to ${fee(soon.fee)} at ${quote.changesAt}, within ${run.recovery.feeChangeMarginSeconds} s, ` +
      `and the cancellation was accepted ${what}: a Cancel sent now may land after the change`;
    return { error: 'FeeChangesSoon', reason };
  }
  return undefined;
}

/**
 * Whether a first send's refusal can be believed: only when no earlier run of this order sent a Cancel that may have
 * acted and never saw it settle ("cannot be cancelled" may then mean "already being cancelled"), as far as every
 * earlier run could be read. Recorded either way.
 */
async function earlierSendsSettled(run: OrderRun, record: CancellationRecord): Promise<boolean> {
  let earlier: NonNullable<CancellationRecord['earlierSends']>;
  try {
    earlier = await earlierCancelSends({
      customerReferenceNo: run.state.customerReferenceNo,
      runId: workflowInfo().runId,
    });
  } catch {
    earlier = 'unknown';
  }
  // `unknown` (runs that could not all be read) is recorded and never taken for "nothing sent": the refusal is then
  // followed with QueryOrders like a send that may have acted, and a person is told if the order never settles.
  record.earlierSends = earlier;
  return earlier === 'none';
}

async function sendOnce(
  run: OrderRun,
  record: CancellationRecord,
  quote: CancelFeeQuote,
  at: string,
): Promise<CancelSendOutcome> {
  let answer: CancelSendOutcome;
  try {
    answer = await cancelActivity(run.state.supplier)({
      customerReferenceNo: run.state.customerReferenceNo,
      supplierReferenceNo: run.state.order?.supplierReferenceNo ?? '',
      reason: record.reason,
      context: run.context,
    });
  } catch (err) {
    answer = neverStarted(err)
      ? // No worker started it: nothing was sent. Refused before any work, so the send is re-quoted and tried again.
        { kind: 'refused', errorType: 'CancelNotStarted', message: 'Cancel was not started in time (a backlog)' }
      : // The activity itself failed (a timeout, a lost worker): the Cancel may have gone out.
        { kind: 'ambiguous', errorType: failureType(err), message: 'Cancel activity failed' };
  }
  record.cancelAttempts.push({
    at,
    result: answer.kind,
    quote,
    ...(answer.kind !== 'accepted' ? { error: answer.errorType } : {}),
  });
  if (answer.kind === 'accepted' && answer.serviceFee) record.serviceFee = answer.serviceFee;
  return answer;
}

/** Answers every queued request with a refusal; none of them was worked on. */
function refuseQueued(run: OrderRun, message: string): void {
  for (let queued = run.requests.shift(); queued; queued = run.requests.shift()) {
    queued.refusal = { type: 'OrderRunContinuing', message };
  }
}
