/**
 * What the reconciliation sweep at the end of a run must report, and the comparison of what it did.
 */
import type { SandboxOrderView } from '../../dev/sandbox/server';
import { CANCEL_FAILED, CANCELLED, CONFIRMED, FAILED, type Observation } from './observation';

/**
 * What the reconciliation sweep should report for the run's supplier orders, from what the run itself saw
 * (an oracle apart from the sweep's own rule): an orphan is an order no booking stands for (its workflow
 * was terminated, failed or is unknown, or it ended saying nothing was booked); a mismatch is an order whose
 * status denies the outcome its booking returned (confirmed but not Confirmed, failed but still Confirming
 * or Confirmed, unresolved with any order). A booking still running is its own business.
 */
export function expectedSweepFindings(
  observations: Observation[],
  orders: Map<string, SandboxOrderView[]>,
): { orphans: string[]; mismatches: string[] } {
  const orphans: string[] = [];
  const mismatches: string[] = [];
  const known = new Set<string>();
  for (const { booking, ending, cancellation } of observations) {
    const ref = booking.request.customerReferenceNo;
    known.add(ref);
    const order = orders.get(ref)?.[0];
    if (!order) continue;
    if (ending.state === 'open') continue;
    if (ending.state !== 'completed') {
      orphans.push(ref);
      continue;
    }
    const s = order.status;
    switch (ending.outcome.kind) {
      case 'confirmed': {
        // A cancelled (or cancel-failed) order is as reported when the last order run ended so: our cancellation's.
        const lastRun = cancellation?.state === 'done' ? cancellation.outcome : undefined;
        const known =
          (s === CANCELLED && lastRun === 'cancelled') || (s === CANCEL_FAILED && lastRun === 'cancel-failed');
        if (s !== CONFIRMED && !known) mismatches.push(ref);
        break;
      }
      case 'failed':
        if (s !== FAILED && s !== CANCELLED && s !== CANCEL_FAILED) mismatches.push(ref);
        break;
      case 'unresolved':
        mismatches.push(ref);
        break;
      default:
        orphans.push(ref);
    }
  }
  for (const ref of orders.keys()) if (!known.has(ref)) orphans.push(ref);
  return { orphans: orphans.sort(), mismatches: mismatches.sort() };
}

/** Two sets of references compared: what one has and the other lacks. */
export function setDifference(expected: string[], actual: string[]): { missed: string[]; extra: string[] } {
  const want = new Set(expected);
  const got = new Set(actual);
  return {
    missed: [...want].filter((r) => !got.has(r)).sort(),
    extra: [...got].filter((r) => !want.has(r)).sort(),
  };
}
