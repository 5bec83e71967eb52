/**
 * reconciliationSweepWorkflow: a Temporal Schedule runs it every few minutes (src/runtime/namespace/sweep-schedule.ts).
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
  proxyActivities,
  setCurrentDetails,
  setWorkflowOptions,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { refuseInput, sweepInputIssues } from '../input-guard';
import { pinnedWhenVersioned } from '../versioning';
import type { OrderActivities } from '../../activities/types';
import type { ReconciliationActivities } from '../../activities/types';
import type { SweepFilter } from '../../activities/types';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  BookingStageKey,
  queryOrdersTaskQueue,
  supplierTaskQueue,
} from '../../api/contract/definitions';
import type { SweepFinding, SweepResult } from '../../api/contract/index';
import type { Money } from '../../api/values/index';
import { classifyOrder, slices, type SweepWorkflowInput } from '../../runtime/rules/sweep-classify';
export type { SweepWorkflowInput };
import { checkInHalves, halves, SWEEP_SLICE_TOO_LARGE, type SweepOrder } from '../../runtime/rules/sweep-listing';
import { countSweep } from '../counters';
import { whose } from '../whose';
import { failureType } from '../failure';

/** References looked up per activity. */
const LOOKUP_CHUNK = 100;

/** The profile's order statuses, as the workflow cannot read configuration (the sweep's input carries them). */

type Listing = { filter: SweepFilter; start: string; end: string };
/** What the listings saw: the orders by reference, and what could not be seen. */
interface Listed {
  orders: Map<string, SweepOrder>;
  failedSlices: NonNullable<SweepResult['failedSlices']>;
  unreadable: number;
  requests: number;
}

/**
 * The listing, on the rate-limited QueryOrders queue beside the sweep's own (the fleet-wide cap), or, for a sweep of
 * one supplier account, on that account's (its own limit, its own credential).
 */
