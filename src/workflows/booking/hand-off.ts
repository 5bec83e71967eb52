/**
 * Step 4, for a confirmed booking whose caller cancelled it while Book was being resolved (onCancelAfterBook
 * `cancel` or `cancel-if-free`): start `order:<reference>` to cancel the order. Any other confirmed booking
 * simply ends: its order workflow starts on demand, when somebody asks (PATCHES.orderOnDemand). Before that
 * patch every confirmed booking handed its order over; runs from then replay on that path.
 *
 * Started by an activity, as a workflow of its own (not a child: nothing ties its life to this one's), and
 * awaited, so the cancellation has its workflow before the booking's result is out.
 */
import { CancellationScope, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BookingOutcome, OrderWorkflowInput } from '../../contract';
import type { OrderActivities } from '../../activities/order';
import { PATCHES } from './patches';
import type { BookingRun } from './run';

/** Retried until the service takes it: a cancellation asked for must not be lost. */
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
  const cancelNow = state.cancelRequested && policy !== 'report';
  const onDemand = run.orderOnDemand;
  if (onDemand && !cancelNow) return outcome;
  const input: OrderWorkflowInput = {
    customerReferenceNo: request.customerReferenceNo,
    sessionId: state.sessionId,
    // Before on demand the order workflow waited with the booking's order; now it reads the order fresh.
    ...(onDemand ? {} : { order: outcome.order }),
    ...(request.context ? { context: request.context } : {}),
    recovery: run.recovery,
    ...(cancelNow
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
