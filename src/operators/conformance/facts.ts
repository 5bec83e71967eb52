/**
 * What the scenarios learn and hand on to the ones after them (the order booked, the statuses it went through,
 * every order and package read), and following an order with QueryOrders while it settles.
 */
import { isTerminalOrderStatus } from '../../runtime/config/supplier-profile';
import type { HotelOrder } from '../../runtime/supplier/schemas';
import { attempt } from './scenarios/common';
import { describeError } from './session';
import type { Facts, RunContext, UnreadableSeen } from './types';

export type { Facts, MainOrder, UnreadableSeen } from './types';

export function emptyFacts(): Facts {
  return {
    checkAvail: {},
    orders: [],
    packages: [],
    references: [],
    windowsIgnored: [],
    unreadable: {},
    rawOrders: [],
  };
}

/** How following an order ended. */
export interface Followed {
  order?: HotelOrder;
  /** Each status listed, in order, without repeats. */
  statuses: number[];
  /** When the first answer listing it came (epoch ms). */
  listedAtMs?: number;
  settled: boolean;
  queries: number;
  /** The most orders one answer listed under the reference: more than one is a second order. */
  mostUnderReference: number;
  /** QueryOrders requests that failed on the way (asked again at the next poll). */
  failures: string[];
  /** An order listed under the reference that the product cannot read: it exists, and following it ends. */
  unreadable?: UnreadableSeen;
}

/**
 * Where a followed order starts: the status it was last seen in, and whether it may settle there. A Book's answer
 * may already be final (`mayStay`); a Cancel's order must move.
 */
export interface FollowFrom {
  status?: number;
  mayStay: boolean;
}

/**
 * Polls QueryOrders by reference until the order settles, or the settle timeout passes:
 *  - it moved from `from.status` into a status the profile calls final;
 *  - or into a status the profile does not know at all, held for three answers and `stableAfterMs` (a supplier
 *    whose numbers differ from the profile's has final statuses the profile does not know);
 *  - or, when it may stay, it is still where it started: in the profile's Confirmed for three answers (a supplier that
 *    confirms at once), or in another status the profile calls final or does not know, held three answers and
 *    `stableAfterMs` (a supplier's pending may be a number the profile calls Cancelled or Failed).
 * A status the profile reads as pending (Unknown, Confirming) never settles: the profile says wait, and the kit
 * cannot tell a supplier that is slow from one whose Confirmed is that number.
 */
export async function followOrder(ctx: RunContext, ref: string, from: FollowFrom): Promise<Followed> {
  const started = Date.now();
  const seen: Followed = { statuses: [], settled: false, queries: 0, mostUnderReference: 0, failures: [] };
  const held = { answers: 0, sinceMs: 0 };
  for (let wait = 0; ; wait = nextWait(wait, ctx.polling)) {
    if (wait > 0) await sleep(wait);
    const found = await listOnce(ctx, ref, seen);
    if (seen.unreadable) return seen;
    if (found) {
      if (found.status === seen.order?.status) held.answers++;
      else Object.assign(held, { answers: 1, sinceMs: Date.now() });
      note(seen, found);
      if (settledAt(ctx, found.status, from, held)) return { ...seen, settled: true };
    }
    if (Date.now() - started + nextWait(wait, ctx.polling) > ctx.polling.settleTimeoutMs) return seen;
  }
}

function settledAt(
  ctx: RunContext,
  status: number,
  from: FollowFrom,
  held: { answers: number; sinceMs: number },
): boolean {
  const s = ctx.profile.orderStatus;
  const stable = held.answers >= 3 && Date.now() - held.sinceMs >= ctx.polling.stableAfterMs;
  const final = isTerminalOrderStatus(ctx.profile, status);
  const known = Object.values(s).includes(status);
  if (status === from.status) {
    if (!from.mayStay) return false;
    // The profile's own Confirmed, read the same three times: a supplier that confirms at once needs no longer wait.
    if (status === s.confirmed) return held.answers >= 3;
    return (final || !known) && stable;
  }
  return final || (!known && stable);
}

const nextWait = (wait: number, polling: RunContext['polling']) =>
  wait === 0 ? polling.firstIntervalMs : Math.min(wait * 2, polling.maxIntervalMs);

/**
 * One QueryOrders by reference: the order listed under it, if any. A failed request is noted and asked again at the
 * next poll, as the product does; only the run stopping (budget, rate limit) ends the following.
 */
async function listOnce(ctx: RunContext, ref: string, seen: Followed): Promise<HotelOrder | undefined> {
  seen.queries++;
  const got = await attempt(() => ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref }));
  if (!got.ok) {
    seen.failures.push(describeError(got.error));
    return undefined;
  }
  const mine = got.value.orders.filter((o) => o.customerReferenceNo === ref);
  const unreadable = got.value.unreadable.filter((u) => u.customerReferenceNo === ref);
  if (mine.length === 0 && unreadable.length > 0) {
    seen.listedAtMs ??= Date.now();
    seen.unreadable = await readAsSent(
      ctx,
      ref,
      unreadable.flatMap((u) => u.issues),
    );
    return undefined;
  }
  seen.mostUnderReference = Math.max(seen.mostUnderReference, mine.length);
  if (mine[0]) ctx.facts.orders.push(mine[0]);
  return mine[0];
}

function note(seen: Followed, order: HotelOrder): void {
  seen.listedAtMs ??= Date.now();
  if (seen.statuses[seen.statuses.length - 1] !== order.status) seen.statuses.push(order.status);
  seen.order = order;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * An order listed under `ref` that the product could not read: noted for the report and the clean-up, with its status
 * and supplier reference as sent (one more QueryOrders, read without the product's schema).
 */
export async function readAsSent(ctx: RunContext, ref: string, issues: string[]): Promise<UnreadableSeen> {
  const known = ctx.facts.unreadable[ref];
  if (known?.statusAsSent !== undefined) return known;
  const [raw] = await ctx.session.ordersAsSent(ref);
  const seen: UnreadableSeen = {
    issues,
    ...(raw ? { statusAsSent: JSON.stringify(raw.status) } : {}),
    ...(raw && typeof raw.supplierReferenceNo === 'string' ? { supplierReferenceNo: raw.supplierReferenceNo } : {}),
  };
  ctx.facts.unreadable[ref] = seen;
  return seen;
}
