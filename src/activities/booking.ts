/**
 * The booking activities: thin adapters from the workflow to the supplier client.
 *
 * Built by a factory over an injected client, so tests and the worker choose the client and nothing
 * is created at import time. Expected business answers (sold out, price changed, rejected, pending,
 * not found) are returned as values; only failures are thrown, as ApplicationFailures whose `type` is
 * the stable SupplierErrorType, so the workflow and retry policies decide by type, never by text.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { validateBookingRequest, type OrderSummary, type RequestValidation, type RoomCancelPolicy } from '../contract';
import type { QueryOrdersCoalescer } from '../supplier/coalescer';
import type { CallContext, SupplierClient } from '../supplier/interface';
import { isSupplierError, type SupplierError } from '../supplier/errors';
import { countOrderConflict, type BookingMeters } from '../observability/metrics';
import { decidingOrder, ordersOf, type OrderConflict } from '../supplier/orders';
import { classifyBookFailure } from './book-rule';
import type { SupplierProfile } from '../supplier/profile';
import type { Guest, Holder, HotelOrder, Money, RoomRatePkg } from '../supplier/schemas';

export interface ActivityDeps {
  supplier: SupplierClient;
  profile: SupplierProfile;
  /** Shares QueryOrders requests between concurrent lookups; without it each lookup sends its own. */
  orders?: Pick<QueryOrdersCoalescer, 'lookup'>;
  /** Sent with every Book, so the supplier calls back on status changes (src/callbacks); none when unset. */
  callbackUrl?: string;
  /** Accept requests with `recovery.testing` (settings below the production floors): test workers only. */
  recoveryTesting?: boolean;
  /** The worker's meters (booking_order_conflicts_total on the series it starts at 0); else the activity's meter. */
  meters?: Pick<BookingMeters, 'counter'>;
}

/** The request headers an activity sends, minus the abort signal it adds itself. */
export interface SupplierCallContext {
  sessionId: string;
  traceId: string;
  currency?: string;
  language?: string;
  ip?: string;
  test?: string;
}

export interface CheckAvailInput {
  ratePkgId: string;
  context: SupplierCallContext;
}
export type CheckAvailOutcome =
  | { kind: 'available'; price?: Money }
  | { kind: 'unavailable'; status: number }
  /** Price or inventory changed; `price` is absent when the supplier sent no package with it. */
  | { kind: 'ari-changed'; price?: Money };

/** A new booking's first step: its raw input, and the two headers the workflow derives for every supplier call. */
export interface CheckRequestAndAvailInput {
  request: unknown;
  sessionId: string;
  traceId: string;
}
/** The input check, and when the request is valid, the first CheckAvail's answer. */
export type CheckRequestAndAvailOutcome =
  | { validation: Extract<RequestValidation, { valid: false }> }
  | { validation: Extract<RequestValidation, { valid: true }>; availability: CheckAvailOutcome };

export interface BookInput {
  customerReferenceNo: string;
  ratePkgId: string;
  holder: Holder;
  guests: Guest[];
  context: SupplierCallContext;
}
/** How Book ended; the rule is ./book-rule.ts. */
export type BookOutcome =
  | { kind: 'order'; order: OrderView }
  /** Refused before any work (429, connection never opened): nothing exists; send again after the hint. */
  | { kind: 'refused'; errorType: string; message: string; retryAfterMs?: number }
  /** Surely not made (only what the profile's `book.surelyNotMade*` lists): no order can exist for this call. */
  | { kind: 'rejected'; errorType: string; message: string }
  /** The supplier may have acted: the order must be looked up. */
  | { kind: 'ambiguous'; errorType: string; message: string };

export interface QueryOrderInput {
  customerReferenceNo: string;
  traceId: string;
}
export type QueryOrderOutcome = { kind: 'found'; order: OrderView } | { kind: 'not-found' };

/** An order as the workflow sees it: the summary plus a profile-independent reading of its status. */
export interface OrderView extends OrderSummary {
  /** `cancelled` and `cancel-failed` are endings too: a booking reads them as failed, an order workflow apart. */
  state: 'pending' | 'confirmed' | 'failed' | 'cancelled' | 'cancel-failed';
}

