/**
 * reconciliationSweepWorkflow: a Temporal Schedule runs it every few minutes (src/temporal/reconciliation.ts).
 * It lists the supplier's orders booked in a window (QueryOrders by bookingTimeWindow, one request per
 * slice: the interface documents no paging), on the rate-limited QueryOrders queue like every poll; looks
 * up each reference's booking workflow, and its order workflow where the rule reads it; and reports what
 * does not agree (classify.ts) as its result, the `BookingStage` search attribute (`reconciliation-clean`
 * or `reconciliation-findings`: filter for the latter) and one ERROR log line per finding. With
 * `cancelOrphans`, an orphan found Confirmed gets an order workflow that cancels it (the same Cancel and
 * follow-up as a caller's, fee recorded).
 */
import {
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { OrderActivities } from '../../activities/order';
import type { ReconciliationActivities, SweepFilter } from '../../activities/reconciliation';
import { ACTIVITY_TIMEOUT_SECONDS, BookingStageKey, queryOrdersTaskQueue } from '../../contract/definitions';
import type { SweepFinding, SweepInput, SweepResult } from '../../contract';
import type { Money } from '../../values';
import { classifyOrder, slices, type StatusCodes } from '../../reconciliation/classify';
import { checkInHalves, halves, SWEEP_SLICE_TOO_LARGE, type SweepOrder } from '../../reconciliation/listing';
import { countSweep } from './metrics';
import { failureType } from '../failure';
import { SWEEP_PATCHES } from './patches';

/** References looked up per activity. */
const LOOKUP_CHUNK = 100;

/** The profile's order statuses, as the workflow cannot read configuration (the sweep's input carries them). */
export type SweepWorkflowInput = SweepInput & { statuses: StatusCodes };

export async function reconciliationSweepWorkflow(input: SweepWorkflowInput): Promise<SweepResult> {
  const wholeLife = patched(SWEEP_PATCHES.wholeLife);
  const { listOrdersBooked } = proxyActivities<ReconciliationActivities>({
    taskQueue: queryOrdersTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.listOrders} seconds`,
    scheduleToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const { lookUpBookings } = proxyActivities<ReconciliationActivities>({
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

  const nowMs = Date.now();
  const endMs = nowMs - input.settleMinutes * 60_000;
  const startMs = endMs - input.lookbackMinutes * 60_000;
  const sliceMs = input.sliceMinutes * 60_000;
  const traceId = workflowInfo().workflowId;
  const listings: Array<{ filter: SweepFilter; start: string; end: string }> = [
    ...slices(startMs, endMs, sliceMs).map((s) => ({ filter: 'booking' as const, ...s })),
    // Since the patch, the order's whole life: cancellations in the window (the supplier's own among them), and
    // orders checking in soon, still Confirmed or not.
    ...(wholeLife
      ? [
          ...slices(startMs, nowMs, sliceMs).map((s) => ({ filter: 'cancelled' as const, ...s })),
          ...slices(nowMs, nowMs + (input.checkInHours ?? 48) * 3600_000, sliceMs * 6).map((s) => ({
            filter: 'checkIn' as const,
            ...s,
          })),
        ]
      : []),
  ];
  const orders = new Map<string, SweepOrder>();
  const failedSlices: NonNullable<SweepResult['failedSlices']> = [];
  let unreadable = 0;
  let requests = 0;
  // Oldest first; a slice too large to list at once is replaced by its halves, listed next.
  const pending = [...listings];
  for (let listing = pending.shift(); listing; listing = pending.shift()) {
    const { filter, start, end } = listing;
    requests++;
    if (!wholeLife) {
      const page = await listOrdersBooked({ start, end, traceId });
      unreadable += page.unreadable;
      for (const order of page.orders) orders.set(order.customerReferenceNo, order);
      continue;
    }
    try {
      const page = await listOrdersBooked({ start, end, traceId, filter });
      unreadable += page.unreadable;
      for (const order of page.orders) orders.set(order.customerReferenceNo, order);
    } catch (err) {
      const error = failureType(err);
      // Only a slice over the ceiling is split (the patch keeps histories whose old code reported it as failed).
      const split =
        error === SWEEP_SLICE_TOO_LARGE && patched(SWEEP_PATCHES.halveLargeSlices) ? halvesOf(listing) : undefined;
      if (split) pending.unshift(...split.map((half) => ({ filter, ...half })));
      // A listing refused for good (a 400, a minimal slice still too large): what it covers is unseen, which is
      // a finding, not a reason to stop.
      else failedSlices.push({ filter, start, end, error });
    }
  }

  const refs = [...orders.keys()];
  const orphans: SweepFinding[] = [];
  const mismatches: SweepFinding[] = [];
  for (let i = 0; i < refs.length; i += LOOKUP_CHUNK) {
    const references = refs.slice(i, i + LOOKUP_CHUNK);
    // The listed statuses let the activity skip the order workflow's describe where the rule does not read it.
    const status = Object.fromEntries(references.map((ref) => [ref, orders.get(ref)!.status]));
    const views = await lookUpBookings({ references, listed: { status, codes: input.statuses } });
    for (const [ref, view] of Object.entries(views)) {
      const order = orders.get(ref)!;
      const finding = classifyOrder(order.status, view, input.statuses);
      if (finding.verdict === 'ok') continue;
      const entry: SweepFinding = {
        customerReferenceNo: ref,
        ...(order.platformReferenceNo ? { platformReferenceNo: order.platformReferenceNo } : {}),
        ...(order.supplierReferenceNo ? { supplierReferenceNo: order.supplierReferenceNo } : {}),
        status: order.status,
        reason: finding.reason,
      };
      if (finding.verdict === 'orphan') {
        // Only an order we made (a booking workflow stands for its reference, ended or not) is ours to cancel.
        const ours = !wholeLife || view.booking.status !== 'none';
        if (input.cancelOrphans && ours && order.state === 'confirmed' && view.order?.status === 'none') {
          entry.cancelling = await cancelOrphan(order, wholeLife ? (input.orphanFeeCeiling ?? FREE_ONLY) : undefined);
        }
        orphans.push(entry);
      } else mismatches.push(entry);
    }
  }

  const window = { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() };
  const findings = orphans.length + mismatches.length + (wholeLife ? unreadable + failedSlices.length : 0);
  upsertSearchAttributes([
    { key: BookingStageKey, value: findings > 0 ? 'reconciliation-findings' : 'reconciliation-clean' },
  ]);
  setCurrentDetails(
    `- Window: ${window.start} → ${window.end}\n- Orders: ${orders.size}\n- Orphans: ${orphans.length}\n` +
      `- Mismatches: ${mismatches.length}\n- Unreadable: ${unreadable}\n- Failed listings: ${failedSlices.length}`,
  );
  for (const f of [
    ...orphans.map((o) => ({ ...o, kind: 'orphan' })),
    ...mismatches.map((m) => ({ ...m, kind: 'mismatch' })),
  ]) {
    log.error(`Reconciliation ${f.kind}: ${f.reason}`, {
      customerReferenceNo: f.customerReferenceNo,
      supplierReferenceNo: f.supplierReferenceNo,
      status: f.status,
      ...(f.cancelling ? { cancelling: f.cancelling } : {}),
    });
  }
  if (wholeLife && unreadable > 0) {
    log.error(`Reconciliation: ${unreadable} orders could not be read (drift); they were not judged`, { unreadable });
  }
  for (const f of failedSlices) log.error(`Reconciliation: a listing failed, its window was not seen`, { ...f });
  countSweep(findings > 0 ? 'findings' : 'clean', {
    orphan: orphans.length,
    mismatch: mismatches.length,
    unreadable,
    'failed-slice': failedSlices.length,
  });
  return {
    window,
    requests,
    ordersSeen: orders.size,
    unreadable,
    orphans,
    mismatches,
    ...(wholeLife ? { failedSlices } : {}),
  };
}

/** A listing's halves: check-in windows only between two days (since the patch), other windows at their middle. */
function halvesOf(listing: { filter: SweepFilter; start: string; end: string }) {
  return listing.filter === 'checkIn' && patched(SWEEP_PATCHES.checkInByDay) ? checkInHalves(listing) : halves(listing);
}

/** Cancel orphans only while free unless configured otherwise: any amount 0 means free (see feeWithin). */
const FREE_ONLY = { currency: 'USD', amount: 0 };

const { startOrderWorkflow } = proxyActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Starts the orphan's order run with an automatic cancel; a workflow of its own, it outlives this sweep. Since the
 * patch the run reads the order fresh and cancels only within `maxFee`, re-checked before every send.
 */
async function cancelOrphan(order: SweepOrder, maxFee: Money | undefined): Promise<string> {
  // Before the patch only, which no new sweep takes: the histories replayed there recorded full order views
  // (statusRemark, price, cancelPolicy...), so `summary` carried them; a replay does not compare activity inputs.
  const { state: _state, ...summary } = order;
  const { workflowId } = await startOrderWorkflow({
    customerReferenceNo: order.customerReferenceNo,
    // No booking session to continue: the sweep's own, derived from the reference.
    sessionId: `reconciliation-${order.customerReferenceNo}`,
    ...(maxFee ? {} : { order: summary }),
    autoCancel: {
      reason: 'orphan order: no booking stands for it',
      onlyIfFree: false,
      origin: 'reconciliation',
      ...(maxFee ? { maxFee } : {}),
    },
  });
  return workflowId;
}
