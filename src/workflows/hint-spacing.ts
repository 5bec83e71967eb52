/**
 * Hint-triggered polls, at most one a minute per workflow (HINT_POLL_SPACING_SECONDS). A flood of callbacks, a
 * replayed one or a supplier retrying, then costs one QueryOrders a minute, not one each; the scheduled polls are
 * untouched. The last hint-triggered poll is read from the workflow's own poll log, so the spacing holds across
 * worker restarts and continue-as-new. Workflow code only.
 */
import { condition } from '@temporalio/workflow';
import { HINT_POLL_SPACING_SECONDS } from '../contract/definitions';

interface LoggedPoll {
  at: string;
  trigger: string;
}

/**
 * Called when a hint woke a wait for the poll due at `dueMs`: whether the poll made now is the hint's (true) or the
 * scheduled one (false). Too soon after the last hint-triggered poll, it first waits until the minute has passed,
 * or until the scheduled poll, whichever comes first; hints meanwhile add nothing. `stop` ends the wait early (an
 * operator's cancellation of an order run), and counts as the hint's poll.
 */
export async function spacedHint(
  polls: readonly LoggedPoll[],
  dueMs: number,
  stop: () => boolean = () => false,
): Promise<boolean> {
  const last = [...polls].reverse().find((p) => p.trigger === 'supplier-hint');
  if (!last) return true;
  const openAtMs = Date.parse(last.at) + HINT_POLL_SPACING_SECONDS * 1000;
  if (Date.now() >= openAtMs) return true;
  const untilMs = Math.min(openAtMs, dueMs);
  const stopped = await condition(stop, untilMs - Date.now(), {
    summary: 'Supplier hint: polled on a hint less than a minute ago; waiting',
  });
  return stopped || untilMs < dueMs;
}
