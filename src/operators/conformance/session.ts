/**
 * The kit's line to the supplier: the product's own HTTP client, token provider and rate limiter, so what the
 * kit observes is what a worker would read. Around them, the kit's manners with a test environment it does not
 * own: a request budget, a gentle rate, and a stop at the first sign of rate limiting.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { createDriftReporter } from '../../runtime/supplier/drift';
import { isSupplierError } from '../../runtime/supplier/errors';
import { createHttpSupplierClient } from '../../runtime/supplier/http-client';
import type { CallContext, SupplierClient, TokenProvider } from '../../runtime/supplier/interface';
import { createRateLimitedSupplierClient } from '../../runtime/supplier/limited-client';
import type { SupplierObserver } from '../../runtime/supplier/observer';
import type { SupplierProfile } from '../../runtime/config/supplier-profile';
import { SupplierRateLimiter } from '../../runtime/supplier/rate-limiter';
import { staticToken, ticketTokens } from '../../runtime/supplier/token';
import type { SupplierCredentials } from '../../runtime/config/index';
import type { OrderAsSent, RequestRecord, Session } from './types';

export type { OrderAsSent, Session } from './types';

export interface SessionOptions {
  baseUrl: string;
  credentials: SupplierCredentials;
  profile: SupplierProfile;
  /** Supplier requests the run may send at most (Ticket requests not counted). */
  budget: number;
  /** Requests per second at most, every operation together. */
  ratePerSecond: number;
  /** Test flags the supplier's test environment documents, added to the `Test` header of CheckAvail, Book and Cancel. */
  testFlags?: string;
}

/** Thrown to end the run early: the budget is spent or the supplier rate limited a request. */
export class StopRun extends Error {
  override readonly name = 'StopRun';
}

