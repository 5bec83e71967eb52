/**
 * Following an order with QueryOrders on the recovery schedule: the one loop behind a booking's recovery after an
 * unclear Book, a cancellation's follow-up after its Cancel, and an automatic cancellation's wait for an order it can
 * cancel. What they share lives here once: when the next read is due (the schedule, from an anchor, capped at the
 * deadline), the wait for it as a timer, a supplier hint that brings a read forward (at most one a minute), an
 * operator's stop that ends a wait at once, the read itself, and the hand-over to a new run when the history is long.
 * What differs (what a read decides, what is sent again, what a run carries over) is each caller's, passed in as steps.
 * Workflow code only.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities, QueryOrderOutcome } from '../activities/types';
import type { PollRecord, RecoveryPolicy } from '../api/contract/index';
import { HINT_POLL_SPACING_SECONDS } from '../api/contract/definitions';
import { pollOffsetSeconds, waitFor } from '../runtime/rules/schedule';
import { failureType } from './failure';

/** The poll log a run keeps: the latest this many reads (a run continues as new long before it holds more). */
const MAX_POLLS_KEPT = 200;

/** Where a follow-up stands on its schedule; moved by the loop and by a re-send, and carried over continue-as-new. */
export interface FollowPlace {
  /** When the schedule counts from: the send being verified. */
  anchorMs: number;
  /** The next read's place on the schedule (0: at once). */
  nextIndex: number;
  deadlineMs: number;
}

/** The supplier hints a run has received and the count it has already acted on (`hints > hintsSeen`: a new one). */
export interface HintCount {
  hints: number;
  hintsSeen: number;
}

export type ReadTrigger = 'schedule' | 'supplier-hint';

/** One read, as its decision sees it. */
export interface FollowStep<P> {
  poll: P;
  /** Read before its time (a hint, or a stop): the schedule did not move, and no deadline was reached by it. */
  early: boolean;
  /**
   * When the read was due on the schedule (capped at the deadline). A decision counts time by it, never by the clock:
   * a task that runs late (held on a lost worker's queue), or on a server clock ahead or behind, decides the same in
   * its first run and in every replay. For an early read, the read it came before.
   */
  dueMs: number;
  /** This was the last read the deadline allows. */
  atDeadline: boolean;
}

export interface FollowSteps<P, R> {
  place: FollowPlace;
  schedule: Pick<RecoveryPolicy, 'delaysSeconds' | 'repeatEverySeconds' | 'continueAsNewAfterEvents'>;
  /** Told where the next read is due, before any wait: what the run shows (its stage, the Web UI's details). */
  due(dueMs: number): void;
  /** Hints that bring a read forward, spaced by the log of reads; absent, the follow-up waits for its schedule only. */
  hints?: { of: HintCount; log: readonly { at: string; trigger: string }[] };
  /** An operator's cancellation of the run: ends a wait at once, and the next read decides how the run ends. */
  stop?: () => boolean;
  /** What the Web UI shows for a wait's timer. */
  waitSummary?: (nextIndex: number) => string;
  /** Hands the follow-up over to a new run when the history is long: checked before each wait, or after each read. */
  handOver: { when: 'before-wait' | 'after-read'; to: () => Promise<never> };
  read(trigger: ReadTrigger): Promise<P>;
  /** What a read decides: an ending, or undefined to go on (a re-send moves `place` back to the start). */
  decide(step: FollowStep<P>): Promise<R | undefined> | R | undefined;
}

export async function followOrder<P, R>(f: FollowSteps<P, R>): Promise<R> {
  const { place, hints } = f;
  const stop = f.stop ?? (() => false);
  for (;;) {
    if (f.handOver.when === 'before-wait' && historyIsLong(f.schedule)) return f.handOver.to();
    const dueMs = Math.min(place.anchorMs + pollOffsetSeconds(place.nextIndex, f.schedule) * 1000, place.deadlineMs);
    f.due(dueMs);

    // Whether to wait is the schedule's to say (the first read goes at once), never the clock's; only how long is.
    const seenBefore = hints?.of.hintsSeen ?? 0;
    const woken = dueMs > place.anchorMs ? await waitForRead(f, dueMs) : false;
    const early = woken && (stop() || (hints ? await spacedHint(hints.log, dueMs, stop) : false));
    const hinted = early && hints !== undefined && hints.of.hints > seenBefore;
    if (hints) hints.of.hintsSeen = hints.of.hints;
    if (!early) place.nextIndex++;

    const poll = await f.read(hinted ? 'supplier-hint' : 'schedule');
    const ended = await f.decide({ poll, early, dueMs, atDeadline: !early && dueMs >= place.deadlineMs });
    if (ended !== undefined) return ended;
    if (f.handOver.when === 'after-read' && historyIsLong(f.schedule)) return f.handOver.to();
  }
}

