/**
 * One booking's share of a QueryOrders answer. Orders are read one by one (http-client.ts), so an order
 * that cannot be read fails only the lookups it may belong to, never the other bookings sharing the request.
 */
import { SupplierError } from './errors';
import { isTerminalOrderStatus, type SupplierProfile } from './profile';
import type { HotelOrder, OrderListing } from './schemas';

/**
 * The orders of `customerReferenceNo` in `listing`, or a SupplierInvalidResponse when an unreadable
 * order may be its own: one naming this reference, or one whose reference could not be read either,
 * unless this reference has a readable order already (one reference is one order: Book is idempotent).
 * Not found is only said when nothing unreadable could be this booking's order.
 */
export function ordersOf(listing: OrderListing, customerReferenceNo: string): HotelOrder[] {
  const mine = listing.orders.filter((o) => o.customerReferenceNo === customerReferenceNo);
  const doubtful = listing.unreadable.filter((u) =>
    u.customerReferenceNo === undefined ? mine.length === 0 : u.customerReferenceNo === customerReferenceNo,
  );
  if (doubtful.length > 0) {
    const issues = doubtful.flatMap((u) => u.issues);
    throw new SupplierError('SupplierInvalidResponse', `queryOrders: unreadable order: ${issues.join('; ')}`, {
      operation: 'queryOrders',
      issues,
    });
  }
  return mine;
}

/** Several orders listed under one reference, by reference and status only (no personal data). */
export interface OrderConflict {
  customerReferenceNo: string;
  statuses: number[];
  platformReferenceNos: string[];
  /** The status of the order read. */
  chosenStatus: number;
}

/**
 * The order a booking is judged on among those listed under its reference: a Confirmed one, else one still
 * pending (it may yet be confirmed), else the first listed. One reference is one order (Book is idempotent),
 * so more than one is a conflict for a person to see; judging on a Failed order beside a Confirmed one would
 * end the booking `failed` over an order the guest pays for.
 */
export function decidingOrder(
  orders: readonly HotelOrder[],
  profile: SupplierProfile,
): { order: HotelOrder; conflict?: OrderConflict } | undefined {
  const first = orders[0];
  if (!first) return undefined;
  const order =
    orders.find((o) => o.status === profile.orderStatus.confirmed) ??
    orders.find((o) => !isTerminalOrderStatus(profile, o.status)) ??
    first;
  if (orders.length === 1) return { order };
  return {
    order,
    conflict: {
      customerReferenceNo: order.customerReferenceNo,
      statuses: orders.map((o) => o.status),
      platformReferenceNos: orders.flatMap((o) => (o.platformReferenceNo ? [o.platformReferenceNo] : [])),
      chosenStatus: order.status,
    },
  };
}
