/**
 * The booking activities: thin adapters from the workflow to the supplier client.
 *
 * Built by a factory over an injected client, so tests and the worker choose the client and nothing
 * is created at import time. Expected business answers (sold out, price changed, rejected, pending,
 * not found) are returned as values; only failures are thrown, as ApplicationFailures whose `type` is
 * the stable SupplierErrorType, so the workflow and retry policies decide by type, never by text.
 */
import { validateBookingRequest, type RequestValidation } from '../api/contract/index';
import type { QueryOrdersCoalescer } from '../runtime/supplier/coalescer';
import type { SupplierClient } from '../runtime/supplier/interface';
import { isSupplierError } from '../runtime/supplier/errors';
import type { BookingMeters } from '../runtime/observability/metrics';
import { decidingOrder, ordersOf } from '../runtime/supplier/orders';
import { classifyBookFailure } from '../runtime/rules/book';
import type { SupplierProfile } from '../runtime/config/supplier-profile';
import {
  activitySignal,
  BOOK_HEARTBEAT_EVERY_MS,
  heartbeat,
  priceOf,
  reportOrderConflict,
  toFailure,
  viewOf,
  withSignal,
} from './shared';
import type {
  BookingActivities,
  BookInput,
  BookOutcome,
  CheckAvailInput,
  CheckAvailOutcome,
  CheckRequestAndAvailInput,
  CheckRequestAndAvailOutcome,
  QueryOrderInput,
  QueryOrderOutcome,
} from './types';

export interface ActivityDeps {
  supplier: SupplierClient;
  profile: SupplierProfile;
  /** Shares QueryOrders requests between concurrent lookups; without it each lookup sends its own. */
  orders?: Pick<QueryOrdersCoalescer, 'lookup'>;
  /** Sent with every Book, so the supplier calls back on status changes (src/servers/callbacks); none when unset. */
  callbackUrl?: string;
  /** Accept requests with `recovery.testing` (settings below the production floors): test workers only. */
  recoveryTesting?: boolean;
  /** The worker's meters (booking_order_conflicts_total on the series it starts at 0); else the activity's meter. */
  meters?: Pick<BookingMeters, 'counter'>;
}

export function createActivities({
  supplier,
  profile,
  orders: coalescer,
  callbackUrl,
  recoveryTesting,
  meters,
}: ActivityDeps): BookingActivities {
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
      const candidates = data.candidates ? { candidates: data.candidates } : {};
      if (data.status !== profile.checkAvailStatus.available) {
        return { kind: 'unavailable', status: data.status, ...candidates };
      }
      return { kind: 'available', price: priceOf(data.roomRatePkg), ...candidates };
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
     * The headers are the ones the workflow's run sends (src/workflows/booking/run.ts, BookingRun): the request's
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
