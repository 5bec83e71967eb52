/**
 * The reconciliation sweep's activities: the supplier's orders of a booking-time window, and what Temporal
 * knows of their references. Built by a factory like the booking activities; the Temporal services are the
 * worker's own connection (describe by workflow id: strongly consistent, unlike a visibility query).
 */
import { temporal } from '@temporalio/proto';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import {
  bookingWorkflowId,
  orderWorkflowId,
  BookingStageKey,
  BookingStages,
  type OrderStage,
} from '../api/contract/index';
import type { SupplierClient } from '../runtime/supplier/interface';
import type { SupplierProfile } from '../runtime/config/supplier-profile';
import { isPageSizeExceeded, mayBeCutShort } from '../runtime/supplier/coalescer';
import type { TemporalServices } from '../runtime/namespace/setup';
import {
  classifyOrder,
  needsOrderView,
  type BookingView,
  type StatusCodes,
  type WorkflowView,
} from '../runtime/rules/sweep-classify';
import { SWEEP_SLICE_CEILING, SWEEP_SLICE_TOO_LARGE, type SweepOrder } from '../runtime/rules/sweep-listing';
import { decidingOrder } from '../runtime/supplier/orders';
import type { HotelOrder } from '../runtime/supplier/schemas';
import { everyRunOf, stageOf } from './runs';
import { reportOrderConflict, toFailure, viewOf } from './shared';
import type { BookingMeters } from '../runtime/observability/metrics';
import type { ListOrdersInput, ListOrdersResult, LookUpBookingsInput, ReconciliationActivities } from './types';

export interface ReconciliationDeps {
  supplier: Pick<SupplierClient, 'queryOrders'>;
  profile: SupplierProfile;
  temporal: { services: Pick<TemporalServices, 'workflowService'>; namespace: string };
  /** Where booking_order_conflicts_total is counted (see createActivities). */
  meters?: Pick<BookingMeters, 'counter'>;
  /** The most orders one listing returns (SWEEP_SLICE_CEILING); lower only in tests. */
  sliceCeiling?: number;
}

const WINDOW_FIELD = {
  booking: 'bookingTimeWindow',
  cancelled: 'cancelledTimeWindow',
  checkIn: 'checkInTimeWindow',
} as const;
const Status = temporal.api.enums.v1.WorkflowExecutionStatus;
/**
 * Stages of a run still at work: a booking's, and the order run's stages it passes through but never ends in (it
 * ends in its outcome's). A completed run whose described stage is one of these shows a lagging copy.
 */
const RUNNING_STAGES = new Set<string>([
  ...BookingStages.filter((s) => s !== 'completed'),
  ...(['checking', 'cancelling', 'cancel-waiting'] satisfies OrderStage[]).map((s) => `order-${s}`),
]);
const GRPC_NOT_FOUND = 5;

