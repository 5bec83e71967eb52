/**
 * The order's activities: Cancel, sent once by the Cancel rule, and starting an order workflow.
 *
 * An order workflow (`order:<reference>`) is started from an activity rather than as a child workflow: it is a
 * workflow of its own, tied to no parent, and a second start (a retried activity, the sweep and a booking both)
 * attaches to the run already there. A run that ended leaves the id free for the next piece of work (one run per
 * cancellation or check). The client carries the worker's data converter, so the input is encrypted like every
 * other payload.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import {
  bookingWorkflowId,
  CustomerReferenceNoKey,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  type OrderWorkflowInput,
} from '../contract';
import type { SupplierClient } from '../supplier/interface';
import type { SupplierProfile } from '../supplier/profile';
import { withSignal, type SupplierCallContext } from './booking';
import { classifyCancelFailure, type CancelSendOutcome } from './cancel-rule';

export interface OrderActivityDeps {
  client: Pick<Client, 'workflow'>;
  supplier: SupplierClient;
  profile: SupplierProfile;
}

export interface CancelOrderInput {
  customerReferenceNo: string;
  supplierReferenceNo: string;
  reason: string;
  context: SupplierCallContext;
}

export function createOrderActivities({ client, supplier, profile }: OrderActivityDeps) {
  return {
    /**
     * One Cancel, never retried by Temporal (the order workflow decides what follows, by the Cancel rule in
     * ./cancel-rule.ts): every ending is a value, so the workflow knows whether this send may have acted.
     */
    async sendCancel({
      customerReferenceNo,
      supplierReferenceNo,
      reason,
      context,
    }: CancelOrderInput): Promise<CancelSendOutcome> {
      try {
        const data = await supplier.cancel({ customerReferenceNo, supplierReferenceNo, reason }, withSignal(context));
        return { kind: 'accepted', status: data.status, ...(data.serviceFee ? { serviceFee: data.serviceFee } : {}) };
      } catch (err) {
        return classifyCancelFailure(err, profile);
      }
    },

    /** Starts the order workflow on this worker's task queue, or finds it running; never two at once. */
    async startOrderWorkflow(input: OrderWorkflowInput): Promise<{ workflowId: string }> {
      const workflowId = orderWorkflowId(input.customerReferenceNo);
      await client.workflow
        .start(ORDER_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: Context.current().info.taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
          // Each run does one piece of work: a closed run does not stand in the way of the next.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: input.customerReferenceNo }],
          staticSummary: `Order · ref ${input.customerReferenceNo}`,
          // The worker's own connection: the server may hand the first workflow task straight back to this
          // worker in the start's answer, sparing a trip through the task queue (ignored where it cannot).
          requestEagerStart: true,
        })
        .catch((err: unknown) => {
          if ((err as Error)?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        });
      return { workflowId };
    },

    /**
     * Whether the booking of a reference (`booking:<reference>`) is still running: still finding out its order. A
     * describe of the latest run, so no visibility is needed; a reference no booking ever ran for is not running.
     */
    async bookingInProgress({ customerReferenceNo }: { customerReferenceNo: string }): Promise<boolean> {
      try {
        const described = await client.workflow.getHandle(bookingWorkflowId(customerReferenceNo)).describe();
        return described.status.name === 'RUNNING';
      } catch (err) {
        if ((err as Error)?.name === 'WorkflowNotFoundError') return false;
        throw err;
      }
    },
  };
}

export type OrderActivities = ReturnType<typeof createOrderActivities>;
