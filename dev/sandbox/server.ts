/**
 * The sandbox supplier: a real HTTP server that behaves like the supplier of
 * shared/spec/hotel-booking-interface.md with the profile's codes and statuses, including its bad
 * days (chosen per request by the `Test` header, see scenario.ts) and a control API under /_sandbox/
 * for tests, benchmarks and demos. Everything is in memory.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defaultSupplierProfile, type SupplierProfile } from '../../src/supplier/profile';
import { cancelFeeAt } from '../../src/workflows/cancel-fee';
import {
  BookRequest,
  CancelRequest,
  CheckAvailRequest,
  QueryOrdersRequest,
  TicketRequest,
  type CheckAvailData,
  type HotelOrder,
  type Money,
  type TimeWindow,
} from '../../src/supplier/schemas';
import { describeIssues } from '../../src/values';
import { parseTimestamp } from '../../src/values/timestamp';
import { TicketAuthority, type AppKey, type Permission, type Principal } from './auth';
import { RateLimiter, type RateLimits } from './rate-limit';
import { parseTestHeader, type TestFlags } from './scenario';
import { driftedCheckAvail, driftedOrder, driftRequested } from './drift';
import { basePriceFor, OrderStore, ratePackage, round2, type StoredOrder } from './store';

export { basePriceFor } from './store';

export type SandboxOperation = 'ticket' | 'checkAvail' | 'book' | 'queryOrders' | 'cancel';
export type QueryOrdersFault = '429' | '500' | '503' | 'malformed' | 'hang';

export interface SandboxOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  profile: SupplierProfile;
  appKeys: AppKey[];
  /** Also accepted as a bearer token; rate limits then count per client IP. */
  staticToken?: string;
  jwtSecret: string;
  /** demo: orders settle after confirmAfterMs; realistic: after 3 to 10 minutes, as the spec says Book takes. */
  mode: 'demo' | 'realistic';
  confirmAfterMs: number;
  rateLimits: RateLimits;
  /** The real supplier sends no Retry-After on 429; set to send one (seconds). */
  rateLimitRetryAfterSeconds?: number;
  /** Answer as a drifting live supplier would (./drift.ts), for every order and CheckAvail. */
  drift?: boolean;
  /** Signs order-status callbacks the way the profile's `callbacks` says; without it they go unsigned. */
  callbackSecret?: string;
  /** The sandbox's clock (booking times, stay dates, settle delays); tests align it with a time-skipping server. */
  now?: () => number;
}

/** One order-status callback delivery attempt, for tests (GET /_sandbox/callbacks). */
export interface SandboxCallbackAttempt {
  at: string;
  customerReferenceNo: string;
  status: number;
  attempt: number;
  /** HTTP status of the receiver's answer; 0 when it could not be reached. */
  httpStatus: number;
}

export interface SandboxCall {
  at: string;
  op: SandboxOperation;
  requestId?: string;
  /** The `Trace-Id` header received: the worker's trace id when it traces, else its workflow id. */
  traceId?: string;
  sessionId?: string;
  customerReferenceNos?: string[];
  httpStatus: number;
  fault?: string;
}

export interface SandboxOrderView {
  customerReferenceNo: string;
  platformReferenceNo: string;
  status: number;
  outcome: string;
  ratePkgId: string;
  price: Money;
  createdAt: string;
  queriesSeen: number;
  test: string;
  /** A Cancel the sandbox took: when, and the service fee it charged (the policy's fee at that moment). */
  cancel?: { requestedAt: string; serviceFee: Money };
}

export interface SandboxStats {
  byOperation: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  queryOrders: { requests: number; references: number };
  /** Highest number of requests seen within one wall-clock second, per operation. */
  peakPerSecond: Record<string, number>;
}

export interface SandboxRuntimeConfig {
  rateLimits?: Partial<RateLimits>;
  confirmAfterMs?: number;
  mode?: 'demo' | 'realistic';
  queryOrders?: { fault: QueryOrdersFault; times: number } | null;
  rateLimitRetryAfterSeconds?: number | null;
}

export interface Sandbox {
  url: string;
  port: number;
  orders(): SandboxOrderView[];
  calls(op?: SandboxOperation): SandboxCall[];
  stats(): SandboxStats;
  reset(): void;
  configure(config: SandboxRuntimeConfig): void;
  setOrderStatus(customerReferenceNo: string, status: number): boolean;
  callbacks(): SandboxCallbackAttempt[];
  close(): Promise<void>;
}