export function createReconciliationActivities({
  supplier,
  profile,
  temporal: t,
  meters,
  sliceCeiling = SWEEP_SLICE_CEILING,
}: ReconciliationDeps): ReconciliationActivities {
  /**
   * A closed booking whose stage still reads as a running one (`booking`, `recovering`, …) was seen on the
   * production engine after its nodes restarted: the final upsert is in the history, the describe's copy is not.
   * Asked again twice, then read from the history's last stage upsert, so the copy is not reported as a mismatch.
   * Order runs too: the chaos smoke on that engine reported three confirmed bookings whose orders their order runs
   * had cancelled as mismatches (`booking confirmed, order in status 3`): the order runs' copies read as anything but
   * `order-cancelled`, and only a run's stage while at work fits an order run that had ended `cancelled`.
   */
  async function view(workflowId: string): Promise<WorkflowView> {
    for (let attempt = 1; ; attempt++) {
      const seen = await describeOnce(workflowId);
      const lagging = seen.status === 'completed' && seen.stage !== undefined && RUNNING_STAGES.has(seen.stage);
      if (!lagging) return seen;
      if (attempt >= 3) {
        // Still lagging: the history is the source of truth; its last stage upsert is the outcome.
        const stage = await lastStageInHistory(workflowId).catch(() => undefined);
        return stage ? { ...seen, stage } : seen;
      }
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      Context.current().heartbeat();
    }
  }

  /** The `BookingStage` of the last upsert in a workflow's history, read from its end (search attributes are not encrypted). */
  async function lastStageInHistory(workflowId: string): Promise<string | undefined> {
    let nextPageToken: Uint8Array | undefined;
    for (let page = 0; page < 5; page++) {
      const answer = await t.services.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: t.namespace,
        execution: { workflowId },
        maximumPageSize: 50,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
      for (const event of answer.history?.events ?? []) {
        const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
        const stage = stageOf(fields?.[BookingStageKey.name]?.data);
        if (stage) return stage;
      }
      if (!answer.nextPageToken || answer.nextPageToken.length === 0) return undefined;
      nextPageToken = answer.nextPageToken;
    }
    return undefined;
  }

  /**
   * The `BookingStage` of the order run of a reference that ended last (by close time), other than `callingRun`:
   * what this namespace's order work last knew of the order. A run that continued as new is not an end (its
   * successor carries on). Listed by workflow id, a field every cluster's visibility has; on a server without
   * list queries (the time-skipping test server), by the older list of closed runs. Unreadable or no such run:
   * undefined, which judges the order as one no order run touched (a person is told rather than reassured).
   */
  /**
   * The stage the reference's last ended order run left, other than the calling run's. Runs of one workflow id follow
   * one another (one open at a time), so the newest ended run is the one that closed last; a run that continued as new
   * handed its work on and is passed over. Undefined when there is none, or they cannot be read.
   */
  async function lastEndedOrderRunStage(ref: string, callingRun: string): Promise<string | undefined> {
    const runs = await everyRunOf(t.services.workflowService, t.namespace, orderWorkflowId(ref), {
      exceptRunId: callingRun,
    }).catch(() => []);
    return runs.find((run) => run.status === 'completed' || run.status === 'ended-otherwise')?.stage;
  }

  /**
   * A confirmed booking's order in status Cancelled (or CancelFailed) whose newest order run does not say it cancelled
   * it: before that is a mismatch, every run of the order id is read, and one that ended having cancelled it (or
   * failed to) stands for the status. An order run that cancelled the order may be followed by another (a caller's
   * quote, a callback's check), and a describe on the production engine after its nodes restarted was seen to answer
   * with an older copy: the chaos smoke reported three orders its own order runs had cancelled as mismatches.
   */
  async function ownCancellation(
    ref: string,
    status: number,
    booking: WorkflowView,
    order: WorkflowView,
    codes: StatusCodes,
  ): Promise<WorkflowView> {
    const ending =
      status === codes.cancelled
        ? 'order-cancelled'
        : status === codes.cancelFailed
          ? 'order-cancel-failed'
          : undefined;
    if (
      !ending ||
      booking.stage !== 'confirmed' ||
      classifyOrder(status, { booking, order }, codes).verdict !== 'mismatch'
    )
      return order;
    const runs = await everyRunOf(t.services.workflowService, t.namespace, orderWorkflowId(ref)).catch(() => []);
    return runs.some((run) => run.status === 'completed' && run.stage === ending)
      ? { status: 'completed', stage: ending }
      : order;
  }

  async function describeOnce(workflowId: string): Promise<WorkflowView> {
    try {
      const { workflowExecutionInfo: info } = await t.services.workflowService.describeWorkflowExecution({
        namespace: t.namespace,
        execution: { workflowId },
      });
      const stage = stageOf(info?.searchAttributes?.indexedFields?.[BookingStageKey.name]?.data);
      const status = info?.status;
      return {
        status:
          status === Status.WORKFLOW_EXECUTION_STATUS_RUNNING
            ? 'running'
            : status === Status.WORKFLOW_EXECUTION_STATUS_COMPLETED ||
                status === Status.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
              ? 'completed'
              : 'closed',
        ...(stage ? { stage } : {}),
      };
    } catch (err) {
      if ((err as { code?: unknown })?.code === GRPC_NOT_FOUND) return { status: 'none' };
      throw err;
    }
  }

  /** The order each reference is judged on, as a booking's lookup judges it (a Confirmed one first); conflicts reported. */
  function onePerReference(orders: readonly HotelOrder[]): HotelOrder[] {
    const byReference = new Map<string, HotelOrder[]>();
    for (const o of orders)
      byReference.set(o.customerReferenceNo, [...(byReference.get(o.customerReferenceNo) ?? []), o]);
    return [...byReference.values()].flatMap((listed) => {
      const deciding = decidingOrder(listed, profile);
      if (deciding?.conflict) reportOrderConflict(deciding.conflict, meters);
      return deciding ? [deciding.order] : [];
    });
  }

  return {
    /**
     * One page of the sweep: every order whose `filter` time is in [start, end], each read on its own, one per
     * reference, slim (SweepOrder). More orders than the ceiling fail it for good (SweepSliceTooLarge): the
     * workflow lists the window again in halves rather than record an oversized result. So does an answer that
     * may have been cut short at the supplier's page (`queryOrders.pageSize` orders or more, or "page size
     * exceeded"): the orders it left out would be unseen, and the window read as clean.
     */
    async listOrdersBooked({ start, end, traceId, filter = 'booking' }: ListOrdersInput): Promise<ListOrdersResult> {
      const pageSize = profile.queryOrders.pageSize;
      const window = `${filter} window ${start} to ${end}`;
      let listing;
      try {
        listing = await supplier.queryOrders(
          { [WINDOW_FIELD[filter]]: { start, end } },
          { traceId, signal: Context.current().cancellationSignal },
        );
      } catch (err) {
        if (isPageSizeExceeded(profile, err)) {
          throw tooLarge(`${window}: the supplier answered "page size exceeded"`, { pageSize }, toFailure(err, []));
        }
        throw toFailure(err, ['SupplierBadRequest', 'SupplierForbidden']);
      }
      if (mayBeCutShort(profile, listing)) {
        const listed = listing.orders.length + listing.unreadable.length;
        throw tooLarge(`${listed} orders in ${window}, a page of ${pageSize}: the answer may be cut short`, {
          orders: listed,
          pageSize,
        });
      }
      const orders = onePerReference(listing.orders);
      if (orders.length > sliceCeiling) {
        throw tooLarge(`${orders.length} orders in ${window}, over the ceiling of ${sliceCeiling}`, {
          orders: orders.length,
          ceiling: sliceCeiling,
        });
      }
      return { orders: orders.map((o) => sweepOrderOf(o, profile)), unreadable: listing.unreadable.length };
    },

    /**
     * One order judged by the sweep's rule, for an order run's check: the booking as Temporal has it now, and as the
     * order workflow the stage the reference's last ended order run left (the calling run is running and must not
     * count). Both read here, from Temporal: nothing the run was started or signalled with is believed, so a
     * forged "the order run cancelled it" cannot hide a supplier's cancellation from a person.
     */
    async judgeOrder({
      customerReferenceNo,
      status,
    }: {
      customerReferenceNo: string;
      status: number;
    }): Promise<{ verdict: 'ok' | 'orphan' | 'mismatch'; reason?: string }> {
      const booking = await view(bookingWorkflowId(customerReferenceNo));
      const callingRun = Context.current().info.workflowExecution?.runId ?? '';
      const lastOrderStage = await lastEndedOrderRunStage(customerReferenceNo, callingRun);
      const order: WorkflowView = lastOrderStage ? { status: 'completed', stage: lastOrderStage } : { status: 'none' };
      const finding = classifyOrder(status, { booking, order }, profile.orderStatus);
      return finding.verdict === 'ok' ? { verdict: 'ok' } : { verdict: finding.verdict, reason: finding.reason };
    },

    /**
     * For each reference, its booking workflow as Temporal has it now, and its order workflow where the sweep reads
     * it (all of them without `listed`); a reference not described there has no `order` in its view.
     */
    async lookUpBookings({ references, listed }: LookUpBookingsInput): Promise<Record<string, BookingView>> {
      const out: Record<string, BookingView> = {};
      for (const ref of references) {
        const booking = await view(bookingWorkflowId(ref));
        const status = listed?.status[ref];
        const needed = !listed || status === undefined || needsOrderView(status, booking, listed.codes);
        if (!needed) out[ref] = { booking };
        else {
          const order = await view(orderWorkflowId(ref));
          out[ref] = {
            booking,
            order:
              listed && status !== undefined ? await ownCancellation(ref, status, booking, order, listed.codes) : order,
          };
        }
        Context.current().heartbeat();
      }
      return out;
    },
  };
}

/** A listing the workflow lists again in halves (non-retryable: the same window would answer the same). */
function tooLarge(message: string, details: Record<string, number>, cause?: Error): ApplicationFailure {
  return ApplicationFailure.create({
    type: SWEEP_SLICE_TOO_LARGE,
    message,
    nonRetryable: true,
    details: [details],
    ...(cause ? { cause } : {}),
  });
}

/** What the sweep reads of an order, and nothing else: its listing's results are recorded in the history. */
function sweepOrderOf(order: HotelOrder, profile: SupplierProfile): SweepOrder {
  const { customerReferenceNo, status, state, platformReferenceNo, supplierReferenceNo } = viewOf(order, profile);
  return {
    customerReferenceNo,
    status,
    state,
    ...(platformReferenceNo ? { platformReferenceNo } : {}),
    ...(supplierReferenceNo ? { supplierReferenceNo } : {}),
  };
}
