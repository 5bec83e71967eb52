/**
 * What the activities share: an order's view as the workflows read it, the price of a package, the headers of a
 * supplier call with the activity's cancellation signal, Book's heartbeat, and a supplier error as the
 * ApplicationFailure Temporal retries by type.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { RoomCancelPolicy } from '../api/contract/index';
import type { CallContext } from '../runtime/supplier/interface';
import { isSupplierError, type SupplierError } from '../runtime/supplier/errors';
import { countOrderConflict, type BookingMeters } from '../runtime/observability/metrics';
import type { OrderConflict } from '../runtime/supplier/orders';
import type { SupplierProfile } from '../runtime/config/supplier-profile';
import type { HotelOrder, Money, RoomRatePkg } from '../runtime/supplier/schemas';
import type { OrderView, SupplierCallContext } from './types';

/**
 * Several orders listed under one reference: one ERROR line for a person (references and statuses, never
 * personal data) and booking_order_conflicts_total. Outside an activity (plain unit tests) there is nowhere
 * to report to.
 */
export function reportOrderConflict(conflict: OrderConflict, meters?: Pick<BookingMeters, 'counter'>): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return;
  }
  context.log.error(
    `Supplier lists ${conflict.statuses.length} orders under one customer reference (statuses ` +
      `${conflict.statuses.join(', ')}); reading the one in status ${conflict.chosenStatus}. One reference ` +
      `should be one order: ask the supplier which stands.`,
    { ...conflict },
  );
  if (meters) meters.counter('orderConflicts').add(1);
  else countOrderConflict(context.metricMeter);
}

/** The price a user sees for a package: the total gross rate, else the total net rate. */
export function priceOf(pkg: RoomRatePkg | undefined): Money | undefined {
  return pkg?.totalRate?.grossRate ?? pkg?.totalRate?.netRate;
}

/** Keeps references, status and price; drops the holder and guests (personal data). */
export function viewOf(order: HotelOrder, profile: SupplierProfile): OrderView {
  const s = profile.orderStatus;
  const state: OrderView['state'] =
    order.status === s.confirmed
      ? 'confirmed'
      : order.status === s.cancelled
        ? 'cancelled'
        : order.status === s.cancelFailed
          ? 'cancel-failed'
          : order.status === s.failed
            ? 'failed'
            : 'pending';
  return stripUndefined({
    customerReferenceNo: order.customerReferenceNo,
    status: order.status,
    state,
    statusRemark: order.statusRemark,
    platformReferenceNo: order.platformReferenceNo,
    supplierReferenceNo: order.supplierReferenceNo,
    hotelConfirmNo: order.hotelConfirmNo,
    hotelId: order.hotel?.hotelId,
    checkIn: order.checkIn,
    checkOut: order.checkOut,
    price: order.grossRate ?? order.netRate,
    cancelPolicy: cancelPolicyOf(order),
  });
}

/** Each room's cancel policy; undefined when no room states one (the fee is then unknown). */
function cancelPolicyOf(order: HotelOrder): RoomCancelPolicy[] | undefined {
  const rooms = (order.rooms ?? []).map((room) => ({
    ...(room.refundableUntil ? { refundableUntil: room.refundableUntil } : {}),
    fees: (room.cancelFees ?? []).flatMap((f) => (f.until && f.fee ? [{ until: f.until, fee: f.fee }] : [])),
  }));
  return rooms.some((r) => r.refundableUntil || r.fees.length > 0) ? rooms : undefined;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The headers of a supplier call, with the activity's cancellation signal. */
export function withSignal(context: SupplierCallContext): CallContext {
  return { ...context, signal: activitySignal() };
}

/** How often Book heartbeats; the workflow's Book heartbeat timeout must be several times this. */
export const BOOK_HEARTBEAT_EVERY_MS = 2_000;

/** A heartbeat, when running inside an activity. */
export function heartbeat(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // Outside an activity (plain unit tests): nothing to report to.
  }
}

/** The activity's cancellation signal, when running inside an activity (not in plain unit tests). */
export function activitySignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/**
 * A SupplierError as an ApplicationFailure with its stable type. The listed types are not retryable
 * (retrying cannot change the answer); a rate-limit hint becomes the next retry delay.
 */
export function toFailure(err: unknown, nonRetryable: readonly string[]): ApplicationFailure {
  if (!isSupplierError(err)) {
    return err instanceof ApplicationFailure
      ? err
      : ApplicationFailure.create({ type: 'UnexpectedError', message: String((err as Error)?.message ?? err) });
  }
  const e: SupplierError = err;
  return ApplicationFailure.create({
    type: e.type,
    message: e.message,
    nonRetryable: nonRetryable.includes(e.type),
    nextRetryDelay: e.details.retryAfterMs,
    details: [
      {
        operation: e.details.operation,
        httpStatus: e.details.httpStatus,
        code: e.details.code,
      },
    ],
    cause: e,
  });
}
