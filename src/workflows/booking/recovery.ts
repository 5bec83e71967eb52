/**
 * Step 3, not cancellable: when Book's outcome is unknown, QueryOrders on the spec's schedule (poll k is
 * `pollOffsetSeconds(k)` after the Book it verifies; a supplier hint brings a poll forward), Book sent
 * again (same reference, so never a second order) only when the order is still not found long after the
 * Book, and `unresolved` at the deadline. Long recoveries continue-as-new, carrying their state.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { QueryOrderOutcome } from '../../activities/booking';
import type { BookingOutcome, PollRecord } from '../../contract';
import { spacedHint } from '../hint-spacing';
import { pollOffsetSeconds, waitFor } from '../schedule';
import { decideOnOrder, sendBook } from './book';
import { withoutResume, type BookingWorkflowInput, type RecoverySchedule } from './input';
import { countRecoveryPoll } from '../counters';
import { describe, setStage, unresolvedOutcome, type BookingRun } from './run';
import type { bookingWorkflow } from './index';

/** Polls kept in state (and carried over continue-as-new); older ones are dropped. */
const MAX_POLLS_KEPT = 200;

export async function recover(
  run: BookingRun,
  from: RecoverySchedule,
  input: BookingWorkflowInput,
): Promise<BookingOutcome> {
  const { state, recovery } = run;
  let { anchorMs, nextIndex } = from;
  const { deadlineMs } = from;
  state.deadlineAt = new Date(deadlineMs).toISOString();
  let hintsSeen = run.hints;
  setStage(run, 'recovering');

  for (;;) {
    if (shouldContinueAsNew(run)) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof bookingWorkflow>({
        ...withoutResume(input),
        resume: { state, anchorMs, nextIndex, deadlineMs, request: run.request, recovery },
      });
    }
    const dueMs = Math.min(anchorMs + pollOffsetSeconds(nextIndex, recovery) * 1000, deadlineMs);
    state.nextPollAt = new Date(dueMs).toISOString();
    setCurrentDetails(describe(state));

    // Whether to wait is the schedule's to say (the first poll goes at once), never the clock's; only how long is.
    const woken =
      dueMs > anchorMs
        ? await condition(() => run.hints > hintsSeen, waitFor(dueMs), {
            summary: `Wait for QueryOrders poll ${nextIndex + 1}`,
          })
        : false;
    const hinted = woken && (await spacedHint(state.polls, dueMs));
    hintsSeen = run.hints;
    if (!hinted) nextIndex++;

    // When the order was looked up, not when the answer is acted on: a workflow task delayed by a lost worker must
    // not make a lookup from before the re-send point count as one from after it.
    const polledAtMs = Date.now();
    const poll = await pollOnce(run, anchorMs, hinted ? 'supplier-hint' : 'schedule');
    if (poll.kind === 'found') {
      const decided = decideOnOrder(run, poll.order);
      if (decided) return decided;
    }
    if (!hinted && dueMs >= deadlineMs) return unresolvedOutcome(run);
    if (!hinted && poll.kind === 'not-found' && mayBookAgain(run, polledAtMs - anchorMs)) {
      const decided = await bookAgain(run);
      if (decided) return decided;
      setStage(run, 'recovering');
      anchorMs = Date.now();
      nextIndex = 0;
    }
  }
}

/**
 * Still no order long after the last Book: that request most likely never arrived, so Book is sent again
 * with the same reference (the supplier returns any existing order instead of making a second one). Sends
 * refused before any work do not count towards `maxBookAttempts`; every other send may have reached the
 * supplier and does. Never once any order was seen, by a poll or in a Book's answer: the supplier holds it (an
 * eventually consistent listing can drop it for a while), and only QueryOrders can tell its fate.
 */
function mayBookAgain(run: BookingRun, sinceBookMs: number): boolean {
  const { recovery, state } = run;
  if (sinceBookMs < recovery.rebookAfterSeconds * 1000) return false;
  const sent = state.bookAttempts.filter((a) => a.result !== 'refused').length;
  if (sent >= recovery.maxBookAttempts) return false;
  return state.order === undefined;
}

/**
 * A re-sent Book, and what its answer decides: only an order does. Refused (429, connection refused) or
 * rejected (400, ...) shows that this send made nothing, not that the first one made nothing: Book takes
 * minutes and QueryOrders may list an order late. So recovery polls on from this send, to the deadline
 * (`unresolved`, a person told) unless QueryOrders settles it.
 */
async function bookAgain(run: BookingRun): Promise<BookingOutcome | undefined> {
  const outcome = await sendBook(run, { retryRefused: false });
  if (outcome.kind === 'order') return decideOnOrder(run, outcome.order);
  if (outcome.kind !== 'ambiguous') {
    log.warn('Re-sent Book made nothing; the first Book may still have: polling QueryOrders on', {
      customerReferenceNo: run.state.customerReferenceNo,
      result: outcome.kind,
      errorType: outcome.errorType,
    });
  }
  return undefined;
}

async function pollOnce(
  run: BookingRun,
  anchorMs: number,
  trigger: PollRecord['trigger'],
): Promise<QueryOrderOutcome | { kind: 'error' }> {
  const at = new Date();
  const record: PollRecord = {
    at: at.toISOString(),
    sinceBookSeconds: Math.round((at.getTime() - anchorMs) / 1000),
    trigger,
    result: 'error',
  };
  try {
    const result = await run.queryOrder({ customerReferenceNo: run.request.customerReferenceNo, traceId: run.traceId });
    record.result = result.kind;
    if (result.kind === 'found') record.status = result.order.status;
    pushPoll(run, record);
    countRecoveryPoll(result.kind === 'found' ? result.order.state : result.kind);
    return result;
  } catch (err) {
    // QueryOrders kept failing for its whole retry window: the booking is still unknown, not failed.
    record.error =
      err instanceof ActivityFailure && err.cause instanceof ApplicationFailure
        ? (err.cause.type ?? err.cause.message)
        : String(err);
    pushPoll(run, record);
    countRecoveryPoll('error');
    return { kind: 'error' };
  }
}

function pushPoll(run: BookingRun, record: PollRecord): void {
  const { polls } = run.state;
  polls.push(record);
  if (polls.length > MAX_POLLS_KEPT) polls.splice(0, polls.length - MAX_POLLS_KEPT);
}

function shouldContinueAsNew(run: BookingRun): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= run.recovery.continueAsNewAfterEvents;
}
