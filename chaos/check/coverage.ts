/**
 * Which fault classes a run exercised, and where chaos changed an ending: informational tables, not invariants.
 */
import type { SandboxCall } from '../../dev/sandbox/server';
import { FAULT_CLASSES, type FaultClass } from '../mix';
import { endingKind, type Observation } from './observation';

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
  const laggedRefs = new Set(calls.flatMap((c) => c.lagged ?? []));
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
  const struck = (cls: FaultClass, o: Observation): boolean => {
    const { booking, ending } = o;
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
      // The confirmed booking was quoted and a cancellation asked for, and its order run ended.
      case 'cancelAfterConfirm':
        return o.cancellation?.state === 'done' && o.cancellation.acceptedFee !== undefined;
      // The overlap happened: the caller refused and the booking cancelled while it recovered (and the listing
      // lagged for the order run), or two confirms answered for one order; and the order run ended.
      case 'cancelOverlaps': {
        const c = o.cancellation;
        if (c?.state !== 'done' || c.outcome === undefined) return false;
        if (c.kind === 'duplicateConfirm') return (c.answers?.length ?? 0) === 2;
        const recovered = c.cancelRequested === true && !!c.callerAnswer?.includes('BookingInProgress');
        return recovered && (c.kind !== 'cancelDuringRecoveryListingLags' || laggedRefs.has(ref));
      }
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
