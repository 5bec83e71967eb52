/**
 * Step 4, for a confirmed booking whose caller cancelled it while Book was being resolved (onCancelAfterBook
 * `cancel` or `cancel-if-free`): start `order:<reference>` to cancel the order. Any other confirmed booking
 * simply ends: its order workflow starts on demand, when somebody asks.
 *
 * Started by a local activity, as a workflow of its own (not a child: nothing ties its life to this one's), and
 * awaited, so the cancellation has its workflow before the booking's result is out. The cancellation goes by
 * signal-with-start, so a run already open for the reference takes it too. A second delivery (the local activity
 * run again after a lost worker) joins the cancellation the first one started while that run is open, and after it
 * ended starts a run that finds the order Cancelled and ends `cancelled` too.
 */
import { CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { BookingOutcome } from '../../api/contract/index';
import type { OrderActivities } from '../../activities/types';
import type { OrderStart } from '../../activities/types';
import type { BookingRun } from './run';

/** Retried until the service takes it: a cancellation asked for must not be lost. */
const { startOrderWorkflow } = proxyLocalActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function handOffOrder(run: BookingRun, outcome: BookingOutcome): Promise<BookingOutcome> {
  if (outcome.kind !== 'confirmed') return outcome;
  const { request, state } = run;
  const policy = request.onCancelAfterBook ?? 'report';
  if (!state.cancelRequested || policy === 'report') return outcome;
  const input: OrderStart = {
    customerReferenceNo: request.customerReferenceNo,
    sessionId: state.sessionId,
    ...(request.context ? { context: request.context } : {}),
    recovery: run.recovery,
    autoCancel: {
      reason: 'the booking was cancelled by its caller before the order was confirmed',
      onlyIfFree: policy === 'cancel-if-free',
      origin: 'auto',
    },
  };
  // Not cancellable: a cancel request of the booking's caller must not stop the hand-off of a live order.
  await CancellationScope.nonCancellable(() => startOrderWorkflow(input));
  return outcome;
}
