/**
 * Step 3, not cancellable: when Book's outcome is unknown, QueryOrders on the spec's schedule (poll k is
 * `pollOffsetSeconds(k)` after the Book it verifies; a supplier hint brings a poll forward), Book sent
 * again (same reference, so never a second order) only when the order is still not found long after the
 * Book, and `unresolved` at the deadline. Long recoveries continue-as-new, carrying their state.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  makeContinueAsNewFunc,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { QueryOrderOutcome } from '../../activities/types';
import type { BookingOutcome, PollRecord } from '../../api/contract/index';
import { countFromSend, followOrder, maySendAgain, readRecorded } from '../follow';
import { decideOnOrder, sendBook } from './book';
import { withoutResume, type BookingWorkflowInput, type RecoverySchedule } from './input';
import { countRecoveryPoll } from '../counters';
import { whose } from '../whose';
import { describe, type BookingRun } from './run';

/** Polls kept in state (and carried over continue-as-new); older ones are dropped. */

export async function recover(
  run: BookingRun,
  from: RecoverySchedule,
  input: BookingWorkflowInput,
): Promise<BookingOutcome> {
  const { state, recovery } = run;
  const place = { anchorMs: from.anchorMs, nextIndex: from.nextIndex, deadlineMs: from.deadlineMs };
  state.deadlineAt = new Date(place.deadlineMs).toISOString();
  run.hintsSeen = run.hints;
  run.setStage('recovering');

  return followOrder<QueryOrderOutcome | { kind: 'error' }, BookingOutcome>({
    place,
    schedule: recovery,
    hints: { of: run, log: state.polls },
    waitSummary: (nextIndex) => `Wait for QueryOrders poll ${nextIndex + 1}`,
    due(dueMs) {
      state.nextPollAt = new Date(dueMs).toISOString();
      setCurrentDetails(describe(state));
    },
    handOver: {
      when: 'before-wait',
      async to() {
        await condition(allHandlersFinished);
        const next = { ...withoutResume(input), resume: { state, ...place, request: run.request, recovery } };
        type Next = (input: BookingWorkflowInput) => Promise<BookingOutcome>;
        if (!state.supplier) return continueAsNew<Next>(next);
        // The account goes on in the next run's memo, where an order run reads it: a new run takes only the memo its
        // start carried (the SDK copies the start's, not what upsertMemo wrote), so it would start without it.
        return makeContinueAsNewFunc<Next>({ memo: { ...workflowInfo().memo, supplier: state.supplier } })(next);
      },
    },
    read: (trigger) => pollOnce(run, place.anchorMs, trigger),
    async decide(step) {
      const { poll, atDeadline } = step;
      if (poll.kind === 'found') {
        const decided = decideOnOrder(run, poll.order);
        if (decided) return decided;
      }
      if (atDeadline) return run.unresolved();
      if (poll.kind === 'not-found' && mayBookAgain(run) && maySendAgain(step, place, recovery, booksSent(run))) {
        const decided = await bookAgain(run);
        if (decided) return decided;
        run.setStage('recovering');
        countFromSend(place, step.dueMs);
      }
      return undefined;
    },
  });
}

/**
 * Still no order long after the last Book (maySendAgain, the one rule for re-sends): that request most likely never
 * arrived, so Book is sent again with the same reference (the supplier returns any existing order instead of making a
 * second one). Never once any order was seen, by a poll or in a Book's answer: the supplier holds it (an eventually
 * consistent listing can drop it for a while), and only QueryOrders can tell its fate.
 */
function mayBookAgain(run: BookingRun): boolean {
  return run.state.order === undefined;
}

/** Sends refused before any work do not count towards `maxBookAttempts`; every other send may have acted. */
function booksSent(run: BookingRun): number {
  return run.state.bookAttempts.filter((a) => a.result !== 'refused').length;
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
      ...whose(run.state.supplier),
    });
  }
  return undefined;
}

/** One QueryOrders, recorded in the booking's poll log (follow.ts) and counted. */
async function pollOnce(
  run: BookingRun,
  anchorMs: number,
  trigger: PollRecord['trigger'],
): Promise<QueryOrderOutcome | { kind: 'error' }> {
  const ids = { customerReferenceNo: run.request.customerReferenceNo, traceId: run.traceId };
  const result = await readRecorded(run.queryOrder, ids, anchorMs, trigger, run.state.polls);
  countRecoveryPoll(result.kind === 'found' ? result.order.state : result.kind, run.state.supplier);
  return result;
}
