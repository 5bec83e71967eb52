/**
 * Passes a verified callback to the workflow that owns the reference: the booking while it runs, else an order run
 * while one is open; else it starts an order run that checks the order (signal-with-start on `order:<ref>`), so a
 * supplier that changed a booking we reported confirmed is found out now, not at the next sweep.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  bookingWorkflowId,
  checkOrderSignal,
  CustomerReferenceNoKey,
  HINT_POLL_SPACING_SECONDS,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  supplierOrderUpdateSignal,
  type OrderCheck,
  type OrderWorkflowInput,
} from '../../api/contract/index';
import { CallbackDeferredError, type CallbackTarget } from './server';

export { CallbackDeferredError };

/**
 * `where.taskQueue` is the booking task queue, read at each start; `where.now` the clock compared with the last order
 * run's close time (default the machine's; a test on the time-skipping server passes the server's).
 */
export function temporalCallbackTarget(
  client: Client,
  where: { readonly taskQueue: string; readonly now?: () => number | Promise<number> },
): CallbackTarget {
  async function signalOpen(workflowId: string, update: Parameters<CallbackTarget['signal']>[0]): Promise<boolean> {
    try {
      await client.workflow.getHandle(workflowId).signal(supplierOrderUpdateSignal, update);
      return true;
    } catch (err) {
      // Closed or never started: the next owner, if any, is the one to tell.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return false;
    }
  }

  /** When the last order run under the id closed, if one ran and has closed. */
  async function lastOrderRunClosedAtMs(workflowId: string): Promise<number | undefined> {
    try {
      return (await client.workflow.getHandle(workflowId).describe()).closeTime?.getTime();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  return {
    async signal(update) {
      const ref = update.customerReferenceNo;
      if (await signalOpen(bookingWorkflowId(ref), update)) return 'booking';
      const orderId = orderWorkflowId(ref);
      if (await signalOpen(orderId, update)) return 'order';
      const closedAtMs = await lastOrderRunClosedAtMs(orderId);
      // Every order run reads the order just before it ends: a check started now would read it again. Deferred
      // (the supplier sends it again later), so a replayed callback costs at most one QueryOrders a minute, across
      // every receiver process and restart (Temporal keeps the close time).
      const sinceMs = closedAtMs === undefined ? Infinity : (await (where.now ?? Date.now)()) - closedAtMs;
      if (sinceMs < HINT_POLL_SPACING_SECONDS * 1000) {
        throw new CallbackDeferredError(Math.ceil((HINT_POLL_SPACING_SECONDS * 1000 - sinceMs) / 1000));
      }
      const input: OrderWorkflowInput = { customerReferenceNo: ref };
      // The reference and the supplier's claim, nothing more: what the order's last run did, the run reads itself.
      // The account the callback came by is named in the reason, for whoever reads the run's history.
      const check: OrderCheck = {
        reason: `supplier order-status callback${update.supplier ? ` (account ${update.supplier})` : ''}`,
        ...(update.status !== undefined ? { reportedStatus: update.status } : {}),
      };
      // Reaches a run that opened meanwhile (it checks after the work in hand); else starts the check.
      await client.workflow.signalWithStart(ORDER_WORKFLOW_TYPE, {
        workflowId: orderId,
        taskQueue: where.taskQueue,
        args: [input],
        signal: checkOrderSignal,
        signalArgs: [check],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: ref }],
        staticSummary: `Order check · ref ${ref}`,
      });
      return 'order';
    },
  };
}