export function createSession(options: SessionOptions): Session {
  const { baseUrl, profile } = options;
  const drift = createDriftReporter(() => undefined);
  const tokens = tokenProvider(options);
  const limiter = new SupplierRateLimiter({ limits: gentleLimits(options.ratePerSecond) });
  const traceId = `conformance-${randomUUID()}`;
  let records: RequestRecord[] = [];
  /** Request-Ids the client made for the call running (the kit sends one call at a time). */
  let requestIds: string[] = [];
  let sent = 0;
  let stopReason: string | undefined;
  const clients: SupplierClient[] = [];

  /** Counts every HTTP request the client sends, its one re-send after a 401 included. */
  const observer: SupplierObserver = {
    request: () => {
      sent++;
      return { end: () => undefined };
    },
    rateLimitWait: () => undefined,
    queryOrdersBatch: () => undefined,
  };

  /**
   * `mostPerCall`: the HTTP requests one call may take (2 where a 401 is expected: the client re-issues the token and
   * sends again), so a call is only started when the budget holds all of them.
   */
  function client(with_: TokenProvider, mostPerCall: number): SupplierClient {
    const http = createHttpSupplierClient({
      baseUrl,
      profile,
      tokens: with_,
      drift,
      observer,
      maxConnections: 2,
      newRequestId: () => {
        const id = randomUUID();
        requestIds.push(id);
        return id;
      },
    });
    clients.push(http);
    return recorded(createRateLimitedSupplierClient(http, limiter), mostPerCall);
  }

  /** Every call: refused once stopped or over budget, recorded, and a rate limit stops the run. */
  function recorded(inner: SupplierClient, mostPerCall: number): SupplierClient {
    async function call<T>(operation: string, sentText: string, ctx: CallContext, send: () => Promise<T>): Promise<T> {
      if (stopReason) throw new StopRun(stopReason);
      if (sent + mostPerCall > options.budget) {
        stopReason = `the request budget (${options.budget}) was spent`;
        throw new StopRun(stopReason);
      }
      requestIds = [];
      const at = new Date().toISOString();
      const where = () => ({ at, requestIds, ...(operation !== 'queryOrders' ? { sessionId: ctx.sessionId } : {}) });
      try {
        const value = await send();
        records.push({ operation, sent: sentText, answer: 'answered: success', ...where() });
        return value;
      } catch (err) {
        records.push({ operation, sent: sentText, answer: describeError(err), ...where() });
        // A 429, or the rate-limited code on a 200: the supplier asks us to slow down; a test environment is
        // shared, so the kit leaves rather than retries.
        if (isSupplierError(err) && err.type === 'SupplierRateLimited') {
          stopReason = `the supplier rate limited ${operation} (${describeError(err)})`;
          throw new StopRun(stopReason);
        }
        throw err;
      }
    }
    return {
      checkAvail: (req, ctx) =>
        call('checkAvail', `CheckAvail ${req.ratePkgId}${flags(ctx)}`, ctx, () => inner.checkAvail(req, ctx)),
      book: (req, ctx) =>
        call('book', `Book ${req.ratePkgId} as ${req.customerReferenceNo}${flags(ctx)}`, ctx, () =>
          inner.book(req, ctx),
        ),
      queryOrders: (req, ctx) =>
        call('queryOrders', `QueryOrders ${describeFilter(req)}`, ctx, () => inner.queryOrders(req, ctx)),
      cancel: (req, ctx) =>
        call('cancel', `Cancel ${req.customerReferenceNo} / ${req.supplierReferenceNo}`, ctx, () =>
          inner.cancel(req, ctx),
        ),
      close: () => inner.close(),
    };
  }

  const supplier = client(tokens, 1);

  async function ordersAsSent(ref: string): Promise<OrderAsSent[]> {
    if (stopReason) throw new StopRun(stopReason);
    if (sent + 1 > options.budget) {
      stopReason = `the request budget (${options.budget}) was spent`;
      throw new StopRun(stopReason);
    }
    const token = await tokens.getToken();
    sent++;
    const sentText = `QueryOrders customerReferenceNos=${ref} (read as sent)`;
    const requestId = randomUUID();
    const where = { at: new Date().toISOString(), requestIds: [requestId] };
    try {
      const res = await request(`${baseUrl.replace(/\/+$/, '')}${profile.paths.queryOrders}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'request-id': requestId,
          'client-request-timestamp': String(Math.floor(Date.now() / 1000)),
          'trace-id': traceId,
        },
        body: JSON.stringify({ customerReferenceNos: [ref] }),
        headersTimeout: profile.timeoutsMs.queryOrders,
        bodyTimeout: profile.timeoutsMs.queryOrders,
      });
      const text = await res.body.text();
      records.push({ operation: 'queryOrders', sent: sentText, answer: `HTTP ${res.statusCode}`, ...where });
      const orders = (JSON.parse(text) as { data?: { orders?: unknown } })?.data?.orders;
      if (!Array.isArray(orders)) return [];
      return orders
        .filter((o): o is Record<string, unknown> => o !== null && typeof o === 'object')
        .filter((o) => o.customerReferenceNo === ref)
        .map((o) => ({ status: o.status, supplierReferenceNo: o.supplierReferenceNo, raw: o }));
    } catch (err) {
      records.push({ operation: 'queryOrders', sent: sentText, answer: `error: ${(err as Error).message}`, ...where });
      return [];
    }
  }

  return {
    supplier,
    withToken: (token) => client(staticToken(token), 2),
    context(test) {
      const merged = [test, options.testFlags].filter((t) => t).join('&');
      return { sessionId: `conformance-${randomUUID()}`, traceId, ...(merged ? { test: merged } : {}) };
    },
    drift,
    ordersAsSent,
    begin() {
      records = [];
      return records;
    },
    sent: () => sent,
    stopped: () => stopReason,
    async close() {
      limiter.close();
      for (const c of clients) await c.close();
      await tokens.close?.();
    },
  };
}

/** The worker's credential, used the worker's way: a static token, or Ticket with its caching. */
function tokenProvider(options: SessionOptions): TokenProvider {
  const { credentials, baseUrl, profile } = options;
  return credentials.kind === 'token'
    ? staticToken(credentials.token)
    : ticketTokens({ baseUrl, profile, appKey: credentials.appKey, appSecret: credentials.appSecret });
}

/** One rate for every operation and overall: the kit never needs speed, and a test environment is shared. */
function gentleLimits(ratePerSecond: number): SupplierProfile['rateLimits'] {
  const r = ratePerSecond;
  return { overall: r, checkAvail: r, book: r, queryOrders: r, cancel: r };
}

/** An error as a request record shows it: type, HTTP status and envelope code, never the supplier's text. */
export function describeError(err: unknown): string {
  if (err instanceof StopRun) return `not sent: ${err.message}`;
  if (!isSupplierError(err)) return `error: ${(err as Error)?.message ?? String(err)}`;
  const { httpStatus, code, issues } = err.details;
  const parts = [
    httpStatus !== undefined ? `HTTP ${httpStatus}` : undefined,
    code !== undefined ? `code ${code}` : undefined,
    issues?.length ? `unreadable: ${issues.slice(0, 3).join('; ')}` : undefined,
  ].filter(Boolean);
  return `${err.type}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function flags(ctx: CallContext): string {
  return ctx.test ? ` [Test: ${ctx.test}]` : '';
}

function describeFilter(req: Record<string, unknown>): string {
  const keys = Object.entries(req).map(([k, v]) =>
    Array.isArray(v) ? `${k}=${v.join(',')}` : `${k}=${JSON.stringify(v)}`,
  );
  return keys.length ? keys.join(' ') : '(no filter)';
}
