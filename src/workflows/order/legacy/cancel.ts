/**
 * Cancelling an order: Cancel sent once (Temporal retries what may be passing), then the order followed
 * with QueryOrders on the booking's recovery schedule (poll at once, 30 s, 1, 2, 4, 8 min, then every
 * 10 min; a supplier hint brings a poll forward) until it is Cancelled or CancelFailed, or the deadline.
 * Cancel is sent again only when its first ending was unclear and the order still shows Confirmed long
 * after (the same rule and numbers as a re-sent Book), at most `maxBookAttempts` times in all.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { OrderView, QueryOrderOutcome } from '../../../activities/booking';
import type { CancellationRecord, OrderOutcome, OrderSummary, PollRecord } from '../../../contract';
import { pollOffsetSeconds } from '../../schedule';
import { cancelOrder } from './activities';
import { describeOrder, setOrderStage, type OrderRun, type PendingCancel } from './run';
import type { OrderWorkflowArgs, legacyOrderWorkflow } from './index';

const MAX_POLLS_KEPT = 200;

/** Where a cancellation's follow-up stands; carried over continue-as-new. */
export interface FollowState {
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
  /** Whether the last Cancel's ending was unclear (then it may be sent again). */
  ambiguous: boolean;
}

/** Sends Cancel for `pending`; the final outcome, or undefined when the supplier refused (the order stays open). */
export async function cancel(
  run: OrderRun,
  pending: PendingCancel,
  input: OrderWorkflowArgs,
): Promise<OrderOutcome | undefined> {
  const { state } = run;
  const record: CancellationRecord = {
    requestedAt: new Date().toISOString(),
    reason: pending.reason,
    ...(pending.requestedBy ? { requestedBy: pending.requestedBy } : {}),
    origin: pending.origin,
    quote: pending.quote,
    cancelAttempts: [],
    polls: [],
  };
  state.cancellation = record;
  setOrderStage(run, 'cancelling');
  const sent = await sendCancel(run);
  if (sent.kind === 'refused') {
    pending.answer = { kind: 'cancel-refused', quote: pending.quote, errorType: sent.errorType, reason: sent.message };
    run.pending = undefined;
    setOrderStage(run, 'confirmed');
    return undefined;
  }
  pending.answer = {
    kind: 'cancel-requested',
    quote: pending.quote,
    ambiguous: sent.kind === 'ambiguous',
    ...(sent.kind === 'accepted' && sent.serviceFee ? { serviceFee: sent.serviceFee } : {}),
  };
  if (sent.kind === 'accepted' && sent.serviceFee) record.serviceFee = sent.serviceFee;
  const now = Date.now();
  return follow(
    run,
    {
      anchorMs: now,
      nextIndex: 0,
      deadlineMs: now + run.recovery.deadlineSeconds * 1000,
      ambiguous: sent.kind === 'ambiguous',
    },
    input,
  );
}

/** Polls until the order is Cancelled, CancelFailed (or Failed), or the deadline; continues-as-new when long. */
export async function follow(run: OrderRun, from: FollowState, input: OrderWorkflowArgs): Promise<OrderOutcome> {
  const { state, recovery } = run;
  const record = state.cancellation!;
  let { anchorMs, nextIndex, ambiguous } = from;
  const { deadlineMs } = from;
  record.deadlineAt = new Date(deadlineMs).toISOString();
  let hintsSeen = run.hints;
  for (;;) {
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= recovery.continueAsNewAfterEvents) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof legacyOrderWorkflow>({
        ...input,
        resume: { state, follow: { anchorMs, nextIndex, deadlineMs, ambiguous } },
      });
    }
    const dueMs = Math.min(anchorMs + pollOffsetSeconds(nextIndex, recovery) * 1000, deadlineMs);
    record.nextPollAt = new Date(dueMs).toISOString();
    setCurrentDetails(describeOrder(state));
    const waitMs = dueMs - Date.now();
    const hinted =
      waitMs > 0
        ? await condition(() => run.hints > hintsSeen, waitMs, {
            summary: `Wait for cancellation poll ${nextIndex + 1}`,
          })
        : false;
    hintsSeen = run.hints;
    if (!hinted) nextIndex++;

    const poll = await pollOrder(run, anchorMs, hinted ? 'supplier-hint' : 'schedule', record.polls);
    if (poll.kind === 'found') {
      const ended = endingOf(run, poll.order);
      if (ended) return ended;
    }
    if (!hinted && dueMs >= deadlineMs) {
      return { kind: 'cancel-unresolved', order: state.order, cancellation: record };
    }
    const stillConfirmed = poll.kind === 'found' && poll.order.state === 'confirmed';
    if (!hinted && ambiguous && stillConfirmed && mayCancelAgain(run, Date.now() - anchorMs)) {
      // The first Cancel's ending was unclear and nothing changed long after: it most likely never arrived.
      const sent = await sendCancel(run);
      if (sent.kind === 'accepted' && sent.serviceFee) record.serviceFee = sent.serviceFee;
      ambiguous = sent.kind === 'ambiguous';
      anchorMs = Date.now();
      nextIndex = 0;
    }
  }
}

