/**
 * Cancel (supplier-facts): taken at once, settled later (Cancelled, or CancelFailed with `cancel=failed`);
 * the service fee is what the order's cancel policy charges now. A repeat for an order already being
 * cancelled answers the same, without a second charge.
 */
import { CancelRequest, type HotelOrder } from '../../../src/runtime/supplier/schemas';
import { cancelFeeAt } from '../../../src/runtime/rules/cancel-fee';
import { scheduleCallback } from '../callbacks';
import { envelope, faultAnswer, header, HttpAnswer } from '../http';
import { parseTestHeader, retryAfterValue, type CancelFault, type TestFlags } from '../scenario';
import type { CallInProgress, OperationHandler, SandboxState } from '../state';
import type { StoredOrder } from '../store';

/** Answers a Cancel: a fault or refusal first; else the Cancel is taken (once) and its fee and status answered. */
export const cancel: OperationHandler = async (state, req, res, call) => {
  const { codes } = state;
  const principal = state.principalFor(req, 'trade');
  state.sessionOf(req, call);
  const body = await state.bodyOf(req, CancelRequest);
  call.customerReferenceNos = [body.customerReferenceNo];
  state.limit(principal, 'cancel');
  const order = state.store.get(body.customerReferenceNo);
  // Cancel faults from the Cancel's own Test header, else from the Book's (an order run sends none of its own).
  const cancelHeader = header(req, 'test');
  const flags = parseTestHeader(cancelHeader ?? order?.test);
  const n = (state.cancelCount.get(body.customerReferenceNo) ?? 0) + 1;
  state.cancelCount.set(body.customerReferenceNo, n);
  const fault = flags.cancel && (flags.cancelTimes === undefined || n <= flags.cancelTimes) ? flags.cancel : undefined;
  if (fault) call.fault = fault;
  const refused = refusal(state, { fault, order, body, flags, call });
  if (refused?.status === 429) {
    const retryAfter = retryAfterValue(flags, state.now());
    if (retryAfter) res.setHeader('retry-after', retryAfter);
  }
  if (refused) return refused;
  const taken = order!;
  if (!taken.cancel) takeCancel(state, taken, body, flags);
  if (fault === 'unknownCode') return new HttpAnswer(200, envelope(100009997, 'cancel queued'));
  if (fault === '504AfterAccept') return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
  return new HttpAnswer(
    200,
    envelope(codes.success, 'Success', { serviceFee: taken.cancel!.serviceFee, status: state.store.statusOf(taken) }),
  );
};

/** The answer of a Cancel that takes nothing: a fault before taking, no such order, or one that cannot be cancelled. */
function refusal(
  state: SandboxState,
  c: {
    fault: CancelFault | undefined;
    order: StoredOrder | undefined;
    body: CancelRequest;
    flags: TestFlags;
    call: CallInProgress;
  },
): HttpAnswer | undefined {
  const { codes } = state;
  const { fault, order } = c;
  if (fault === '429') return faultAnswer(codes, '429')!;
  if (fault === 'refuse') return new HttpAnswer(400, envelope(codes.badRequest, 'order cannot be cancelled'));
  if (fault === 'lost') return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
  if (!order) return new HttpAnswer(404, envelope(codes.notFound, 'order not found'));
  if (order.supplierReferenceNo !== c.body.supplierReferenceNo) {
    return new HttpAnswer(400, envelope(codes.badRequest, 'supplierReferenceNo does not match the order'));
  }
  const status = state.store.statusOf(order);
  if (order.cancel && c.flags.cancelRepeat === 'refuse') {
    c.call.fault = 'cancelRepeat';
    return new HttpAnswer(400, envelope(codes.badRequest, `order in status ${status} cannot be cancelled`));
  }
  if (!order.cancel && status !== state.profile.orderStatus.confirmed) {
    return new HttpAnswer(400, envelope(codes.badRequest, `order in status ${status} cannot be cancelled`));
  }
  return undefined;
}

/** Takes the Cancel: charged the policy's fee at this moment, settling as the `Test` header says. */
function takeCancel(state: SandboxState, order: StoredOrder, body: CancelRequest, flags: TestFlags): void {
  const now = state.now;
  const quote = cancelFeeAt(cancelPolicyOf(state.store.toHotelOrder(order)), now(), order.price.currency);
  order.cancel = {
    requestedAt: now(),
    reason: body.reason,
    outcome: flags.cancel === 'failed' ? 'cancelFailed' : flags.cancel === 'pending' ? 'pending' : 'cancelled',
    afterMs: flags.cancelAfterMs ?? flags.confirmAfterMs ?? state.runtime.confirmAfterMs,
    ...(flags.cancelAfterQueries !== undefined ? { afterQueries: flags.cancelAfterQueries } : {}),
    queriesAtRequest: order.queriesSeen,
    serviceFee: quote.fee ?? order.price,
  };
  scheduleCallback(state, order);
}

/** The rooms' cancel policies, read as the worker reads them (src/activities/booking.ts). */
function cancelPolicyOf(order: HotelOrder) {
  return (order.rooms ?? []).map((room) => ({
    ...(room.refundableUntil ? { refundableUntil: room.refundableUntil } : {}),
    fees: (room.cancelFees ?? []).flatMap((f) => (f.until && f.fee ? [{ until: f.until, fee: f.fee }] : [])),
  }));
}
