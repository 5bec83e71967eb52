/**
 * Cancel: a wrong supplier reference (refused, nothing cancelled), the confirmed main order (taken, then
 * Cancelled), the fee charged against the policy the order listed, and a Cancel of the order already cancelled.
 * The wrong reference goes first, while the order is still confirmed, so "nothing cancelled" can be seen.
 */
import { classifyCancelFailure } from '../../../runtime/rules/cancel';
import { viewOf } from '../../../activities/shared';
import type { HotelOrder } from '../../../runtime/supplier/schemas';
import { cancelFeeAt } from '../../../runtime/rules/cancel-fee';
import { followOrder } from '../facts';
import { describeError } from '../session';
import type { Outcome, RunContext, Scenario } from '../types';
import { attempt } from './common';

const REASON = 'Conformance test: cancelling a test booking';

/** The settled main order, when it can be cancelled: listed, with a supplier reference. */
function cancellable(ctx: RunContext): HotelOrder | string {
  const order = ctx.facts.main?.settled;
  if (!order) return 'no settled main order';
  if (!order.supplierReferenceNo) return 'the main order has no supplierReferenceNo';
  return order;
}

async function statusNow(ctx: RunContext, ref: string): Promise<number | undefined> {
  const listing = await ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref });
  const order = listing.orders.find((o) => o.customerReferenceNo === ref);
  if (order) ctx.facts.orders.push(order);
  return order?.status;
}

export const cancelWrongReference: Scenario = {
  id: 'cancel.wrongSupplierReference',
  title: 'Cancel with a wrong supplier reference: refused, nothing cancelled',
  plan: () => ['Cancel the main order with a made-up supplierReferenceNo', 'QueryOrders by its reference'],
  expected: (p) =>
    `a refusal the profile believes (HTTP ${p.cancel.surelyNotDoneStatuses.join('/')} or code ` +
    `${p.cancel.surelyNotDoneCodes.join(', ')}), and the order unchanged`,
  async run(ctx) {
    const order = cancellable(ctx);
    if (typeof order === 'string') return { result: 'skipped', observed: order };
    const ref = order.customerReferenceNo;
    const wrong = {
      customerReferenceNo: ref,
      supplierReferenceNo: `CONFORMANCE-WRONG-${ref.slice(0, 8)}`,
      reason: REASON,
    };
    const got = await attempt(() => ctx.session.supplier.cancel(wrong, ctx.session.context()));
    const after = await statusNow(ctx, ref);
    const unchanged = after === order.status;
    const state = unchanged ? 'the order unchanged' : `the order now in status ${after ?? '(not listed)'}`;
    if (!unchanged) {
      ctx.facts.cancelledByWrongReference = true;
      return {
        result: 'differs',
        observed: `${got.ok ? 'taken' : describeError(got.error)}, ${state}: the supplier cancels by customer reference alone (the product always sends the right one)`,
      };
    }
    if (got.ok)
      return {
        result: 'differs',
        observed: `answered success, ${state}: the product reads the order back after any success (tolerated)`,
      };
    const reading = classifyCancelFailure(got.error, ctx.profile).kind;
    if (reading === 'rejected') return { result: 'pass', observed: `${describeError(got.error)}, ${state}` };
    return {
      result: 'differs',
      observed: `${describeError(got.error)}, ${state}: the product reads it as "may have cancelled" and reads the order back (tolerated)`,
    };
  },
};

export const cancelConfirmed: Scenario = {
  id: 'cancel.confirmed',
  title: 'Cancel of a confirmed order: taken, then Cancelled',
  plan: () => ['Cancel the main order', 'QueryOrders by its reference until the cancellation settles'],
  expected: (p) =>
    `code ${p.codes.success} with the service fee and a status, then the order in status ${p.orderStatus.cancelled} (Cancelled)`,
  async run(ctx) {
    const order = cancellable(ctx);
    if (typeof order === 'string') return { result: 'skipped', observed: order };
    const quote = cancelFeeAt(viewOf(order, ctx.profile).cancelPolicy, Date.now(), order.grossRate?.currency);
    const request = {
      customerReferenceNo: order.customerReferenceNo,
      supplierReferenceNo: order.supplierReferenceNo!,
      reason: REASON,
    };
    const got = await attempt(() => ctx.session.supplier.cancel(request, ctx.session.context()));
    if (!got.ok && classifyCancelFailure(got.error, ctx.profile).kind === 'rejected') {
      return { result: 'differs', observed: `${describeError(got.error)} to a Cancel of a confirmed order: refused` };
    }
    // Any other ending may have cancelled: read back, as the product does.
    const followed = await followOrder(ctx, order.customerReferenceNo, { status: order.status, mayStay: false });
    // A cancellation the hotel refused (CancelFailed) leaves no cancelled order for the clauses after this one.
    const refusedByHotel = followed.order?.status === ctx.profile.orderStatus.cancelFailed;
    const settled = followed.settled && !refusedByHotel ? followed.order : undefined;
    ctx.facts.cancel = {
      answer: got.ok ? got.value : undefined,
      quotedFee: quote.fee,
      statuses: followed.statuses,
      settled,
    };
    const outcome = judgeCancelled(
      ctx,
      got.ok ? got.value.status : undefined,
      followed.order?.status,
      followed.settled,
    );
    if (got.ok || outcome.result !== 'pass') return outcome;
    return {
      result: 'differs',
      observed: `answered ${describeError(got.error)}, yet ${outcome.observed}: the product reads such an answer as "may have cancelled" and reads the order back (tolerated)`,
    };
  },
};

