/**
 * The pieces of work an order run does for others, each from a fresh QueryOrders read of the order: answer a
 * cancelBooking request (quote, or cancel at the quoted fee), or check the order against what its booking reported
 * (a supplier callback). The system's own cancellations are in auto-cancel.ts.
 */
import type { OrderCheck, OrderOutcome } from '../../api/contract/index';
import { feeWithin, sameFee } from '../../runtime/rules/cancel-fee';
import { bookingInProgress, judgeOrder } from './proxies';
import { follow, sendFirst } from './cancel';
import type { CancelPlan, OrderWorkflowArgs } from './carry';
import { fee, feeClock, type OrderRun, type QueuedRequest } from './run';

/** Answers one cancelBooking request; the run's outcome becomes the request's, a cancellation's over a quote's. */
export async function answerRequest(run: OrderRun, queued: QueuedRequest, input: OrderWorkflowArgs): Promise<void> {
  const refuse = (type: string, message: string, outcome?: OrderOutcome) => {
    queued.refusal = { type, message };
    if (outcome) run.recordOutcome(outcome);
    if (outcome) run.setStage(outcome.kind === 'quoted' ? 'quoted' : 'not-cancellable');
  };
  if (run.interrupted) return refuse('OrderRunCancelled', 'The order run was cancelled by an operator: ask again');
  run.setStage('checking');
  const booking = await bookingStill(run);
  if (booking !== 'ended') {
    // The run's outcome says so too: a run left without one would check an order its booking is still finding out,
    // and could call a listing that lags a change by the supplier, for a person, over nothing.
    const reason =
      booking === 'running'
        ? `booking:${run.state.customerReferenceNo} is still finding out its order`
        : 'whether the booking is still finding out its order could not be read';
    return refuse(
      'BookingInProgress',
      booking === 'running'
        ? `${reason}: cancel the booking itself (its onCancelAfterBook says what happens once the order is known) ` +
            'or ask again once it has an outcome'
        : `${reason[0]!.toUpperCase()}${reason.slice(1)}: ask again`,
      { kind: 'not-cancellable', reason },
    );
  }
  const read = await run.read(Date.now(), 'request');
  if (read.kind === 'error') return refuse('OrderUnreadable', `The order could not be read (${read.error}): ask again`);
  const order = run.state.order;
  if (read.kind === 'not-found' || !order) {
    const reason = 'the supplier lists no order for this reference';
    return refuse('OrderNotFound', `The order cannot be cancelled: ${reason}`, { kind: 'not-cancellable', reason });
  }
  if (run.orderState !== 'confirmed') {
    const reason = `the order is ${run.orderState} (status ${order.status})`;
    return refuse('OrderNotCancellable', `The order cannot be cancelled now: ${reason}`, {
      kind: 'not-cancellable',
      order,
      reason,
    });
  }
  const quotedAtMs = await feeClock();
  const quote = run.quoteAt(quotedAtMs);
  const { request } = queued;
  if (!request.confirm) {
    queued.answer = { kind: 'quote', quote };
    run.recordOutcome({ kind: 'quoted', order, quote });
    run.setStage('quoted');
    return;
  }
  // Refused below, the request still got the run to quote: that is its outcome, nothing was sent.
  const quoted: OrderOutcome = { kind: 'quoted', order, quote };
  if (request.acceptedFee === undefined) {
    return refuse('FeeNotAccepted', 'acceptedFee: required to cancel (ask for a quote first)', quoted);
  }
  // The fee of a fresh quote: a deadline may have passed since the caller's.
  if (!sameFee(request.acceptedFee, quote.fee)) {
    const message = `The cancellation fee now is ${fee(quote.fee)}, not ${fee(request.acceptedFee)}: quote again`;
    return refuse('FeeChanged', message, quoted);
  }
  // A send this close to a change of fee may land after it: accepted only if the fee after the change is accepted too.
  const soon = run.feeSoon(quote, quotedAtMs);
  if (soon && !feeWithin({ kind: 'fee', fee: request.acceptedFee }, soon)) {
    const message =
      `The cancellation fee changes to ${fee(soon.fee)} at ${quote.changesAt}, within ` +
      `${run.recovery.feeChangeMarginSeconds} s: a Cancel sent now may be charged that; quote again after the change`;
    return refuse('FeeChangesSoon', message, quoted);
  }
  const plan: CancelPlan = {
    reason: request.reason ?? 'cancelled by the caller',
    ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
    origin: 'caller',
    accepted: { kind: 'fee', fee: request.acceptedFee },
  };
  // The caller is answered here, as soon as the first send has ended; the follow-up goes on after.
  const first = await sendFirst(run, plan);
  queued.answer = first.answer;
  const outcome = 'ended' in first ? first.ended : await follow(run, plan, first.follow, input);
  run.recordOutcome(outcome);
}