/** The order's final outcome from a verified status, or undefined while it is still confirmed or pending. */
export function endingOf(run: OrderRun, order: OrderView): OrderOutcome | undefined {
  const { state } = run;
  state.order = summaryOf(order, state.order);
  const cancellation = state.cancellation;
  if (order.state === 'cancelled')
    return { kind: 'cancelled', order: state.order, ...(cancellation ? { cancellation } : {}) };
  if (order.state === 'cancel-failed' && cancellation)
    return { kind: 'cancel-failed', order: state.order, cancellation };
  if (order.state === 'failed') return { kind: 'failed', order: state.order };
  return undefined;
}

function mayCancelAgain(run: OrderRun, sinceMs: number): boolean {
  const attempts = run.state.cancellation?.cancelAttempts.filter((a) => a.result !== 'refused').length ?? 0;
  return sinceMs >= run.recovery.rebookAfterSeconds * 1000 && attempts < run.recovery.maxBookAttempts;
}

type Sent =
  | { kind: 'accepted'; serviceFee?: OrderSummary['price'] }
  | { kind: 'refused'; errorType: string; message: string }
  | { kind: 'ambiguous' };

async function sendCancel(run: OrderRun): Promise<Sent> {
  const { state } = run;
  const record = state.cancellation!;
  const at = new Date().toISOString();
  try {
    const answer = await cancelOrder({
      customerReferenceNo: state.customerReferenceNo,
      supplierReferenceNo: state.order.supplierReferenceNo ?? '',
      reason: record.reason,
      context: run.context,
    });
    record.cancelAttempts.push({
      at,
      result: answer.kind,
      ...(answer.kind === 'refused' ? { error: answer.errorType } : {}),
    });
    return answer.kind === 'accepted'
      ? { kind: 'accepted', ...(answer.serviceFee ? { serviceFee: answer.serviceFee } : {}) }
      : answer;
  } catch (err) {
    record.cancelAttempts.push({ at, result: 'ambiguous', error: failureType(err) });
    return { kind: 'ambiguous' };
  }
}

/** One verifying QueryOrders; an error (after the activity's own retries) is recorded, never decisive. */
export async function pollOrder(
  run: OrderRun,
  anchorMs: number,
  trigger: PollRecord['trigger'],
  polls?: PollRecord[],
): Promise<QueryOrderOutcome | { kind: 'error' }> {
  const at = new Date();
  const record: PollRecord = {
    at: at.toISOString(),
    sinceBookSeconds: Math.round((at.getTime() - anchorMs) / 1000),
    trigger,
    result: 'error',
  };
  try {
    const result = await run.queryOrder({ customerReferenceNo: run.state.customerReferenceNo, traceId: run.traceId });
    record.result = result.kind;
    if (result.kind === 'found') record.status = result.order.status;
    return result;
  } catch (err) {
    record.error = failureType(err);
    return { kind: 'error' };
  } finally {
    if (polls) {
      polls.push(record);
      if (polls.length > MAX_POLLS_KEPT) polls.splice(0, polls.length - MAX_POLLS_KEPT);
    }
  }
}

function failureType(err: unknown): string {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure
    ? (err.cause.type ?? err.cause.message)
    : String(err);
}

/** The new status and references over what we knew; the cancel policy is kept when a poll lacks it. */
function summaryOf(order: OrderView, before: OrderSummary): OrderSummary {
  const { state: _state, ...summary } = order;
  return { ...before, ...summary };
}
