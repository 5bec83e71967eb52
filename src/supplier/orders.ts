/**
 * One booking's share of a QueryOrders answer. Orders are read one by one (http-client.ts), so an order
 * that cannot be read fails only the lookups it may belong to, never the other bookings sharing the request.
 */
import { SupplierError } from './errors';
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
