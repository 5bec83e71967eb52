/**
 * orderWorkflow, on demand: one run per piece of work on a confirmed booking's order, `order:<reference>`.
 *  - A caller's cancelBooking update starts it (Update-With-Start, attaching to a run already open): the run reads
 *    the order fresh with QueryOrders, quotes the fee that applies now in the order's currency, and with
 *    `{confirm: true}` at that very fee cancels by the Cancel rule and follows the order to its end (cancel.ts).
 *  - onCancelAfterBook and the sweep's orphans start it with `autoCancel`; a supplier callback for a reference no
 *    workflow follows starts it with `check`, which verifies the order against its booking (work.ts).
 *  - It ends when its work is done; the next request starts a new run. Nothing waits for weeks.
 * An operator's "Request cancellation" lets a Cancel in flight finish, sends nothing more, and ends with an
 * outcome.
 */
import { allHandlersFinished, CancellationScope, condition } from '@temporalio/workflow';
import type { OrderOutcome, OrderState, OrderWorkflowInput } from '../../contract';
import { follow, type CancelPlan, type FollowState } from './cancel';
import { listenOrder } from './messages';
import { finishOrder, newOrderRun, type OrderRun } from './run';
import { answerRequest, cancelOnItsOwn, checkOrder } from './work';

/** The input, and what a run carries over continue-as-new (internal): `carry`, a cancellation being followed. */
export type OrderWorkflowArgs = OrderWorkflowInput & {
  carry?: { state: OrderState; plan: Omit<CancelPlan, 'onAnswer'>; follow: FollowState };
};

export async function orderWorkflow(input: OrderWorkflowArgs): Promise<OrderOutcome> {
  const run = newOrderRun(input);
  listenOrder(run);
  // Noted, not obeyed at once: the work below is not cancellable, so a Cancel in flight finishes.
  CancellationScope.current().cancelRequested.catch(() => {
    run.interrupted = true;
  });
  return CancellationScope.nonCancellable(() => work(run, input));
}

async function work(run: OrderRun, input: OrderWorkflowArgs): Promise<OrderOutcome> {
  // The first piece of work reads the order fresh: hints that came with the start (signal-with-start) are seen.
  run.hintsSeen = run.hints;
  if (input.carry) {
    Object.assign(run.state, input.carry.state);
    run.outcome = await follow(run, input.carry.plan, input.carry.follow, input);
  } else if (input.autoCancel) run.outcome = await cancelOnItsOwn(run, input.autoCancel, input);
  else if (input.check) run.outcome = await checkOrder(run, input.check);

  for (;;) {
    await condition(() => run.requests.length > 0 || run.hints > run.hintsSeen || allHandlersFinished());
    const request = run.requests.shift();
    if (request) {
      run.current = request;
      await answerRequest(run, request, input);
      run.current = undefined;
      continue;
    }
    if (run.hints > run.hintsSeen) {
      run.hintsSeen = run.hints;
      // A hint after a cancellation of this run adds nothing: it has already read the order to its end.
      if (!run.state.cancellation) run.outcome = await checkOrder(run, input.check);
      continue;
    }
    break;
  }
  // A run given nothing to do (an update refused before it was taken, a start without work) checks the order.
  return finishOrder(run, run.outcome ?? (await checkOrder(run, input.check)));
}
