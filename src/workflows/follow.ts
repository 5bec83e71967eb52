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
import type { RecoveryPolicy } from '../contract';
import { HINT_POLL_SPACING_SECONDS } from '../contract/definitions';
import { pollOffsetSeconds, waitFor } from '../rules/schedule';

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
  /** The read's place in time, taken before its answer is acted on (a delayed task must not make it look later). */
  readAtMs: number;
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

    const readAtMs = Date.now();
    const poll = await f.read(hinted ? 'supplier-hint' : 'schedule');
    const ended = await f.decide({ poll, early, readAtMs, atDeadline: !early && dueMs >= place.deadlineMs });
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

/** The history is long enough to continue as new (the server's suggestion, or the policy's event count). */
export function historyIsLong(schedule: Pick<RecoveryPolicy, 'continueAsNewAfterEvents'>): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= schedule.continueAsNewAfterEvents;
}

/**
 * Hint-triggered reads, at most one a minute per workflow (HINT_POLL_SPACING_SECONDS): a flood of callbacks, a
 * replayed one or a supplier retrying then costs one QueryOrders a minute, not one each; the scheduled reads are
 * untouched. Called when a hint woke a wait for the read due at `dueMs`: whether the read made now is the hint's
 * (true) or the scheduled one (false). Too soon after the last hint-triggered read (from the run's own log, so the
 * spacing holds across worker restarts and continue-as-new), it first waits until the minute has passed, or until
 * the scheduled read, whichever comes first; hints meanwhile add nothing. `stop` ends the wait early, and counts as
 * the hint's read.
 */
async function spacedHint(
  log: readonly { at: string; trigger: string }[],
  dueMs: number,
  stop: () => boolean,
): Promise<boolean> {
  const last = [...log].reverse().find((p) => p.trigger === 'supplier-hint');
  if (!last) return true;
  const openAtMs = Date.parse(last.at) + HINT_POLL_SPACING_SECONDS * 1000;
  if (Date.now() >= openAtMs) return true;
  const untilMs = Math.min(openAtMs, dueMs);
  const stopped = await condition(stop, untilMs - Date.now(), {
    summary: 'Supplier hint: polled on a hint less than a minute ago; waiting',
  });
  return stopped || untilMs < dueMs;
}
