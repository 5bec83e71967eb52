/**
 * The sandbox's control surface, for tests, benchmarks and demos: what it holds (orders, calls, callbacks,
 * stats), reset, runtime settings and a forced order status; in process through the `Sandbox` handle, over
 * HTTP under /_sandbox/.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { describeIssues } from '../../src/api/values/index';
import { announce } from './callbacks';
import { HttpAnswer, readJson } from './http';
import type { SandboxOrderView, SandboxRuntimeConfig, SandboxStats } from './options';
import type { SandboxState } from './state';

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

/** Every order as a test reads it: its status now, its settle counters and a Cancel taken. */
export function orderViews(state: SandboxState): SandboxOrderView[] {
  return state.store.all().map((o) => ({
    customerReferenceNo: o.customerReferenceNo,
    platformReferenceNo: o.platformReferenceNo,
    status: state.store.statusOf(o),
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
}

/** The call record counted: by operation and HTTP status, 429s, QueryOrders' references, peaks per second. */
export function statsOf(state: SandboxState): SandboxStats {
  const byOperation: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  let rateLimited = 0;
  const q = { requests: 0, references: 0 };
  for (const c of state.calls) {
    byOperation[c.op] = (byOperation[c.op] ?? 0) + 1;
    byStatus[c.httpStatus] = (byStatus[c.httpStatus] ?? 0) + 1;
    if (c.httpStatus === 429) rateLimited++;
    if (c.op === 'queryOrders') {
      q.requests++;
      q.references += c.customerReferenceNos?.length ?? 0;
    }
  }
  return { byOperation, byStatus, rateLimited, queryOrders: q, peakPerSecond: { ...state.peaks } };
}

/** Forgets every order, call, counter, price change and queued fault (the runtime settings stay). */
export function resetSandbox(state: SandboxState): void {
  state.store.clear();
  state.calls = [];
  state.perSecond = new Map();
  state.peaks = {};
  state.checkAvailCount.clear();
  state.bookCount.clear();
  state.cancelCount.clear();
  state.callbackAttempts = [];
  state.announced.clear();
  state.changedPrice.clear();
  state.limiter.reset();
  state.queryFault = undefined;
}

/** Changes the runtime settings given (rate limits, settle delay, mode, Retry-After, a QueryOrders fault). */
export function configureSandbox(state: SandboxState, config: SandboxRuntimeConfig): void {
  const c = RuntimeConfig.parse(config);
  if (c.rateLimits) state.limiter.limits = { ...state.limiter.limits, ...c.rateLimits };
  if (c.confirmAfterMs !== undefined) state.runtime = { ...state.runtime, confirmAfterMs: c.confirmAfterMs };
  if (c.mode) state.runtime = { ...state.runtime, mode: c.mode };
  if (c.rateLimitRetryAfterSeconds !== undefined)
    state.runtime = { ...state.runtime, retryAfter: c.rateLimitRetryAfterSeconds ?? undefined };
  if (c.queryOrders !== undefined)
    state.queryFault = c.queryOrders ? { fault: c.queryOrders.fault, remaining: c.queryOrders.times } : undefined;
}

/** Forces an order's status, as a supplier-side change would (announced by callback); false without the order. */
export function forceOrderStatus(state: SandboxState, ref: string, status: number): boolean {
  const order = state.store.get(ref);
  if (!order) return false;
  order.forcedStatus = status;
  order.forcedAt = state.now();
  announce(state, order);
  return true;
}

/** Answers a request under /_sandbox/: the same surface over HTTP. */
export async function control(state: SandboxState, req: IncomingMessage, url: URL): Promise<HttpAnswer> {
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case 'GET /_sandbox/orders':
      return new HttpAnswer(200, orderViews(state));
    case 'GET /_sandbox/calls': {
      const op = url.searchParams.get('op');
      return new HttpAnswer(200, op ? state.calls.filter((c) => c.op === op) : state.calls);
    }
    case 'GET /_sandbox/callbacks':
      return new HttpAnswer(200, state.callbackAttempts);
    case 'GET /_sandbox/stats':
      return new HttpAnswer(200, statsOf(state));
    case 'POST /_sandbox/reset':
      resetSandbox(state);
      return new HttpAnswer(200, { ok: true });
    case 'POST /_sandbox/config':
      return configureOverHttp(state, await readJson(req, state.codes));
    case 'POST /_sandbox/orders/status':
      return forceStatusOverHttp(state, await readJson(req, state.codes));
    default:
      return new HttpAnswer(404, { error: `no route ${route}` });
  }
}

/** POST /_sandbox/config: the settings checked (400 with what is wrong), then applied. */
function configureOverHttp(state: SandboxState, body: unknown): HttpAnswer {
  const parsed = RuntimeConfig.safeParse(body);
  if (!parsed.success) return new HttpAnswer(400, { error: describeIssues(parsed.error).join('; ') });
  configureSandbox(state, parsed.data as SandboxRuntimeConfig);
  return new HttpAnswer(200, { ok: true });
}

/** POST /_sandbox/orders/status: a reference and a status checked (400), then forced (404 without the order). */
function forceStatusOverHttp(state: SandboxState, body: unknown): HttpAnswer {
  const parsed = ForceStatus.safeParse(body);
  if (!parsed.success) return new HttpAnswer(400, { error: describeIssues(parsed.error).join('; ') });
  return forceOrderStatus(state, parsed.data.customerReferenceNo, parsed.data.status)
    ? new HttpAnswer(200, { ok: true })
    : new HttpAnswer(404, { error: 'no such order' });
}
