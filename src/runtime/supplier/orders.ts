/**
 * One booking's share of a QueryOrders answer. Orders are read one by one (http-client.ts), so an order
 * that cannot be read fails only the lookups it may belong to, never the other bookings sharing the request.
 */
import { SupplierError } from './errors';
import { isTerminalOrderStatus, type SupplierProfile } from '../config/supplier-profile';
import type { HotelOrder, OrderListing } from './schemas';

/**
 * The orders of `customerReferenceNo` in `listing`, or a SupplierInvalidResponse while another listed order may be
 * the booking's own and what it would decide is not settled already:
 *  - an unreadable order naming this reference: always;
 *  - an unreadable order whose reference could not be read either, or a readable one listed under this reference
 *    written another way (other letter case, spaces around it: a supplier that normalises what it stores): unless
 *    this reference has a Confirmed order of its own. A Failed or pending order of its own is no proof, since the
 *    order that counts may be that other one, and "not found" beside one would send Book again.
 * Not found is only said when nothing listed could be this booking's order.
 */
export function ordersOf(
  listing: OrderListing,
  customerReferenceNo: string,
  profile: Pick<SupplierProfile, 'orderStatus'>,
): HotelOrder[] {
  const mine = listing.orders.filter((o) => o.customerReferenceNo === customerReferenceNo);
  const named = listing.unreadable.filter((u) => u.customerReferenceNo === customerReferenceNo);
  if (named.length > 0) throw unreadable(named.flatMap((u) => u.issues));
  if (mine.some((o) => o.status === profile.orderStatus.confirmed)) return mine;
  const loosely = (ref: string | undefined) =>
    ref !== undefined && ref !== customerReferenceNo && looseKey(ref) === looseKey(customerReferenceNo);
  const maybe = [
    ...listing.unreadable.filter((u) => u.customerReferenceNo === undefined).flatMap((u) => u.issues),
    ...[...listing.orders, ...listing.unreadable]
      .filter((o) => loosely(o.customerReferenceNo))
      .map(() => 'an order listed under this reference in other letter case or with spaces around it'),
  ];
  if (maybe.length > 0) throw unreadable(maybe);
  return mine;
}

/** A reference as a supplier that normalises it might store it. */
const looseKey = (ref: string) => ref.trim().toLowerCase();

function unreadable(issues: string[]): SupplierError {
  return new SupplierError('SupplierInvalidResponse', `queryOrders: unreadable order: ${issues.join('; ')}`, {
    operation: 'queryOrders',
    issues,
  });
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
