/**
 * Step 4, for a confirmed booking: hand the order to its order workflow (`order:<reference>`), which stays
 * open for cancellation until check-in while this workflow ends with its outcome as before. Started by an
 * activity, as a workflow of its own (not a child: nothing ties its life to this one's), and awaited, so
 * the order has its workflow before the booking's result is out. Runs started before the patch end without.
 */
import { CancellationScope, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BookingOutcome, OrderWorkflowInput } from '../../contract';
import type { OrderActivities } from '../../activities/order';
import { PATCHES } from './patches';
import type { BookingRun } from './run';

/** Retried until the service takes it: the order must not be left without its workflow. */
const startOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
const { startOrderWorkflow } = proxyActivities<OrderActivities>(startOptions);
/**
 * Since PATCHES.fewerTasks a local activity: the start is idempotent (same id, USE_EXISTING), so a run
 * again after a lost worker is harmless, and it saves the booking a workflow task.
 */
const { startOrderWorkflow: startOrderWorkflowHere } = proxyLocalActivities<OrderActivities>(startOptions);

export async function handOffOrder(run: BookingRun, outcome: BookingOutcome): Promise<BookingOutcome> {
  if (outcome.kind !== 'confirmed' || !(run.fewerTasks || patched(PATCHES.orderWorkflowAfterConfirm))) return outcome;
  const { request, state } = run;
  const policy = request.onCancelAfterBook ?? 'report';
  const input: OrderWorkflowInput = {
    customerReferenceNo: request.customerReferenceNo,
    sessionId: state.sessionId,
    order: outcome.order,
    ...(request.context ? { context: request.context } : {}),
    recovery: run.recovery,
    ...(state.cancelRequested && policy !== 'report'
      ? {
          autoCancel: {
            reason: 'the booking was cancelled by its caller before the order was confirmed',
            onlyIfFree: policy === 'cancel-if-free',
            origin: 'auto' as const,
          },
        }
      : {}),
  };
  // Not cancellable: a cancel request of the booking's caller must not stop the hand-off of a live order.
  const start = run.fewerTasks ? startOrderWorkflowHere : startOrderWorkflow;
  await CancellationScope.nonCancellable(() => start(input));
  return outcome;
}