/**
 * Answers every piece of work waiting on a run whose order is not its namespace's: a caller's request refused as
 * `OrderNotFound`, a system cancellation or a check ended `not-cancellable` (for the system's, `cancel-not-done`: a
 * person looks). Nothing is read from the supplier, so nothing of another partner's order reaches this history.
 */
export function answerNotOurs(run: OrderRun, reason: string): OrderOutcome {
  for (const queued of run.requests.splice(0)) {
    queued.refusal = { type: 'OrderNotFound', message: `The order cannot be cancelled: ${reason}` };
  }
  const auto = run.autoCancels.splice(0)[0];
  if (auto) run.autoAsked ??= auto.origin;
  run.checks.splice(0);
  run.hintsSeen = run.hints;
  const outcome: OrderOutcome = { kind: 'not-cancellable', reason };
  run.recordOutcome(outcome);
  // Once: the loop passes here again for each piece of work that comes later, and the stage says the same.
  if (run.state.stage !== 'not-cancellable') run.setStage('not-cancellable');
  return outcome;
}

/**
 * Whether the reference's booking has ended. While it runs, its order is its own: a Cancel sent from here while
 * the booking recovers would be read back by the booking as its order Cancelled, and the booking would end
 * `failed` over an order that was made (and cancelled, perhaps at a fee). Cannot tell: not `ended`.
 */
async function bookingStill(run: OrderRun): Promise<'ended' | 'running' | 'unknown'> {
  try {
    return (await bookingInProgress({ customerReferenceNo: run.state.customerReferenceNo })) ? 'running' : 'ended';
  } catch {
    return 'unknown';
  }
}

/**
 * Checks the order against what its booking reported, by the sweep's rule (judgeOrder). A supplier callback is
 * never trusted: QueryOrders says what the order is. A booking we reported confirmed whose order the supplier
 * cancelled or failed, an order no booking stands for, or an order that cannot be read: `changed-by-supplier`,
 * an ERROR line and the metric, for a person.
 */
export async function checkOrder(run: OrderRun, check: OrderCheck | undefined): Promise<OrderOutcome> {
  run.setStage('checking');
  const read = await run.read(Date.now(), 'supplier-hint');
  const order = run.state.order;
  if (read.kind === 'error') {
    return { kind: 'changed-by-supplier', reason: `the order could not be read to check it (${read.error})` };
  }
  if (read.kind === 'not-found' || !order) {
    return { kind: 'not-cancellable', reason: 'the supplier lists no order for this reference' };
  }
  // An operator's check of an unresolved booking: a final status is the answer the booking was waiting for.
  if (check?.resolvesUnresolved && run.orderState !== 'pending') return { kind: 'checked', order };
  const judged = await judgeOrder({
    customerReferenceNo: run.state.customerReferenceNo,
    status: order.status,
  });
  if (judged.verdict === 'ok') return { kind: 'checked', order };
  return {
    kind: 'changed-by-supplier',
    order,
    reason: `${judged.verdict}: ${judged.reason ?? 'order and booking disagree'}`,
  };
}
