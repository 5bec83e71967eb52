/**
 * Passes a verified callback to the workflow that owns the reference: the booking while it runs, else an order run
 * while one is open; else it starts an order run that checks the order (signal-with-start on `order:<ref>`), so a
 * supplier that changed a booking we reported confirmed is found out now, not at the next sweep.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  bookingWorkflowId,
  BookingStageKey,
  CustomerReferenceNoKey,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  supplierOrderUpdateSignal,
  type OrderWorkflowInput,
} from '../contract';
import type { CallbackTarget } from './server';

/** `where.taskQueue` is the booking task queue, read at each start. */
export function temporalCallbackTarget(client: Client, where: { readonly taskQueue: string }): CallbackTarget {
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

  /** The last order run's stage (what we knew of the order), when one ran. */
  async function lastOrderStage(workflowId: string): Promise<string | undefined> {
    try {
      const description = await client.workflow.getHandle(workflowId).describe();
      return description.typedSearchAttributes.get(BookingStageKey);
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
      const stage = await lastOrderStage(orderId);
      const input: OrderWorkflowInput = {
        customerReferenceNo: ref,
        check: {
          reason: 'supplier order-status callback',
          ...(update.status !== undefined ? { reportedStatus: update.status } : {}),
          ...(stage ? { lastOrderStage: stage } : {}),
        },
      };
      // Attaches to a run that opened meanwhile (the signal then reaches it); else starts the check.
      await client.workflow.signalWithStart(ORDER_WORKFLOW_TYPE, {
        workflowId: orderId,
        taskQueue: where.taskQueue,
        args: [input],
        signal: supplierOrderUpdateSignal,
        signalArgs: [update],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: ref }],
        staticSummary: `Order check · ref ${ref}`,
      });
      return 'order';
    },
  };
}