export function createActivities({
  supplier,
  profile,
  orders: coalescer,
  callbackUrl,
  recoveryTesting,
  meters,
}: ActivityDeps) {
  /**
   * The workflow's input check, run as a local activity: here the contract's zod schemas are built
   * once per worker, where in the workflow sandbox every cached workflow would build its own copy
   * (~3 MB and ~40 ms of CPU each, measured by bench parked). No supplier call; pure and fast.
   */
  const validate = async (input: unknown): Promise<RequestValidation> =>
    validateBookingRequest(input, { recoveryTesting: recoveryTesting === true, testHeader: profile.testHeader });

  const checkAvail = async ({ ratePkgId, context }: CheckAvailInput): Promise<CheckAvailOutcome> => {
    try {
      const data = await supplier.checkAvail({ ratePkgId }, withSignal(context));
      if (data.status !== profile.checkAvailStatus.available) return { kind: 'unavailable', status: data.status };
      return { kind: 'available', price: priceOf(data.roomRatePkg) };
    } catch (err) {
      if (isSupplierError(err) && err.type === 'SupplierAriChanged') return { kind: 'ari-changed' };
      throw toFailure(err, ['SupplierBadRequest', 'SupplierForbidden', 'SupplierUnauthorized']);
    }
  };

  return {
    validateBookingRequest: validate,
    checkAvail,

    /**
     * A new booking's first step in one local activity: the input check, then (valid only) CheckAvail. One
     * activity instead of two saves the booking a marker event and a workflow activation, the largest share of
     * its CPU over its floor (docs/performance.md). Only reads: run again on retry, the check costs microseconds.
     * The headers are the ones the workflow's run sends (src/workflows/booking/run.ts, newRun): the request's
     * context with the session and trace ids the workflow derived.
     */
    async checkRequestAndAvail({
      request,
      sessionId,
      traceId,
    }: CheckRequestAndAvailInput): Promise<CheckRequestAndAvailOutcome> {
      const validation = await validate(request);
      if (!validation.valid) return { validation };
      const { ratePkgId, context } = validation.request;
      return { validation, availability: await checkAvail({ ratePkgId, context: { ...context, sessionId, traceId } }) };
    },

    async book(input: BookInput): Promise<BookOutcome> {
      const { customerReferenceNo, ratePkgId, holder, guests, context } = input;
      // Heartbeats while the supplier thinks, so a worker that dies mid-Book is noticed in seconds (the
      // workflow's heartbeat timeout), not after the 2-minute activity timeout; recovery starts sooner.
      const beat = setInterval(heartbeat, BOOK_HEARTBEAT_EVERY_MS);
      try {
        const order = await supplier.book(
          { customerReferenceNo, ratePkgId, holder, guests, ...(callbackUrl ? { callbackUrl } : {}) },
          withSignal(context),
        );
        return { kind: 'order', order: viewOf(order, profile) };
      } catch (err) {
        return classifyBookFailure(err, profile);
      } finally {
        clearInterval(beat);
      }
    },

    async queryOrder({ customerReferenceNo, traceId }: QueryOrderInput): Promise<QueryOrderOutcome> {
      try {
        const signal = activitySignal();
        const mine = coalescer
          ? await coalescer.lookup(customerReferenceNo, signal, traceId)
          : ordersOf(
              await supplier.queryOrders({ customerReferenceNos: [customerReferenceNo] }, { traceId, signal }),
              customerReferenceNo,
              profile,
            );
        const deciding = decidingOrder(mine, profile);
        if (!deciding) return { kind: 'not-found' };
        if (deciding.conflict) reportOrderConflict(deciding.conflict, meters);
        return { kind: 'found', order: viewOf(deciding.order, profile) };
      } catch (err) {
        throw toFailure(err, ['SupplierBadRequest', 'SupplierForbidden']);
      }
    },
  };
}

export type BookingActivities = ReturnType<typeof createActivities>;

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

function heartbeat(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // Outside an activity (plain unit tests): nothing to report to.
  }
}

/** The activity's cancellation signal, when running inside an activity (not in plain unit tests). */
function activitySignal(): AbortSignal | undefined {
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
