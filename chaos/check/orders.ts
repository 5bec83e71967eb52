/**
 * The supplier's orders against the bookings' outcomes: orders nobody accounts for (orphans), orders per
 * reference, and Book sends over the recovery policy's limit.
 */
import type { SandboxCall, SandboxOrderView } from '../../dev/sandbox/server';
import type { PlannedBooking } from '../mix';
import {
  CANCEL_FAILED,
  CANCELLED,
  CONFIRMED,
  CONFIRMING,
  type CancellationObservation,
  type Observation,
} from './observation';

export interface Orphan {
  customerReferenceNo: string;
  outcome: string;
  orderStatus?: number;
  why: string;
}

/**
 * Orders the outcome does not account for. An order the supplier holds as Confirmed or Confirming must
 * end `confirmed`, `unresolved` (a person is told) or `failed` naming that order; `confirmed` needs a
 * Confirmed order; and a booking that says nothing was booked (unavailable, price-rejected, cancelled)
 * must have no order at all, whatever its status, since Book should never have been sent.
 */
export function findOrphans(observations: Observation[], orders: Map<string, SandboxOrderView[]>): Orphan[] {
  const orphans: Orphan[] = [];
  for (const { booking, ending, cancellation } of observations) {
    if (ending.state !== 'completed') continue;
    const ref = booking.request.customerReferenceNo;
    const order = orders.get(ref)?.[0];
    const outcome = ending.outcome;
    const add = (why: string) =>
      orphans.push({ customerReferenceNo: ref, outcome: outcome.kind, orderStatus: order?.status, why });
    if (outcome.kind === 'confirmed') {
      if (!order) {
        add('outcome confirmed, but the supplier has no order');
        continue;
      }
      // Cancelled by our own cancellation: the order run's outcome must account for the status.
      const why = cancellation ? cancelledOrderUnaccounted(cancellation, order.status) : undefined;
      if (why) add(why);
      else if (!cancellation && order.status !== CONFIRMED)
        add(`outcome confirmed, but the supplier order is in status ${order.status}`);
      continue;
    }
    if (!order) continue;
    if (outcome.kind === 'unavailable' || outcome.kind === 'price-rejected' || outcome.kind === 'cancelled') {
      add(`outcome ${outcome.kind} says nothing was booked, but the supplier has an order (status ${order.status})`);
      continue;
    }
    if (outcome.kind === 'failed') {
      if (order.status === CONFIRMED) add('outcome failed, but the supplier order is Confirmed');
      else if (order.status === CONFIRMING && outcome.order?.customerReferenceNo !== ref) {
        add('outcome failed without naming the order, but the supplier order is Confirming');
      }
    }
  }
  return orphans;
}

/**
 * Whether the order status of a confirmed booking we cancelled (or tried to) is what the order run's outcome says,
 * or why not: `cancelled` needs status 3, `cancel-failed` status 5; `cancel-unresolved` and `changed-by-supplier`
 * hand the order to a person (any status); every other ending (refused, stopped, quoted only, nothing asked) says
 * nothing was cancelled, so the order must still be Confirmed. A cancellation still open is the `stuck` check's.
 */
export function cancelledOrderUnaccounted(c: CancellationObservation, status: number): string | undefined {
  if (c.state === 'open') return undefined;
  const outcome = c.state === 'done' ? c.outcome : undefined;
  switch (outcome) {
    case 'cancelled':
      return status === CANCELLED
        ? undefined
        : `our cancellation ended cancelled, but the supplier order is in status ${status}`;
    case 'cancel-failed':
      return status === CANCEL_FAILED
        ? undefined
        : `our cancellation ended cancel-failed, but the supplier order is in status ${status}`;
    case 'cancel-unresolved':
    case 'changed-by-supplier':
      return undefined;
    default:
      return status === CONFIRMED
        ? undefined
        : `our cancellation ended ${outcome ?? c.state} (nothing cancelled), but the supplier order is in status ${status}`;
  }
}

/** Orders per reference: the histogram, references with more than one, and orders for references never booked. */
export function orderCounts(orders: SandboxOrderView[], plan: PlannedBooking[]) {
  const byRef = new Map<string, SandboxOrderView[]>();
  for (const o of orders) byRef.set(o.customerReferenceNo, [...(byRef.get(o.customerReferenceNo) ?? []), o]);
  const known = new Set(plan.map((b) => b.request.customerReferenceNo));
  const histogram: Record<string, number> = {};
  for (const b of plan) {
    const n = byRef.get(b.request.customerReferenceNo)?.length ?? 0;
    histogram[n] = (histogram[n] ?? 0) + 1;
  }
  const duplicates = [...byRef]
    .filter(([, list]) => list.length > 1)
    .map(([ref, list]) => ({ ref, orders: list.length }));
  const strays = [...byRef.keys()].filter((ref) => !known.has(ref));
  return { byRef, histogram, duplicates, strays };
}

/**
 * Book calls per reference that reached the supplier's order logic. Refusals before any work (429, and a
 * 401 the client answers by renewing its ticket) do not count; everything else is a Book attempt, and
 * the workflow may make at most `maxBookAttempts` of them.
 */
export function bookSendsOverLimit(calls: SandboxCall[], maxBookAttempts: number) {
  const sends = new Map<string, number>();
  for (const c of calls) {
    if (c.op !== 'book' || c.httpStatus === 429 || c.httpStatus === 401) continue;
    for (const ref of c.customerReferenceNos ?? []) sends.set(ref, (sends.get(ref) ?? 0) + 1);
  }
  return [...sends].filter(([, n]) => n > maxBookAttempts).map(([ref, n]) => ({ ref, bookSends: n }));
}