function judgeCancelled(
  ctx: RunContext,
  answered: number | undefined,
  status: number | undefined,
  settled: boolean,
): Outcome {
  const seen = `${answered !== undefined ? `answered status ${answered}; ` : ''}the order then in status ${status ?? '(not listed)'}`;
  if (!settled) return { result: 'differs', observed: `${seen}, not settled within the settle timeout` };
  if (status === ctx.profile.orderStatus.cancelled) return { result: 'pass', observed: seen };
  if (status === ctx.profile.orderStatus.cancelFailed) {
    return {
      result: 'differs',
      observed: `${seen}: the hotel refused the cancellation (CancelFailed); run again to see a Cancel go through`,
    };
  }
  return { result: 'differs', observed: `${seen} (see orders.statuses)` };
}

export const cancelFee: Scenario = {
  id: 'cancel.fee',
  title: "Cancel: the fee charged is the one the order's policy lists",
  offline: true,
  plan: () => ['(no request: reads the Cancel above)'],
  expected: () =>
    "serviceFee equal to the fee the product quotes from the order's refundableUntil and cancelFees at the moment of the Cancel",
  async run(ctx) {
    const c = ctx.facts.cancel;
    if (!c) return { result: 'skipped', observed: 'no Cancel was taken' };
    if (!c.answer) return { result: 'skipped', observed: 'the Cancel answered no fee (see cancel.confirmed)' };
    const charged = c.answer.serviceFee;
    if (!c.quotedFee)
      return {
        result: 'skipped',
        observed: `the order's policy does not say the fee now (a person would decide); charged ${money(charged)}`,
      };
    if (!charged)
      return {
        result: 'differs',
        observed: `no serviceFee in the answer (quoted ${money(c.quotedFee)}): the product cannot check what was charged`,
      };
    const same = charged.currency === c.quotedFee.currency && Math.abs(charged.amount - c.quotedFee.amount) < 0.005;
    if (same) return { result: 'pass', observed: `charged ${money(charged)}, as quoted` };
    const above = charged.currency !== c.quotedFee.currency || charged.amount > c.quotedFee.amount;
    return {
      result: above ? 'blocker' : 'differs',
      observed:
        `charged ${money(charged)} where the policy listed says ${money(c.quotedFee)}` +
        (above
          ? ': the product would accept cancellations at fees it cannot foresee; no profile changes the policy arithmetic'
          : ' (less: harmless)'),
    };
  },
};

const money = (m?: { amount: number; currency: string } | null) => (m ? `${m.amount} ${m.currency}` : '(none)');

export const cancelRepeat: Scenario = {
  id: 'cancel.repeat',
  title: 'Cancel of an order already cancelled',
  plan: () => ['Cancel the main order again', 'QueryOrders by its reference'],
  expected: (p) =>
    `the first answer again without a second charge, or a refusal (HTTP ${p.cancel.surelyNotDoneStatuses.join('/')}); ` +
    'either way the order stays cancelled',
  async run(ctx) {
    const order = ctx.facts.cancel?.settled;
    if (!order || !order.supplierReferenceNo) return { result: 'skipped', observed: 'no cancelled main order' };
    const request = {
      customerReferenceNo: order.customerReferenceNo,
      supplierReferenceNo: order.supplierReferenceNo,
      reason: REASON,
    };
    const got = await attempt(() => ctx.session.supplier.cancel(request, ctx.session.context()));
    const after = await statusNow(ctx, order.customerReferenceNo);
    const state =
      after === order.status ? 'the order still cancelled' : `the order now in status ${after ?? '(not listed)'}`;
    if (after !== order.status)
      return { result: 'differs', observed: `${got.ok ? 'taken' : describeError(got.error)}, ${state}` };
    if (got.ok) {
      const first = ctx.facts.cancel!.answer?.serviceFee;
      const again = got.value.serviceFee;
      // A first answer without a fee gives nothing to compare the repeat's with.
      const same = !first || money(first) === money(again);
      return same
        ? { result: 'pass', observed: `answered as the first (fee ${money(again)}), ${state}` }
        : {
            result: 'differs',
            observed: `answered fee ${money(again)} where the first said ${money(first)}, ${state}: charged twice?`,
          };
    }
    const reading = classifyCancelFailure(got.error, ctx.profile).kind;
    const why =
      reading === 'rejected'
        ? 'a refusal after a send that may have acted is settled by QueryOrders, which shows it cancelled'
        : 'the product reads it as "may have cancelled" and reads the order back';
    return {
      result: reading === 'rejected' ? 'pass' : 'differs',
      observed: `${describeError(got.error)}, ${state}: ${why}`,
    };
  },
};
