/** Passes a verified callback to the workflow that owns the reference: the booking while it runs, else its order. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { bookingWorkflowId, orderWorkflowId, supplierOrderUpdateSignal } from '../contract';
import type { CallbackTarget } from './server';

export function temporalCallbackTarget(client: Client): CallbackTarget {
  return {
    async signal(update) {
      for (const [owner, workflowId] of [
        ['booking', bookingWorkflowId(update.customerReferenceNo)],
        ['order', orderWorkflowId(update.customerReferenceNo)],
      ] as const) {
        try {
          await client.workflow.getHandle(workflowId).signal(supplierOrderUpdateSignal, update);
          return owner;
        } catch (err) {
          // Closed or never started: the next owner, if any, is the one to tell.
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
      return 'none';
    },
  };
}