function listingActivity(supplier: string | undefined): ReconciliationActivities['listOrdersBooked'] {
  const calls = supplier ? supplierTaskQueue(workflowInfo().taskQueue, supplier) : workflowInfo().taskQueue;
  return proxyActivities<ReconciliationActivities>({
    taskQueue: queryOrdersTaskQueue(calls),
    startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.listOrders} seconds`,
    scheduleToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  }).listOrdersBooked;
}
const { lookUpBookings } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * PINNED: a sweep lasts minutes; the Schedule starts each one on the build current then, so a new build takes
 * the next sweep and an old one finishes its own.
 */
setWorkflowOptions(pinnedWhenVersioned, reconciliationSweepWorkflow);

export async function reconciliationSweepWorkflow(input: SweepWorkflowInput): Promise<SweepResult> {
  const issues = sweepInputIssues(input);
  if (issues.length > 0) throw refuseInput('InvalidSweepInput', issues);
  const nowMs = Date.now();
  const endMs = nowMs - input.settleMinutes * 60_000;
  const startMs = endMs - input.lookbackMinutes * 60_000;
  const listed = await listAll(windowsToList(input, startMs, endMs, nowMs), input.supplier);
  const { orphans, mismatches } = await judge(input, listed.orders);
  const window = { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() };
  report(listed, orphans, mismatches, window, input.supplier);
  const { orders, failedSlices, unreadable, requests } = listed;
  return { window, requests, ordersSeen: orders.size, unreadable, orphans, mismatches, failedSlices };
}

/**
 * The order's whole life: bookings made in the window, cancellations in it (the supplier's own among them), and
 * orders checking in soon, still Confirmed or not.
 */
function windowsToList(input: SweepWorkflowInput, startMs: number, endMs: number, nowMs: number): Listing[] {
  const sliceMs = input.sliceMinutes * 60_000;
  return [
    ...slices(startMs, endMs, sliceMs).map((s) => ({ filter: 'booking' as const, ...s })),
    ...slices(startMs, nowMs, sliceMs).map((s) => ({ filter: 'cancelled' as const, ...s })),
    ...slices(nowMs, nowMs + (input.checkInHours ?? 48) * 3600_000, sliceMs * 6).map((s) => ({
      filter: 'checkIn' as const,
      ...s,
    })),
  ];
}

/**
 * Every listing, oldest first. A slice over the ceiling is
 * replaced by its halves, listed next; a listing refused for good (a 400, a minimal slice still too large) leaves
 * its window unseen, which is a finding, not a reason to stop.
 */
async function listAll(listings: Listing[], supplier: string | undefined): Promise<Listed> {
  const traceId = workflowInfo().workflowId;
  const listOrdersBooked = listingActivity(supplier);
  const listed: Listed = { orders: new Map(), failedSlices: [], unreadable: 0, requests: 0 };
  const pending = [...listings];
  for (let listing = pending.shift(); listing; listing = pending.shift()) {
    const { filter, start, end } = listing;
    listed.requests++;
    try {
      const page = await listOrdersBooked({ start, end, traceId, filter });
      listed.unreadable += page.unreadable;
      for (const order of page.orders) listed.orders.set(order.customerReferenceNo, order);
    } catch (err) {
      const error = failureType(err);
      const split = error === SWEEP_SLICE_TOO_LARGE ? halvesOf(listing) : undefined;
      if (split) pending.unshift(...split.map((half) => ({ filter, ...half })));
      else listed.failedSlices.push({ filter, start, end, error });
    }
  }
  return listed;
}

/** Each order judged against its booking (classify.ts); an orphan we made is cancelled when the sweep is told to. */
async function judge(
  input: SweepWorkflowInput,
  orders: Map<string, SweepOrder>,
): Promise<{ orphans: SweepFinding[]; mismatches: SweepFinding[] }> {
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
      if (finding.verdict !== 'orphan') {
        mismatches.push(entry);
        continue;
      }
      // Only an order we made (a booking workflow stands for its reference, ended or not) is ours to cancel.
      const ours = view.booking.status !== 'none';
      if (input.cancelOrphans && ours && order.state === 'confirmed' && view.order?.status === 'none') {
        entry.cancelling = await cancelOrphan(order, input.orphanFeeCeiling ?? FREE_ONLY);
      }
      orphans.push(entry);
    }
  }
  return { orphans, mismatches };
}

/** The sweep's findings where operators look: the search attribute, the Web UI's details, ERROR lines, metrics. */
function report(
  { orders, failedSlices, unreadable }: Listed,
  orphans: SweepFinding[],
  mismatches: SweepFinding[],
  window: { start: string; end: string },
  account: string | undefined,
): void {
  const findings = orphans.length + mismatches.length + unreadable + failedSlices.length;
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
      ...whose(account),
    });
  }
  if (unreadable > 0) {
    log.error(`Reconciliation: ${unreadable} orders could not be read (drift); they were not judged`, {
      unreadable,
      ...whose(account),
    });
  }
  for (const f of failedSlices)
    log.error(`Reconciliation: a listing failed, its window was not seen`, { ...f, ...whose(account) });
  countSweep(
    findings > 0 ? 'findings' : 'clean',
    {
      orphan: orphans.length,
      mismatch: mismatches.length,
      unreadable,
      'failed-slice': failedSlices.length,
    },
    account,
  );
}

/**
 * A listing's halves: check-in windows only between two days (check-ins are dates: halving around one day's
 * midnight would list that day again in each half), other windows at their middle.
 */
function halvesOf(listing: Listing) {
  return listing.filter === 'checkIn' ? checkInHalves(listing) : halves(listing);
}

/** Cancel orphans only while free unless configured otherwise: any amount 0 means free (see feeWithin). */
const FREE_ONLY = { currency: 'USD', amount: 0 };

const { startOrderWorkflow } = proxyActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Starts the orphan's order run with an automatic cancel; a workflow of its own, it outlives this sweep. The run
 * reads the order fresh and cancels only within `maxFee`, re-checked before every send.
 */
async function cancelOrphan(order: SweepOrder, maxFee: Money): Promise<string> {
  const { workflowId } = await startOrderWorkflow({
    customerReferenceNo: order.customerReferenceNo,
    // No booking session to continue: the sweep's own, derived from the reference.
    sessionId: `reconciliation-${order.customerReferenceNo}`,
    autoCancel: {
      reason: 'orphan order: no booking stands for it',
      onlyIfFree: false,
      origin: 'reconciliation',
      maxFee,
    },
  });
  return workflowId;
}
