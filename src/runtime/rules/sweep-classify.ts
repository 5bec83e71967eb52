/**
 * The reconciliation rule, as a pure function: is a supplier order what its booking reported? Workflow-safe
 * (no zod, no I/O), unit-tested on its own.
 *
 *  - orphan: an order no booking stands for: no booking workflow, one that ended without an outcome
 *    (terminated, timed out, failed), or one that ended before Book (unavailable, price-rejected, cancelled);
 *  - mismatch: the booking reported an outcome the order's status denies (confirmed but the order failed or
 *    is pending; failed but the order is confirmed or pending; unresolved), or the order was cancelled
 *    while no order workflow says so;
 *  - ok: the order agrees with its booking, or the booking is still at work on it (running), or an orphan's
 *    order workflow (cancelOrphans) is cancelling or has cancelled it.
 */
import type { SweepInput } from '../../api/contract/index';

/** What Temporal knows of a reference: its booking and order workflows (from describe, strongly consistent). */
export interface BookingView {
  booking: WorkflowView;
  /**
   * Absent: not looked up, where needsOrderView says the sweep does not read it. Never read as `none`: where it
   * would be read, an absent view accounts for nothing (the finding stands, no orphan is cancelled).
   */
  order?: WorkflowView;
}

export interface WorkflowView {
  /** `none`: no workflow with that id; `closed`: ended without a result (terminated, timed out, failed, cancelled). */
  status: 'none' | 'running' | 'completed' | 'closed';
  /** The `BookingStage` search attribute: a booking's outcome kind, or `order-<stage>` for an order workflow. */
  stage?: string;
}

/** The order statuses the rule reads (the supplier profile's `orderStatus`). */
export interface StatusCodes {
  unknown: number;
  confirming: number;
  confirmed: number;
  cancelled: number;
  failed: number;
  cancelFailed: number;
}

/** What the sweep's Schedule starts each sweep with: the caller-facing settings and the profile's statuses. */
export type SweepWorkflowInput = SweepInput & {
  statuses: StatusCodes;
  /** The supplier account this sweep lists (its own Schedule per account); absent: the worker's own supplier. */
  supplier?: string;
};

export type Finding =
  { verdict: 'ok' } | { verdict: 'orphan'; reason: string } | { verdict: 'mismatch'; reason: string };

export function classifyOrder(status: number, view: BookingView, s: StatusCodes): Finding {
  const { booking, order } = view;
  if (booking.status === 'running') return { verdict: 'ok' };
  if (booking.status === 'none' || booking.status === 'closed') {
    // An orphan an order workflow took over (the sweep's cancelOrphans) is accounted for while it works and once cancelled.
    if (order?.status === 'running' || (status === s.cancelled && order?.stage === 'order-cancelled'))
      return { verdict: 'ok' };
    return {
      verdict: 'orphan',
      reason:
        booking.status === 'none'
          ? 'no booking workflow for this reference'
          : 'the booking workflow ended without an outcome (terminated or failed)',
    };
  }
  const outcome = booking.stage;
  const pending = status === s.unknown || status === s.confirming;
  switch (outcome) {
    case 'confirmed': {
      if (status === s.confirmed) return { verdict: 'ok' };
      if (status === s.cancelled || status === s.cancelFailed) {
        // Cancelled through its order workflow (or found so by it): as reported.
        const orderStage = order?.stage ?? '';
        const known =
          order?.status === 'running' ||
          (status === s.cancelled && orderStage === 'order-cancelled') ||
          (status === s.cancelFailed && orderStage === 'order-cancel-failed');
        return known
          ? { verdict: 'ok' }
          : { verdict: 'mismatch', reason: `booking confirmed, order in status ${status}` };
      }
      return {
        verdict: 'mismatch',
        reason: `booking confirmed, order ${pending ? 'still pending' : 'failed'} (status ${status})`,
      };
    }
    case 'failed':
      if (status === s.failed || status === s.cancelled || status === s.cancelFailed) return { verdict: 'ok' };
      return { verdict: 'mismatch', reason: `booking failed, order in status ${status}` };
    case 'unresolved':
      return { verdict: 'mismatch', reason: `booking unresolved, order in status ${status}` };
    case 'unavailable':
    case 'price-rejected':
    case 'cancelled':
      return { verdict: 'orphan', reason: `the booking ended ${outcome} before Book, yet an order exists` };
    default:
      return { verdict: 'mismatch', reason: `booking completed with an unknown outcome (${outcome ?? 'none'})` };
  }
}

/**
 * Whether the sweep reads a reference's order workflow, given the listed status and the booking workflow: where
 * classifyOrder reads it (no booking or one ended without an outcome; confirmed but the order cancelled or its
 * cancel failed), and for every orphan (the sweep cancels one only if no order workflow exists). Elsewhere the
 * verdict is the same whatever the order workflow says, so its describe is skipped (test/unit/sweep-order-view.test.ts).
 */
export function needsOrderView(status: number, booking: WorkflowView, s: StatusCodes): boolean {
  if (booking.status === 'running') return false;
  if (booking.status === 'none' || booking.status === 'closed') return true;
  switch (booking.stage) {
    case 'confirmed':
      return status === s.cancelled || status === s.cancelFailed;
    case 'unavailable':
    case 'price-rejected':
    case 'cancelled':
      return true;
    default:
      return false;
  }
}

/** The booking window [start, end) cut into slices of at most `sliceMs`, oldest first. */
export function slices(startMs: number, endMs: number, sliceMs: number): Array<{ start: string; end: string }> {
  const out: Array<{ start: string; end: string }> = [];
  for (let t = startMs; t < endMs; t += sliceMs) {
    out.push({ start: new Date(t).toISOString(), end: new Date(Math.min(t + sliceMs, endMs)).toISOString() });
  }
  return out;
}
