/**
 * What a running sandbox holds in memory (orders, the call record, per-reference counters, timers, the settings
 * the control API changes), and the rules every supplier operation shares: who is asking and may they, their
 * rate limit, the session, the price, when an order settles and how it is shown.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { Money } from '../../src/runtime/supplier/schemas';
import { TicketAuthority, type Permission, type Principal } from './auth';
import { driftedOrder, driftRequested } from './drift';
import type { z } from 'zod';
import { envelope, header, HttpAnswer, parseBody, readJson, type Codes, type Handled } from './http';
import { RateLimiter } from './rate-limit';
import type { TestFlags } from './scenario';
import type { QueryOrdersFault, SandboxCall, SandboxCallbackAttempt, SandboxOptions } from './options';
import { basePriceFor, OrderStore, type StoredOrder } from './store';

const MAX_CALLS_KEPT = 200_000;

/** A call as its handler fills it in; the time and the HTTP status are added when it is recorded. */
export type CallInProgress = Omit<SandboxCall, 'at' | 'httpStatus'>;

/** A supplier operation's handler: reads the request, notes what the call did, and says how to answer. */
export type OperationHandler = (
  state: SandboxState,
  req: IncomingMessage,
  res: ServerResponse,
  call: CallInProgress,
) => Promise<Handled>;

/** The settings the control API may change while the sandbox runs. */
export interface RuntimeSettings {
  confirmAfterMs: number;
  mode: 'demo' | 'realistic';
  retryAfter: number | undefined;
}

/** One sandbox's memory; every handler reads and changes it, nothing else does. */
export class SandboxState {
  readonly profile: SupplierProfile;
  readonly codes: Codes;
  readonly now: () => number;
  readonly auth: TicketAuthority;
  readonly limiter: RateLimiter;
  readonly store: OrderStore;
  runtime: RuntimeSettings;
  queryFault: { fault: QueryOrdersFault; remaining: number } | undefined;
  calls: SandboxCall[] = [];
  perSecond = new Map<string, number>();
  peaks: Record<string, number> = {};
  readonly checkAvailCount = new Map<string, number>();
  readonly bookCount = new Map<string, number>();
  readonly cancelCount = new Map<string, number>();
  callbackAttempts: SandboxCallbackAttempt[] = [];
  /** The status each order's callbacks last announced: a change is what triggers one. */
  readonly announced = new Map<string, number>();
  readonly timers = new Set<NodeJS.Timeout>();
  closed = false;
  /** Sessions that saw a price change: later checks and the Book use the new price. */
  readonly changedPrice = new Map<string, Money>();

  constructor(readonly options: SandboxOptions) {
    this.profile = options.profile;
    this.codes = options.profile.codes;
    this.now = options.now ?? Date.now;
    this.auth = new TicketAuthority(options.appKeys, options.jwtSecret, options.staticToken, this.now);
    this.limiter = new RateLimiter({ ...options.rateLimits }, this.now);
    this.store = new OrderStore(options.profile, this.now);
    this.runtime = {
      confirmAfterMs: options.confirmAfterMs,
      mode: options.mode,
      retryAfter: options.rateLimitRetryAfterSeconds,
    };
  }

  /** Keeps the call (the newest half once there are too many) and counts it towards its second's peak. */
  record(call: Omit<SandboxCall, 'at'>): void {
    const t = this.now();
    this.calls.push({ at: new Date(t).toISOString(), ...call });
    if (this.calls.length > MAX_CALLS_KEPT) this.calls = this.calls.slice(-MAX_CALLS_KEPT / 2);
    const key = `${call.op}|${Math.floor(t / 1000)}`;
    const n = (this.perSecond.get(key) ?? 0) + 1;
    this.perSecond.set(key, n);
    if (n > (this.peaks[call.op] ?? 0)) this.peaks[call.op] = n;
    if (this.perSecond.size > 10_000) this.perSecond = new Map([...this.perSecond].slice(-100));
  }

  /** How long a new order stays Confirming: the Test header's delay, else the mode's. */
  settleDelay(flags: TestFlags): number {
    if (flags.confirmAfterMs !== undefined) return flags.confirmAfterMs;
    if (this.runtime.mode === 'realistic') return (3 + Math.random() * 7) * 60_000;
    return this.runtime.confirmAfterMs;
  }

  /** The rate package's price in this session: changed once the session saw a price change, else the base. */
  priceFor(sessionId: string, ratePkgId: string): Money {
    return this.changedPrice.get(`${sessionId}|${ratePkgId}`) ?? basePriceFor(ratePkgId);
  }

  /** Who sends the request, if their ticket (or token) is good (else 401) and lets them do this (else 403). */
  principalFor(req: IncomingMessage, permission: Permission): Principal {
    const principal = this.auth.authenticate(req.headers.authorization, req.socket.remoteAddress ?? 'unknown');
    if (!principal) throw new HttpAnswer(401, envelope(this.codes.unauthorized, 'authentication failed'));
    if (!principal.permissions.includes(permission))
      throw new HttpAnswer(403, envelope(this.codes.forbidden, 'permission denied'));
    return principal;
  }

  /** Takes a token from the caller's rate limit for the operation, or answers 429. */
  limit(principal: Principal, op: 'checkAvail' | 'book' | 'queryOrders' | 'cancel'): void {
    if (!this.limiter.take(principal.clientKey, op))
      throw new HttpAnswer(429, envelope(this.codes.rateLimited, 'quota limit exceed'));
  }

  /** The `Session-Id` header, which CheckAvail, Book and Cancel require (else 400), noted on the call. */
  sessionOf(req: IncomingMessage, call: CallInProgress): string {
    const sessionId = header(req, 'session-id');
    if (!sessionId) throw new HttpAnswer(400, envelope(this.codes.badRequest, 'header Session-Id: required'));
    call.sessionId = sessionId;
    return sessionId;
  }

  /** The request's JSON body, checked against the operation's schema (else 400). */
  async bodyOf<T>(req: IncomingMessage, schema: z.ZodType<T>): Promise<T> {
    return parseBody(schema, await readJson(req, this.codes), this.codes);
  }

  /** Runs `fn` after `ms` unless the sandbox has closed by then; closing clears what is still waiting. */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (!this.closed) fn();
      },
      Math.max(0, ms),
    );
    t.unref();
    this.timers.add(t);
  }

  /**
   * An order as this sandbox answers about it: drifting when the sandbox or the order's Book asked for it;
   * `shownStatus`: the status a lagging listing shows instead of the order's own.
   */
  present(order: StoredOrder, shownStatus?: number): unknown {
    const view = this.store.toHotelOrder(order, shownStatus);
    return this.options.drift || driftRequested(order.test) ? driftedOrder(view) : view;
  }
}
