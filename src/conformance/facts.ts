/**
 * What the scenarios learn and hand on to the ones after them (the order booked, the statuses it went through,
 * every order and package read), and following an order with QueryOrders while it settles.
 */
import { isTerminalOrderStatus, type SupplierProfile } from '../supplier/profile';
import type { CancelData, HotelOrder, RoomRatePkg } from '../supplier/schemas';
import type { RunContext } from './types';

/** The order the kit booked and follows through cancellation. */
export interface MainOrder {
  customerReferenceNo: string;
  ratePkgId: string;
  /** Book's answer; undefined when Book answered an error and the order is looked for with QueryOrders. */
  booked?: HotelOrder;
  bookedAtMs: number;
  /** The order as last listed, once settled. */
  settled?: HotelOrder;
  /** Statuses in the order seen: Book's answer, then each new one QueryOrders listed. */
  statuses: number[];
  /** Milliseconds from Book's answer to the first QueryOrders that listed it; undefined while never listed. */
  listedAfterMs?: number;
}

export interface Facts {
  main?: MainOrder;
  /** The Cancel of the main order: its answer, the fee the product's rule quoted before it, the statuses after. */
  cancel?: {
    answer?: CancelData;
    quotedFee?: { amount: number; currency: string } | null;
    statuses: number[];
    settled?: HotelOrder;
  };
  /** A Cancel with a wrong supplier reference changed the order. */
  cancelledByWrongReference?: boolean;
  /** The status an order rejected at Book ended in, when one was made. */
  rejectedStatus?: number;
  /** CheckAvail statuses seen: the available package's, and the sold-out scenario's. */
  checkAvail: { available?: number; unavailable?: number };
  /** Every order and rate package read, for the field and timestamp clauses. */
  orders: HotelOrder[];
  packages: RoomRatePkg[];
  /** The most orders one QueryOrders answer listed, for the page-size clause. */
  largestListing?: number;
  /** References of orders the kit made, for the report (a test environment's orders to clean up). */
  references: string[];
}

export function emptyFacts(): Facts {
  return { checkAvail: {}, orders: [], packages: [], references: [] };
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
 * Polls QueryOrders by reference until the order settles: it moved from `from.status` into a status the profile
 * calls final, or into any status that then holds for three answers in a row (a supplier whose codes differ from
 * the profile's has final statuses the profile does not know, and pending ones the profile calls final). An order
 * that may stay settles where it started once three answers in a row show it there and the profile calls that final.
 * Gives up after the settle timeout.
 */
export async function followOrder(ctx: RunContext, ref: string, from: FollowFrom): Promise<Followed> {
  const { session, polling, profile } = ctx;
  const started = Date.now();
  const statuses: number[] = [];
  let order: HotelOrder | undefined;
  let listedAtMs: number | undefined;
  let same = 0;
  let most = 0;
  let wait = 0;
  for (let queries = 1; ; queries++) {
    if (wait > 0) await sleep(wait);
    wait = wait === 0 ? polling.firstIntervalMs : Math.min(wait * 2, polling.maxIntervalMs);
    const listing = await session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref });
    const mine = listing.orders.filter((o) => o.customerReferenceNo === ref);
    most = Math.max(most, mine.length);
    const found = mine[0];
    if (found) {
      ctx.facts.orders.push(found);
      listedAtMs ??= Date.now();
      same = found.status === order?.status ? same + 1 : 0;
      if (statuses[statuses.length - 1] !== found.status) statuses.push(found.status);
      order = found;
      if (settledAt(profile, found.status, from, same))
        return { order, statuses, listedAtMs, settled: true, queries, mostUnderReference: most };
    }
    if (Date.now() - started + wait > polling.settleTimeoutMs) {
      return { order, statuses, listedAtMs, settled: false, queries, mostUnderReference: most };
    }
  }
}

function settledAt(profile: SupplierProfile, status: number, from: FollowFrom, same: number): boolean {
  const final = isTerminalOrderStatus(profile, status);
  if (status === from.status) return from.mayStay && final && same >= 2;
  return final || same >= 2;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
