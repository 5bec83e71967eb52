/**
 * reconciliationSweepWorkflow: a Temporal Schedule runs it every few minutes (src/temporal/reconciliation.ts).
 * It lists the supplier's orders booked in a window (QueryOrders by bookingTimeWindow, one request per
 * slice: the interface documents no paging), on the rate-limited QueryOrders queue like every poll; looks
 * up each reference's booking and order workflows; and reports what does not agree (classify.ts) as its
 * result, the `BookingStage` search attribute (`reconciliation-clean` or `reconciliation-findings`: filter
 * for the latter) and one ERROR log line per finding. With `cancelOrphans`, an orphan found Confirmed gets
 * an order workflow that cancels it (the same Cancel and follow-up as a caller's, fee recorded).
 */
import { log, proxyActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { OrderView } from '../../activities/booking';
import type { OrderActivities } from '../../activities/order';
import type { ReconciliationActivities } from '../../activities/reconciliation';
import { ACTIVITY_TIMEOUT_SECONDS, BookingStageKey, queryOrdersTaskQueue } from '../../contract/definitions';
import type { SweepFinding, SweepInput, SweepResult } from '../../contract';
import { classifyOrder, slices, type StatusCodes } from './classify';

/** References looked up per activity. */
const LOOKUP_CHUNK = 100;

/** The profile's order statuses, as the workflow cannot read configuration (the sweep's input carries them). */
export type SweepWorkflowInput = SweepInput & { statuses: StatusCodes };

export async function reconciliationSweepWorkflow(input: SweepWorkflowInput): Promise<SweepResult> {
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

  const endMs = Date.now() - input.settleMinutes * 60_000;
  const startMs = endMs - input.lookbackMinutes * 60_000;
  const traceId = workflowInfo().workflowId;
  const orders = new Map<string, OrderView>();
  let unreadable = 0;
  let requests = 0;
  for (const slice of slices(startMs, endMs, input.sliceMinutes * 60_000)) {
    const page = await listOrdersBooked({ ...slice, traceId });
    requests++;
    unreadable += page.unreadable;
    for (const order of page.orders) orders.set(order.customerReferenceNo, order);
  }

  const refs = [...orders.keys()];
  const orphans: SweepFinding[] = [];
  const mismatches: SweepFinding[] = [];
  for (let i = 0; i < refs.length; i += LOOKUP_CHUNK) {
    const views = await lookUpBookings({ references: refs.slice(i, i + LOOKUP_CHUNK) });
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
        if (input.cancelOrphans && order.state === 'confirmed' && view.order.status === 'none') {
          entry.cancelling = await cancelOrphan(order);
        }
        orphans.push(entry);
      } else mismatches.push(entry);
    }
  }

  const window = { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() };
  const findings = orphans.length + mismatches.length;
  upsertSearchAttributes([
    { key: BookingStageKey, value: findings > 0 ? 'reconciliation-findings' : 'reconciliation-clean' },
  ]);
  setCurrentDetails(
    `- Window: ${window.start} → ${window.end}\n- Orders: ${orders.size}\n- Orphans: ${orphans.length}\n- Mismatches: ${mismatches.length}`,
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
  return { window, requests, ordersSeen: orders.size, unreadable, orphans, mismatches };
}

const { startOrderWorkflow } = proxyActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Starts the orphan's order workflow with an automatic cancel; a workflow of its own, it outlives this sweep. */
async function cancelOrphan(order: OrderView): Promise<string> {
  const { state: _state, ...summary } = order;
  const { workflowId } = await startOrderWorkflow({
    customerReferenceNo: order.customerReferenceNo,
    // No booking session to continue: the sweep's own, derived from the reference.
    sessionId: `reconciliation-${order.customerReferenceNo}`,
    order: summary,
    autoCancel: { reason: 'orphan order: no booking stands for it', onlyIfFree: false, origin: 'reconciliation' },
  });
  return workflowId;
}
