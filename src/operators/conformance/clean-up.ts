/**
 * After the last scenario: every order the kit made, read once more and cancelled when it is not final, so a test
 * environment is left as found; an order the kit could not cancel is flagged as left at the supplier.
 */
import type { SupplierProfile } from '../../runtime/config/supplier-profile';
import { readAsSent, type Facts } from './facts';
import { attempt } from './scenarios/common';
import { describeError, StopRun } from './session';
import type { RunContext } from './types';

/** An order the kit made: where it was last seen, and whether it is left at the supplier. */
export interface OrderMade {
  customerReferenceNo: string;
  /** The status last listed (a number, or as sent when the product could not read it); undefined when never listed. */
  lastStatus?: string;
  /** `final`: failed or cancelled; `cancelled`: the kit cancelled it now; `left`: still at the supplier (see note). */
  state: 'final' | 'cancelled' | 'left';
  note: string;
}

const REASON = 'Conformance run clean-up: test booking';

export async function cleanUp(ctx: RunContext): Promise<OrderMade[]> {
  const made: OrderMade[] = [];
  for (const ref of [...new Set(ctx.facts.references)]) made.push(await cleanOne(ctx, ref));
  return made;
}

async function cleanOne(ctx: RunContext, ref: string): Promise<OrderMade> {
  try {
    const got = await attempt(() =>
      ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref }),
    );
    if (!got.ok) return left(ref, lastKnown(ctx.facts, ref), `not read at the end (${describeError(got.error)})`);
    const order = got.value.orders.find((o) => o.customerReferenceNo === ref);
    const unreadable = got.value.unreadable.filter((u) => u.customerReferenceNo === ref);
    if (!order && unreadable.length > 0) {
      const u = await readAsSent(
        ctx,
        ref,
        unreadable.flatMap((x) => x.issues),
      );
      const status = `${u.statusAsSent ?? '(not read)'} (as sent, unreadable)`;
      return cancel(ctx, ref, status, u.supplierReferenceNo);
    }
    if (!order) return { customerReferenceNo: ref, state: 'final', note: 'not listed at the end: nothing to cancel' };
    if (isFinal(ctx.profile, ctx.facts, order.status))
      return { customerReferenceNo: ref, lastStatus: String(order.status), state: 'final', note: 'nothing to cancel' };
    return cancel(ctx, ref, String(order.status), order.supplierReferenceNo);
  } catch (err) {
    if (err instanceof StopRun) return left(ref, lastKnown(ctx.facts, ref), `not cancelled: ${err.message}`);
    throw err;
  }
}

async function cancel(ctx: RunContext, ref: string, status: string, supplierRef?: string): Promise<OrderMade> {
  if (!supplierRef) return left(ref, status, 'not cancelled: it carries no supplierReferenceNo, which Cancel needs');
  const request = { customerReferenceNo: ref, supplierReferenceNo: supplierRef, reason: REASON };
  const got = await attempt(() => ctx.session.supplier.cancel(request, ctx.session.context()));
  if (!got.ok) return left(ref, status, `Cancel answered ${describeError(got.error)}`);
  return {
    customerReferenceNo: ref,
    lastStatus: String(got.value.status),
    state: 'cancelled',
    note: `cancelled by the kit from status ${status}; Cancel answered status ${got.value.status}`,
  };
}

const left = (ref: string, status: string | undefined, note: string): OrderMade => ({
  customerReferenceNo: ref,
  ...(status !== undefined ? { lastStatus: status } : {}),
  state: 'left',
  note: `left at the supplier: ${note}; cancel it by hand`,
});

/** Failed or cancelled: by the profile's numbers, or by the numbers this run saw a Cancel or a rejection end in. */
function isFinal(profile: SupplierProfile, facts: Facts, status: number): boolean {
  const s = profile.orderStatus;
  return [s.cancelled, s.failed, facts.cancel?.settled?.status, facts.rejectedStatus].includes(status);
}

function lastKnown(facts: Facts, ref: string): string | undefined {
  const u = facts.unreadable[ref];
  if (u) return `${u.statusAsSent ?? '(not read)'} (as sent, unreadable)`;
  const seen = facts.orders.filter((o) => o.customerReferenceNo === ref);
  return seen.length ? String(seen[seen.length - 1]!.status) : undefined;
}