export function defaultSandboxOptions(): SandboxOptions {
  const profile = defaultSupplierProfile;
  return {
    host: '127.0.0.1',
    port: 8787,
    profile,
    appKeys: [
      { appKey: 'sandbox-app', appSecret: 'sandbox-secret', permissions: ['search', 'trade', 'query'] },
      { appKey: 'sandbox-readonly', appSecret: 'sandbox-readonly-secret', permissions: ['query'] },
    ],
    jwtSecret: randomBytes(32).toString('hex'),
    mode: 'demo',
    confirmAfterMs: 3_000,
    rateLimits: { ...profile.rateLimits },
  };
}

const MAX_CALLS_KEPT = 200_000;
const RuntimeConfig = z.object({
  rateLimits: z
    .object({
      overall: z.number().positive(),
      checkAvail: z.number().positive(),
      book: z.number().positive(),
      queryOrders: z.number().positive(),
    })
    .partial()
    .optional(),
  confirmAfterMs: z.number().int().nonnegative().optional(),
  mode: z.enum(['demo', 'realistic']).optional(),
  queryOrders: z
    .object({ fault: z.enum(['429', '500', '503', 'malformed', 'hang']), times: z.number().int().positive() })
    .nullable()
    .optional(),
  rateLimitRetryAfterSeconds: z.number().int().positive().nullable().optional(),
});
const ForceStatus = z.object({ customerReferenceNo: z.string().min(1), status: z.number().int() });

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export async function startSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const options: SandboxOptions = { ...defaultSandboxOptions(), ...overrides };
  const { profile } = options;
  const codes = profile.codes;
  const now = options.now ?? Date.now;
  const auth = new TicketAuthority(options.appKeys, options.jwtSecret, options.staticToken, now);
  const limiter = new RateLimiter({ ...options.rateLimits }, now);
  const store = new OrderStore(profile, now);
  let runtime = {
    confirmAfterMs: options.confirmAfterMs,
    mode: options.mode,
    retryAfter: options.rateLimitRetryAfterSeconds,
  };
  let queryFault: { fault: QueryOrdersFault; remaining: number } | undefined;
  let calls: SandboxCall[] = [];
  let perSecond = new Map<string, number>();
  let peaks: Record<string, number> = {};
  const checkAvailCount = new Map<string, number>();
  const bookCount = new Map<string, number>();
  const cancelCount = new Map<string, number>();
  let callbackAttempts: SandboxCallbackAttempt[] = [];
  /** The status each order's callbacks last announced: a change is what triggers one. */
  const announced = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  /** Sessions that saw a price change: later checks and the Book use the new price. */
  const changedPrice = new Map<string, Money>();

  const envelope = (code: number, msg: string, data?: unknown) =>
    data === undefined ? { code, msg } : { code, msg, data };

  function record(call: Omit<SandboxCall, 'at'>): void {
    const t = now();
    calls.push({ at: new Date(t).toISOString(), ...call });
    if (calls.length > MAX_CALLS_KEPT) calls = calls.slice(-MAX_CALLS_KEPT / 2);
    const key = `${call.op}|${Math.floor(t / 1000)}`;
    const n = (perSecond.get(key) ?? 0) + 1;
    perSecond.set(key, n);
    if (n > (peaks[call.op] ?? 0)) peaks[call.op] = n;
    if (perSecond.size > 10_000) perSecond = new Map([...perSecond].slice(-100));
  }

  function settleDelay(flags: TestFlags): number {
    if (flags.confirmAfterMs !== undefined) return flags.confirmAfterMs;
    if (runtime.mode === 'realistic') return (3 + Math.random() * 7) * 60_000;
    return runtime.confirmAfterMs;
  }

  function priceFor(sessionId: string, ratePkgId: string): Money {
    return changedPrice.get(`${sessionId}|${ratePkgId}`) ?? basePriceFor(ratePkgId);
  }

  const readJson = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return JSON.parse(text || 'null');
    } catch {
      throw new HttpAnswer(400, envelope(codes.badRequest, 'body: not valid JSON'));
    }
  };

  function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
    const parsed = schema.safeParse(body);
    if (!parsed.success)
      throw new HttpAnswer(
        400,
        envelope(codes.badRequest, `invalid request: ${describeIssues(parsed.error).join('; ')}`),
      );
    return parsed.data;
  }

  function principalFor(req: IncomingMessage, permission: Permission): Principal {
    const principal = auth.authenticate(req.headers.authorization, req.socket.remoteAddress ?? 'unknown');
    if (!principal) throw new HttpAnswer(401, envelope(codes.unauthorized, 'authentication failed'));
    if (!principal.permissions.includes(permission))
      throw new HttpAnswer(403, envelope(codes.forbidden, 'permission denied'));
    return principal;
  }

  function limit(principal: Principal, op: 'checkAvail' | 'book' | 'queryOrders' | 'cancel'): void {
    if (!limiter.take(principal.clientKey, op))
      throw new HttpAnswer(429, envelope(codes.rateLimited, 'quota limit exceed'));
  }

  const faultAnswer = (fault: string, msg?: string): HttpAnswer | undefined => {
    switch (fault) {
      case '429':
        return new HttpAnswer(429, envelope(codes.rateLimited, msg ?? 'quota limit exceed'));
      case '400':
        return new HttpAnswer(400, envelope(codes.badRequest, msg ?? 'parameter error'));
      case '403':
        return new HttpAnswer(403, envelope(codes.forbidden, msg ?? 'permission denied'));
      case '500':
        return new HttpAnswer(500, envelope(codes.systemError, msg ?? 'system error'));
      case '503':
        return new HttpAnswer(503, envelope(codes.systemError, msg ?? 'service unavailable'));
      default:
        return undefined;
    }
  };

  /** Holds the response until the client gives up (a supplier that never answers). */
  const hang = (res: ServerResponse) => new Promise<'hang'>((resolve) => res.once('close', () => resolve('hang')));

  type Handled = HttpAnswer | 'hang' | 'reset' | { malformed: string };

  async function checkAvail(
    req: IncomingMessage,
    res: ServerResponse,
    call: Omit<SandboxCall, 'at' | 'httpStatus'>,
  ): Promise<Handled> {
    const principal = principalFor(req, 'search');
    const sessionId = requireSession(req);
    call.sessionId = sessionId;
    const { ratePkgId } = parseBody(CheckAvailRequest, await readJson(req));
    limit(principal, 'checkAvail');
    const flags = parseTestHeader(header(req, 'test'));
    const n = (checkAvailCount.get(sessionId) ?? 0) + 1;
    checkAvailCount.set(sessionId, n);
    if (flags.checkAvail && (flags.checkAvailTimes === undefined || n <= flags.checkAvailTimes)) {
      call.fault = flags.checkAvail;
      if (flags.checkAvail === 'hang') return hang(res);
      if (flags.checkAvail === 'reset') return 'reset';
      if (flags.checkAvail === 'malformed') return { malformed: '<html>502 Bad Gateway</html>' };
      if (flags.checkAvail === 'ariChanged') return new HttpAnswer(200, envelope(codes.ariChanged, 'ARI changed'));
      return faultAnswer(flags.checkAvail, flags.faultMsg)!;
    }
    if (flags.scenario === 'serviceUnavailable') return faultAnswer('503')!;
    if (flags.scenario === 'unknownInternalError') return faultAnswer('500')!;
    if (flags.scenario === 'soldOut') {
      return new HttpAnswer(200, envelope(codes.success, 'Success', { status: profile.checkAvailStatus.unavailable }));
    }
    const key = `${sessionId}|${ratePkgId}`;
    if (flags.scenario === 'priceChanged' && !changedPrice.has(key)) {
      const base = basePriceFor(ratePkgId);
      changedPrice.set(key, {
        currency: base.currency,
        amount: round2(base.amount * (1 + flags.priceDeltaPercent / 100)),
      });
      call.fault = 'ariChanged';
      return new HttpAnswer(200, envelope(codes.ariChanged, 'ARI changed'));
    }
    const data: CheckAvailData = {
      status: profile.checkAvailStatus.available,
      roomRatePkg: ratePackage(ratePkgId, priceFor(sessionId, ratePkgId), now()),
      exchangeRateSnapshot: {
        date: new Date(now()).toISOString().slice(0, 10),
        usd: { EUR: 0.92, GBP: 0.79, CNY: 7.1 },
      },
    };
    const drifting = options.drift || driftRequested(header(req, 'test'));
    return new HttpAnswer(200, envelope(codes.success, 'Success', drifting ? driftedCheckAvail(data) : data));
  }

  async function book(
    req: IncomingMessage,
    res: ServerResponse,
    call: Omit<SandboxCall, 'at' | 'httpStatus'>,
  ): Promise<Handled> {
    const principal = principalFor(req, 'trade');
    const sessionId = requireSession(req);
    call.sessionId = sessionId;
    const body = parseBody(BookRequest, await readJson(req));
    const ref = body.customerReferenceNo;
    call.customerReferenceNos = [ref];
    limit(principal, 'book');
    const testHeader = header(req, 'test') ?? '';
    const flags = parseTestHeader(testHeader);
    const n = (bookCount.get(ref) ?? 0) + 1;
    bookCount.set(ref, n);
    const fault =
      n > 1 && flags.resend
        ? flags.resend
        : flags.book && (flags.bookTimes === undefined || n <= flags.bookTimes)
          ? flags.book
          : undefined;
    if (fault) call.fault = fault;

    if (fault === 'unknownCode') return new HttpAnswer(200, envelope(100009998, 'resend not accepted'));
    switch (fault) {
      case '429':
      case '400':
      case '403':
        return faultAnswer(fault)!;
      case 'creditLimit':
        return new HttpAnswer(200, envelope(codes.creditLimitExceeded, 'credit limit exceeded'));
      case '504BeforeCreate':
        return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
      case 'hangBeforeCreate':
        return hang(res);
      case 'resetBeforeCreate':
        return 'reset';
    }
    if (flags.scenario === 'serviceUnavailable' && !fault) return faultAnswer('503')!;
    if (flags.scenario === 'unknownInternalError' && !fault) return faultAnswer('500')!;

    // Idempotent by reference: a repeat returns the existing order, never a second one.
    const order =
      store.get(ref) ??
      store.create({
        customerReferenceNo: ref,
        ratePkgId: body.ratePkgId,
        sessionId,
        clientKey: principal.clientKey,
        outcome: flags.scenario === 'soldOut' ? 'failed' : flags.outcome,
        statusRemark:
          flags.scenario === 'soldOut' ? 'sold out' : flags.outcome === 'failed' ? 'supplier rejected' : undefined,
        confirmAfterMs: flags.scenario === 'soldOut' ? 0 : settleDelay(flags),
        confirmAfterQueries: flags.scenario === 'soldOut' ? undefined : flags.confirmAfterQueries,
        ...(flags.listAfterQueries !== undefined ? { listAfterQueries: flags.listAfterQueries } : {}),
        ...(flags.listAfterMs !== undefined ? { listAfterMs: flags.listAfterMs } : {}),
        price: priceFor(sessionId, body.ratePkgId),
        holder: body.holder,
        guests: body.guests,
        test: testHeader,
        freeCancel: flags.freeCancel,
        ...(flags.freeCancelForMs !== undefined ? { freeCancelForMs: flags.freeCancelForMs } : {}),
        ...(body.callbackUrl ? { callbackUrl: body.callbackUrl } : {}),
      });
    if (order.callbackUrl && !announced.has(ref)) {
      announced.set(ref, store.statusOf(order));
      scheduleCallback(order);
    }
    switch (fault) {
      case '504AfterCreate':
        return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
      case '500AfterCreate':
        return faultAnswer('500')!;
      case 'hangAfterCreate':
        return hang(res);
      case 'resetAfterCreate':
        return 'reset';
      case 'malformedAfterCreate':
        return { malformed: '{"code":0,"msg":"Success","data":{"hotelOrder":{"status":' };
      case 'unknownCodeAfterCreate':
        return new HttpAnswer(200, envelope(100009999, 'internal error'));
    }
    if (flags.bookDelayMs) await new Promise((resolve) => setTimeout(resolve, flags.bookDelayMs));
    return new HttpAnswer(200, envelope(codes.success, 'Success', { hotelOrder: present(order) }));
  }

  async function queryOrders(
    req: IncomingMessage,
    res: ServerResponse,
    call: Omit<SandboxCall, 'at' | 'httpStatus'>,
  ): Promise<Handled> {
    const principal = principalFor(req, 'query');
    const filter = parseBody(QueryOrdersRequest, await readJson(req));
    call.customerReferenceNos = filter.customerReferenceNos;
    limit(principal, 'queryOrders');
    if (queryFault) {
      const { fault } = queryFault;
      if (--queryFault.remaining <= 0) queryFault = undefined;
      call.fault = fault;
      if (fault === 'hang') return hang(res);
      if (fault === 'malformed') return { malformed: '{"code":0,"data":{"orders":[' };
      return faultAnswer(fault)!;
    }
    const named = store.all().filter((o) => matchesFilter(o, filter));
    for (const o of named) o.queriesSeen++;
    const matches = named.filter((o) => store.listed(o));
    for (const o of matches) if (o.callbackUrl) announce(o);
    const orders = matches
      .filter((o) => {
        const view = store.toHotelOrder(o);
        return (
          (!filter.statusList || filter.statusList.includes(view.status)) &&
          (!filter.cancelledTimeWindow || within(view.cancelTime, filter.cancelledTimeWindow))
        );
      })
      .map(present);
    return new HttpAnswer(200, envelope(codes.success, 'Success', { orders }));
  }

  /**
   * Cancel (supplier-facts): taken at once, settled later (Cancelled, or CancelFailed with `cancel=failed`);
   * the service fee is what the order's cancel policy charges now. A repeat for an order already being
   * cancelled answers the same, without a second charge.
   */
  async function cancel(req: IncomingMessage, call: Omit<SandboxCall, 'at' | 'httpStatus'>): Promise<Handled> {
    const principal = principalFor(req, 'trade');
    const sessionId = requireSession(req);
    call.sessionId = sessionId;
    const body = parseBody(CancelRequest, await readJson(req));
    call.customerReferenceNos = [body.customerReferenceNo];
    limit(principal, 'cancel');
    const order = store.get(body.customerReferenceNo);
    // Cancel faults from the Cancel's own Test header, else from the Book's (an order run sends none of its own).
    const cancelHeader = header(req, 'test');
    const flags = parseTestHeader(cancelHeader ?? order?.test);
    const n = (cancelCount.get(body.customerReferenceNo) ?? 0) + 1;
    cancelCount.set(body.customerReferenceNo, n);
    const fault =
      flags.cancel && (flags.cancelTimes === undefined || n <= flags.cancelTimes) ? flags.cancel : undefined;
    if (fault) call.fault = fault;
    if (fault === '429') return faultAnswer('429')!;
    if (fault === 'refuse') return new HttpAnswer(400, envelope(codes.badRequest, 'order cannot be cancelled'));
    if (fault === 'lost') return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
    if (!order) return new HttpAnswer(404, envelope(codes.notFound, 'order not found'));
    if (order.supplierReferenceNo !== body.supplierReferenceNo) {
      return new HttpAnswer(400, envelope(codes.badRequest, 'supplierReferenceNo does not match the order'));
    }
    const s = profile.orderStatus;
    const status = store.statusOf(order);
    if (order.cancel && flags.cancelRepeat === 'refuse') {
      call.fault = 'cancelRepeat';
      return new HttpAnswer(400, envelope(codes.badRequest, `order in status ${status} cannot be cancelled`));
    }
    if (!order.cancel) {
      if (status !== s.confirmed) {
        return new HttpAnswer(400, envelope(codes.badRequest, `order in status ${status} cannot be cancelled`));
      }
      const quote = cancelFeeAt(cancelPolicyOf(store.toHotelOrder(order)), now(), order.price.currency);
      order.cancel = {
        requestedAt: now(),
        reason: body.reason,
        outcome: flags.cancel === 'failed' ? 'cancelFailed' : flags.cancel === 'pending' ? 'pending' : 'cancelled',
        afterMs: flags.cancelAfterMs ?? flags.confirmAfterMs ?? runtime.confirmAfterMs,
        ...(flags.cancelAfterQueries !== undefined ? { afterQueries: flags.cancelAfterQueries } : {}),
        queriesAtRequest: order.queriesSeen,
        serviceFee: quote.fee ?? order.price,
      };
      scheduleCallback(order);
    }
    if (fault === 'unknownCode') return new HttpAnswer(200, envelope(100009997, 'cancel queued'));
    if (fault === '504AfterAccept') return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
    return new HttpAnswer(
      200,
      envelope(codes.success, 'Success', { serviceFee: order.cancel.serviceFee, status: store.statusOf(order) }),
    );
  }

  function later(ms: number, fn: () => void): void {
    const t = setTimeout(
      () => {
        timers.delete(t);
        if (!closed) fn();
      },
      Math.max(0, ms),
    );
    t.unref();
    timers.add(t);
  }

  /**
   * Order-status callbacks, for orders booked with a callback URL: sent when the status changes (checked
   * when a delay settles it, after QueryOrders, a Cancel or a forced status), retried with backoff while the
   * receiver does not answer 2xx (1, 2, 4, 8 s; 5 attempts). Book's Test header may ask for `callbacks=duplicate`
   * (each sent twice) or `callbacks=reorder` (a stale Confirming one sent after the settled one).
   */
  function scheduleCallback(order: StoredOrder): void {
    if (!order.callbackUrl) return;
    if (order.confirmAfterQueries === undefined)
      later(order.createdAt + order.confirmAfterMs - now() + 5, () => announce(order));
    if (order.cancel && order.cancel.afterQueries === undefined) {
      later(order.cancel.requestedAt + order.cancel.afterMs - now() + 5, () => announce(order));
    }
  }

  function announce(order: StoredOrder): void {
    if (!order.callbackUrl) return;
    const status = store.statusOf(order);
    if (announced.get(order.customerReferenceNo) === status) return;
    const before = announced.get(order.customerReferenceNo);
    announced.set(order.customerReferenceNo, status);
    const mode = new URLSearchParams(order.test).get('callbacks');
    deliver(order, status, 1);
    if (mode === 'duplicate') later(50, () => deliver(order, status, 1));
    if (mode === 'reorder') later(50, () => deliver(order, before ?? profile.orderStatus.confirming, 1));
  }

  function deliver(order: StoredOrder, status: number, attempt: number): void {
    const body = JSON.stringify({
      customerReferenceNo: order.customerReferenceNo,
      platformReferenceNo: order.platformReferenceNo,
      supplierReferenceNo: order.supplierReferenceNo,
      status,
      sentAt: new Date(now()).toISOString(),
    });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const secret = options.callbackSecret;
    if (secret) {
      const { verification, header, timestampHeader } = profile.callbacks;
      if (verification === 'hmac-sha256-timestamp') {
        // Signed with the time it is sent: a replay-proof scheme (the receiver refuses a stale timestamp).
        const timestamp = String(Math.floor(now() / 1000));
        headers[timestampHeader] = timestamp;
        headers[header] = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
      } else {
        headers[header] =
          verification === 'hmac-sha256' ? `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` : secret;
      }
    }
    const done = (httpStatus: number) => {
      callbackAttempts.push({
        at: new Date(now()).toISOString(),
        customerReferenceNo: order.customerReferenceNo,
        status,
        attempt,
        httpStatus,
      });
      if ((httpStatus < 200 || httpStatus >= 300) && attempt < 5 && !closed) {
        later(1000 * 2 ** (attempt - 1), () => deliver(order, status, attempt + 1));
      }
    };
    fetch(order.callbackUrl!, { method: 'POST', headers, body, signal: AbortSignal.timeout(5_000) }).then(
      async (res) => {
        await res.arrayBuffer().catch(() => undefined);
        done(res.status);
      },
      () => done(0),
    );
  }

  /** An order as this sandbox answers about it: drifting when the sandbox or the order's Book asked for it. */
  function present(order: StoredOrder): unknown {
    const view = store.toHotelOrder(order);
    return options.drift || driftRequested(order.test) ? driftedOrder(view) : view;
  }

  function matchesFilter(o: StoredOrder, f: QueryOrdersRequest): boolean {
    const view = store.toHotelOrder(o);
    const refundableUntil = view.rooms?.[0]?.refundableUntil;
    return (
      (!f.customerReferenceNos || f.customerReferenceNos.includes(o.customerReferenceNo)) &&
      (!f.platformReferenceNos || f.platformReferenceNos.includes(o.platformReferenceNo)) &&
      (!f.supplierReferenceNos || f.supplierReferenceNos.includes(o.supplierReferenceNo)) &&
      (!f.checkInTimeWindow || within(view.checkIn, f.checkInTimeWindow)) &&
      (!f.checkOutTimeWindow || within(view.checkOut, f.checkOutTimeWindow)) &&
      (!f.bookingTimeWindow || within(view.bookingTime, f.bookingTimeWindow)) &&
      (!f.freeCancelTimeWindow || within(refundableUntil, f.freeCancelTimeWindow))
    );
  }

  async function ticket(req: IncomingMessage): Promise<Handled> {
    const body = parseBody(TicketRequest, await readJson(req));
    const token = auth.issue(body.appKey, body.appSecret, body.ttl ?? profile.ticket.ttlSeconds);
    if (!token) return new HttpAnswer(401, envelope(codes.unauthorized, 'authentication failed'));
    return new HttpAnswer(200, envelope(codes.success, 'Success', { ticket: token }));
  }

  function requireSession(req: IncomingMessage): string {
    const sessionId = header(req, 'session-id');
    if (!sessionId) throw new HttpAnswer(400, envelope(codes.badRequest, 'header Session-Id: required'));
    return sessionId;
  }

  const orderViews = (): SandboxOrderView[] =>
    store.all().map((o) => ({
      customerReferenceNo: o.customerReferenceNo,
      platformReferenceNo: o.platformReferenceNo,
      status: store.statusOf(o),
      outcome: o.outcome,
      ratePkgId: o.ratePkgId,
      price: o.price,
      createdAt: new Date(o.createdAt).toISOString(),
      queriesSeen: o.queriesSeen,
      test: o.test,
      ...(o.cancel
        ? { cancel: { requestedAt: new Date(o.cancel.requestedAt).toISOString(), serviceFee: o.cancel.serviceFee } }
        : {}),
    }));

  const stats = (): SandboxStats => {
    const byOperation: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    let rateLimited = 0;
    const q = { requests: 0, references: 0 };
    for (const c of calls) {
      byOperation[c.op] = (byOperation[c.op] ?? 0) + 1;
      byStatus[c.httpStatus] = (byStatus[c.httpStatus] ?? 0) + 1;
      if (c.httpStatus === 429) rateLimited++;
      if (c.op === 'queryOrders') {
        q.requests++;
        q.references += c.customerReferenceNos?.length ?? 0;
      }
    }
    return { byOperation, byStatus, rateLimited, queryOrders: q, peakPerSecond: { ...peaks } };
  };

  const reset = () => {
    store.clear();
    calls = [];
    perSecond = new Map();
    peaks = {};
    checkAvailCount.clear();
    bookCount.clear();
    cancelCount.clear();
    callbackAttempts = [];
    announced.clear();
    changedPrice.clear();
    limiter.reset();
    queryFault = undefined;
  };

  const configure = (config: SandboxRuntimeConfig) => {
    const c = RuntimeConfig.parse(config);
    if (c.rateLimits) limiter.limits = { ...limiter.limits, ...c.rateLimits };
    if (c.confirmAfterMs !== undefined) runtime = { ...runtime, confirmAfterMs: c.confirmAfterMs };
    if (c.mode) runtime = { ...runtime, mode: c.mode };
    if (c.rateLimitRetryAfterSeconds !== undefined)
      runtime = { ...runtime, retryAfter: c.rateLimitRetryAfterSeconds ?? undefined };
    if (c.queryOrders !== undefined)
      queryFault = c.queryOrders ? { fault: c.queryOrders.fault, remaining: c.queryOrders.times } : undefined;
  };

  const setOrderStatus = (ref: string, status: number) => {
    const order = store.get(ref);
    if (!order) return false;
    order.forcedStatus = status;
    order.forcedAt = now();
    announce(order);
    return true;
  };

  const routes: Record<string, SandboxOperation> = {
    [profile.paths.ticket]: 'ticket',
    [profile.paths.checkAvail]: 'checkAvail',
    [profile.paths.book]: 'book',
    [profile.paths.queryOrders]: 'queryOrders',
    [profile.paths.cancel]: 'cancel',
  };

  async function control(req: IncomingMessage, url: URL): Promise<HttpAnswer> {
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /_sandbox/orders':
        return new HttpAnswer(200, orderViews());
      case 'GET /_sandbox/calls': {
        const op = url.searchParams.get('op');
        return new HttpAnswer(200, op ? calls.filter((c) => c.op === op) : calls);
      }
      case 'GET /_sandbox/callbacks':
        return new HttpAnswer(200, callbackAttempts);
      case 'GET /_sandbox/stats':
        return new HttpAnswer(200, stats());
      case 'POST /_sandbox/reset':
        reset();
        return new HttpAnswer(200, { ok: true });
      case 'POST /_sandbox/config': {
        const parsed = RuntimeConfig.safeParse(await readJson(req));
        if (!parsed.success) return new HttpAnswer(400, { error: describeIssues(parsed.error).join('; ') });
        configure(parsed.data as SandboxRuntimeConfig);
        return new HttpAnswer(200, { ok: true });
      }
      case 'POST /_sandbox/orders/status': {
        const parsed = ForceStatus.safeParse(await readJson(req));
        if (!parsed.success) return new HttpAnswer(400, { error: describeIssues(parsed.error).join('; ') });
        return setOrderStatus(parsed.data.customerReferenceNo, parsed.data.status)
          ? new HttpAnswer(200, { ok: true })
          : new HttpAnswer(404, { error: 'no such order' });
      }
      default:
        return new HttpAnswer(404, { error: `no route ${route}` });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = now();
    const url = new URL(req.url ?? '/', 'http://sandbox');
    for (const h of ['request-id', 'trace-id', 'session-id']) {
      const v = header(req, h);
      if (v) res.setHeader(h, v);
    }
    if (url.pathname.startsWith('/_sandbox/')) {
      const answer = await control(req, url).catch((e: unknown) =>
        e instanceof HttpAnswer ? e : new HttpAnswer(500, { error: String(e) }),
      );
      return send(res, answer, started);
    }
    const op = req.method === 'POST' ? routes[url.pathname] : undefined;
    if (!op) return send(res, new HttpAnswer(404, envelope(codes.notFound, 'not found')), started);

    const call: Omit<SandboxCall, 'at' | 'httpStatus'> = {
      op,
      requestId: header(req, 'request-id'),
      traceId: header(req, 'trace-id'),
    };
    let outcome: Handled;
    try {
      outcome =
        op === 'ticket'
          ? await ticket(req)
          : op === 'checkAvail'
            ? await checkAvail(req, res, call)
            : op === 'book'
              ? await book(req, res, call)
              : op === 'cancel'
                ? await cancel(req, call)
                : await queryOrders(req, res, call);
    } catch (err) {
      outcome = err instanceof HttpAnswer ? err : new HttpAnswer(500, envelope(codes.systemError, 'system error'));
    }
    if (outcome === 'hang') return record({ ...call, httpStatus: 0 });
    if (outcome === 'reset') {
      record({ ...call, httpStatus: 0 });
      req.socket.destroy();
      return;
    }
    if ('malformed' in outcome) {
      record({ ...call, httpStatus: 200 });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(outcome.malformed);
      return;
    }
    record({ ...call, httpStatus: outcome.status });
    if (outcome.status === 429 && runtime.retryAfter) res.setHeader('retry-after', String(runtime.retryAfter));
    send(res, outcome, started);
  }

  function send(res: ServerResponse, answer: HttpAnswer, started: number): void {
    if (res.destroyed) return;
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'server-cost-milliseconds': String(now() - started),
    });
    res.end(JSON.stringify(answer.body));
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;

  return {
    url,
    port,
    orders: orderViews,
    calls: (op) => (op ? calls.filter((c) => c.op === op) : [...calls]),
    stats,
    reset,
    configure,
    setOrderStatus,
    callbacks: () => [...callbackAttempts],
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The rooms' cancel policies, read as the worker reads them (src/activities/booking.ts). */
function cancelPolicyOf(order: HotelOrder) {
  return (order.rooms ?? []).map((room) => ({
    ...(room.refundableUntil ? { refundableUntil: room.refundableUntil } : {}),
    fees: (room.cancelFees ?? []).flatMap((f) => (f.until && f.fee ? [{ until: f.until, fee: f.fee }] : [])),
  }));
}

function within(value: string | undefined, window: TimeWindow): boolean {
  if (!value) return false;
  // A caller's window without an offset is UTC, as the orchestrator reads one (not the machine's zone).
  const t = parseTimestamp(value);
  return t >= parseTimestamp(window.start) && t <= parseTimestamp(window.end);
}
