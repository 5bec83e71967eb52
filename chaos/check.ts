/**
 * What a chaos run must prove, as pure functions over what it observed: each booking's ending, the
 * sandbox supplier's orders and calls, raw workflow histories and worker log lines.
 *
 * The invariants (each must be 0): two orders for one reference; an order the booking's outcome does not
 * account for (an orphan); a workflow still open past its deadline (stuck); a started workflow the server
 * no longer knows (lost); a workflow that failed instead of returning an outcome; Book sent more often than
 * the recovery policy allows; a secret or personal value in clear in a history or a log line.
 */
import type { BookingOutcome, BookingOutcomeKind } from '../src/contract';
import type { SandboxCall, SandboxOrderView } from '../dev/sandbox/server';
import { FAULT_CLASSES, type FaultClass, type PlannedBooking } from './mix';

/** Order statuses of the supplier profile (src/supplier/profile.ts defaults, which the sandbox uses). */
const CONFIRMING = 1;
const CONFIRMED = 2;

/** How a booking's workflow ended, as the chaos client saw it after the run. */
export type Ending =
  | { state: 'completed'; outcome: BookingOutcome }
  /** Still running when the run's hard limit came. */
  | { state: 'open'; detail: string }
  /** Failed, terminated, timed out or cancelled instead of returning an outcome. */
  | { state: 'workflow-failed'; detail: string }
  /** Terminated by the run itself once Book had made its order: an orphan made on purpose, not a failure. */
  | { state: 'orphaned'; detail: string }
  /** Started (the server acknowledged it), but the server no longer knows it. */
  | { state: 'lost'; detail: string }
  /** The chaos client never got the start acknowledged. */
  | { state: 'not-started'; detail: string };

export interface Observation {
  booking: PlannedBooking;
  ending: Ending;
}

/** An ending's label in tables: the outcome kind, or the state when there is no outcome. */
export function endingKind(ending: Ending): BookingOutcomeKind | Exclude<Ending['state'], 'completed'> {
  return ending.state === 'completed' ? ending.outcome.kind : ending.state;
}

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
  for (const { booking, ending } of observations) {
    if (ending.state !== 'completed') continue;
    const ref = booking.request.customerReferenceNo;
    const order = orders.get(ref)?.[0];
    const outcome = ending.outcome;
    const add = (why: string) =>
      orphans.push({ customerReferenceNo: ref, outcome: outcome.kind, orderStatus: order?.status, why });
    if (outcome.kind === 'confirmed') {
      if (!order) add('outcome confirmed, but the supplier has no order');
      else if (order.status !== CONFIRMED)
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

export interface ClassCoverage {
  /** Bookings given the fault. */
  assigned: number;
  assignedPercent: number;
  /** Bookings where the sandbox's calls (or the outcome) show the fault really happened. */
  exercised: number;
}

/** Per fault class: how many bookings carried it, and how many show evidence that it struck. */
export function coverage(observations: Observation[], calls: SandboxCall[], queryRefs: Set<string>) {
  const faultsBySession = new Map<string, Set<string>>();
  const faultsByRef = new Map<string, Set<string>>();
  for (const c of calls) {
    if (!c.fault) continue;
    if (c.op === 'checkAvail' && c.sessionId) {
      faultsBySession.set(c.sessionId, (faultsBySession.get(c.sessionId) ?? new Set()).add(c.fault));
    }
    if (c.op === 'book') {
      for (const ref of c.customerReferenceNos ?? [])
        faultsByRef.set(ref, (faultsByRef.get(ref) ?? new Set()).add(c.fault));
    }
  }
  const struck = (cls: FaultClass, { booking, ending }: Observation): boolean => {
    const ref = booking.request.customerReferenceNo;
    const ca = faultsBySession.get(booking.request.sessionId ?? '') ?? new Set<string>();
    const bk = faultsByRef.get(ref) ?? new Set<string>();
    const outcome = ending.state === 'completed' ? ending.outcome : undefined;
    switch (cls) {
      case 'checkAvail429':
        return ca.has('429');
      case 'checkAvail5xx':
        return ca.has('500') || ca.has('503');
      case 'checkAvailHang':
        return ca.has('hang');
      case 'checkAvailMalformed':
        return ca.has('malformed');
      case 'priceChanged':
        return ca.has('ariChanged');
      case 'soldOut':
        return outcome?.kind === 'unavailable';
      case 'book504AfterCreate':
        return bk.has('504AfterCreate');
      case 'bookHangAfterCreate':
        return bk.has('hangAfterCreate');
      case 'bookHangBeforeCreate':
        return bk.has('hangBeforeCreate');
      case 'bookResetAfterCreate':
        return bk.has('resetAfterCreate');
      case 'book429':
        return bk.has('429');
      case 'bookMalformedAfterCreate':
        return bk.has('malformedAfterCreate');
      case 'orderNeverFound':
        return bk.has('504BeforeCreate') && outcome?.kind === 'unresolved';
      // The order was Confirming for seconds after Book answered: a confirmed or failed ending that names
      // it, after QueryOrders asked for it, means the workflow waited it out by polling.
      case 'pendingThenConfirmed':
        return outcome?.kind === 'confirmed' && queryRefs.has(ref);
      case 'pendingThenFailed':
        return outcome?.kind === 'failed' && outcome.order?.status === 4 && queryRefs.has(ref);
      // A re-send was refused (the first Book's fault is limited to it), and the booking still ended on
      // the order's own status: confirmed, or failed naming the order.
      case 'listedLateResendRateLimited':
        return bk.has('429') && (outcome?.kind === 'confirmed' || (outcome?.kind === 'failed' && !!outcome.order));
    }
  };
  const n = observations.length;
  return Object.fromEntries(
    FAULT_CLASSES.map((cls) => {
      const carrying = observations.filter((o) => o.booking.classes.includes(cls));
      const entry: ClassCoverage = {
        assigned: carrying.length,
        assignedPercent: n ? Math.round((carrying.length / n) * 1000) / 10 : 0,
        exercised: carrying.filter((o) => struck(cls, o)).length,
      };
      return [cls, entry];
    }),
  ) as Record<FaultClass, ClassCoverage>;
}

/** `expected → actual → count`, to see where chaos changed an ending (informational, not an invariant). */
export function outcomeMatrix(observations: Observation[]): Record<string, Record<string, number>> {
  const matrix: Record<string, Record<string, number>> = {};
  for (const { booking, ending } of observations) {
    const row = (matrix[booking.expected] ??= {});
    const kind = endingKind(ending);
    row[kind] = (row[kind] ?? 0) + 1;
  }
  return matrix;
}

// --- Reconciliation ---------------------------------------------------------------------------

const CANCELLED = 3;
const FAILED = 4;
const CANCEL_FAILED = 5;

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
  for (const { booking, ending } of observations) {
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
      case 'confirmed':
        if (s !== CONFIRMED) mismatches.push(ref);
        break;
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

// --- Secrets ------------------------------------------------------------------------------------

export { JWT, scanHistory, scanLogLines, type SecretHit, type SecretNeedles } from '../dev/codec/scan';