/** Waits for the read due at `dueMs`, a new hint or a stop; whether it woke before its time. */
function waitForRead<P, R>(f: FollowSteps<P, R>, dueMs: number): Promise<boolean> {
  const { hints, stop } = f;
  const woken = () => (hints ? hints.of.hints > hints.of.hintsSeen : false) || (stop?.() ?? false);
  const summary = f.waitSummary?.(f.place.nextIndex);
  return summary ? condition(woken, waitFor(dueMs), { summary }) : condition(woken, waitFor(dueMs));
}

/**
 * Whether a read may send again what it follows (Book, or Cancel): a scheduled read, at least `rebookAfterSeconds` on
 * the schedule after the send being verified, while fewer than `maxBookAttempts` sends may have acted. One rule for
 * the booking's re-sent Book and the order's re-sent Cancel. What else must hold (no order seen; the order still
 * confirmed) is the caller's.
 */
export function maySendAgain(
  step: Pick<FollowStep<unknown>, 'early' | 'dueMs'>,
  place: Pick<FollowPlace, 'anchorMs'>,
  schedule: Pick<RecoveryPolicy, 'rebookAfterSeconds' | 'maxBookAttempts'>,
  sendsThatMayHaveActed: number,
): boolean {
  return (
    !step.early &&
    step.dueMs - place.anchorMs >= schedule.rebookAfterSeconds * 1000 &&
    sendsThatMayHaveActed < schedule.maxBookAttempts
  );
}

/**
 * The schedule counts again from a send made after the read due at `dueMs`. From that read's place on the schedule,
 * not from the clock when the send ended: the next reads come at once and then on the schedule, counted the same in
 * every replay (a slow send only makes the first waits after it shorter).
 */
export function countFromSend(place: FollowPlace, dueMs: number): void {
  place.anchorMs = dueMs;
  place.nextIndex = 0;
}

/** The history is long enough to continue as new (the server's suggestion, or the policy's event count). */
export function historyIsLong(schedule: Pick<RecoveryPolicy, 'continueAsNewAfterEvents'>): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= schedule.continueAsNewAfterEvents;
}

/**
 * Hint-triggered reads, at most one a minute per workflow (HINT_POLL_SPACING_SECONDS): a flood of callbacks, a
 * replayed one or a supplier retrying then costs one QueryOrders a minute, not one each; the scheduled reads are
 * untouched. Called when a hint woke a wait for the read due at `dueMs`: whether the read made now is the hint's
 * (true) or the scheduled one (false). After an earlier hint-triggered read (from the run's own log, so the spacing
 * holds across worker restarts and continue-as-new), it first waits until a minute after it has passed (a timer of a
 * millisecond when it has), or until the scheduled read, whichever comes first; hints meanwhile add nothing. `stop`
 * ends the wait early, and counts as the hint's read.
 */
async function spacedHint(
  log: readonly { at: string; trigger: string }[],
  dueMs: number,
  stop: () => boolean,
): Promise<boolean> {
  const last = [...log].reverse().find((p) => p.trigger === 'supplier-hint');
  if (!last) return true;
  const openAtMs = Date.parse(last.at) + HINT_POLL_SPACING_SECONDS * 1000;
  const untilMs = Math.min(openAtMs, dueMs);
  // Always a timer once a hint was read before, at least a millisecond long: whether it is started must not depend on
  // the clock (a replay may see the task's time moved), only how long it runs. Whose read follows is decided from
  // recorded times alone (the last hint read's, and the schedule's).
  const stopped = await condition(stop, waitFor(untilMs), {
    summary: 'Supplier hint: polled on a hint less than a minute ago; waiting',
  });
  return stopped || untilMs < dueMs;
}

/**
 * One QueryOrders of an order, recorded as a poll in `polls` (when given): its time from the schedule's anchor, what
 * triggered it, what it found. A failure (after the activity's own retries) is recorded too, and never decisive: the
 * order is still unknown, not gone. The one read of the booking's recovery and of the order's runs.
 */
export async function readRecorded(
  queryOrder: BookingActivities['queryOrder'],
  ids: { customerReferenceNo: string; traceId: string },
  anchorMs: number,
  trigger: PollRecord['trigger'],
  polls: PollRecord[] | undefined,
): Promise<QueryOrderOutcome | { kind: 'error'; error: string }> {
  const at = new Date();
  const record: PollRecord = {
    at: at.toISOString(),
    sinceBookSeconds: Math.round((at.getTime() - anchorMs) / 1000),
    trigger,
    result: 'error',
  };
  try {
    const result = await queryOrder(ids);
    record.result = result.kind;
    if (result.kind === 'found') record.status = result.order.status;
    return result;
  } catch (err) {
    record.error = failureType(err);
    return { kind: 'error', error: record.error };
  } finally {
    if (polls) {
      polls.push(record);
      if (polls.length > MAX_POLLS_KEPT) polls.splice(0, polls.length - MAX_POLLS_KEPT);
    }
  }
}
