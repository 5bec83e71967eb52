/**
 * The supplier client over HTTP, with undici: one pooled keep-alive dispatcher, per-operation
 * timeouts, the spec's headers, and every ending classified into a SupplierError.
 *
 * Classification is conservative where money is at stake: when we cannot tell whether a request
 * reached the supplier, its error says so (NetworkAfterSend, ClientTimeout), and the Book rule
 * (src/runtime/rules/book.ts) treats it as an order that may exist: verified, never re-sent blindly.
 * Answers are read strictly only where a decision reads them (./read.ts); other fields that drift
 * from the spec's shapes are reported (./drift.ts) and never change an outcome.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import { createDriftReporter, type DriftReporter } from './drift';
import { SupplierError, type SupplierErrorDetails, type SupplierErrorType, type SupplierOperation } from './errors';
import type { CallContext, SupplierClient, TokenProvider } from './interface';
import type { SupplierObserver } from './observer';
import type { SupplierProfile } from '../config/supplier-profile';
import { candidatesIn } from './candidates';
import { readAnswer, type AnswerShape } from './read';
import {
  BookData,
  BookDecision,
  CancelData,
  CancelDecision,
  CheckAvailAnswer,
  CheckAvailData,
  CheckAvailDecision,
  Envelope,
  EnvelopeDecision,
  HotelOrder,
  OrderDecision,
  QueryOrdersData,
  type BookRequest,
  type CancelRequest,
  type CheckAvailRequest,
  type OrderListing,
  type QueryOrdersRequest,
  type UnreadableOrder,
} from './schemas';

const ENVELOPE: AnswerShape<Envelope> = { decision: EnvelopeDecision, full: Envelope };
const CHECK_AVAIL: AnswerShape<CheckAvailData> = { decision: CheckAvailDecision, full: CheckAvailData };
const BOOK: AnswerShape<BookData> = { decision: BookDecision, full: BookData };
const ORDER_LIST: AnswerShape<QueryOrdersData> = { decision: QueryOrdersData, full: QueryOrdersData };
const ORDER: AnswerShape<HotelOrder> = { decision: OrderDecision, full: HotelOrder };
const CANCEL: AnswerShape<CancelData> = { decision: CancelDecision, full: CancelData };

export interface HttpSupplierClientOptions {
  baseUrl: string;
  profile: SupplierProfile;
  tokens: TokenProvider;
  /** Connections kept per origin. */
  maxConnections?: number;
  /** A dispatcher to use instead of the client's own pool (tests: undici MockAgent). Not closed by close(). */
  dispatcher?: Dispatcher;
  now?: () => number;
  newRequestId?: () => string;
  /** Where fields that drift from the spec's shapes are reported; one per worker process (default: its own). */
  drift?: DriftReporter;
  /** Metrics and traces of each request (src/runtime/observability); none by default. */
  observer?: SupplierObserver;
}

/** Errors thrown while connecting: the request was never written, so nothing can have happened upstream. */
const BEFORE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function createHttpSupplierClient(options: HttpSupplierClientOptions): SupplierClient {
  const { profile, tokens } = options;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const ownDispatcher = options.dispatcher
    ? undefined
    : new Agent({ connections: options.maxConnections ?? 64, keepAliveTimeout: 30_000, pipelining: 1 });
  const dispatcher = options.dispatcher ?? ownDispatcher!;
  const now = options.now ?? Date.now;
  const newRequestId = options.newRequestId ?? randomUUID;
  const drift = options.drift ?? createDriftReporter();

  /** The `data` of a success envelope, not read yet: each operation reads its own. */
  async function call(
    operation: Exclude<SupplierOperation, 'ticket'>,
    body: unknown,
    context: CallContext,
  ): Promise<Answer> {
    const withSession = operation !== 'queryOrders';
    if (withSession && !context.sessionId) {
      throw new SupplierError('SupplierBadRequest', `${operation}: Session-Id is required`, { operation });
    }
    const timeoutMs = context.timeoutMs ?? profile.timeoutsMs[operation];
    let token = await tokens.getToken(context.signal);
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(operation, body, context, token, timeoutMs, withSession);
      } catch (err) {
        // 401 proves nothing was done; one re-issue covers an expired ticket.
        if (err instanceof SupplierError && err.type === 'SupplierUnauthorized' && attempt === 1) {
          tokens.invalidate(token);
          token = await tokens.getToken(context.signal);
          continue;
        }
        throw err;
      }
    }
  }

  /** One request, watched by the observer: its span's trace id, when traced, is the one sent as Trace-Id. */
  async function send(
    operation: Exclude<SupplierOperation, 'ticket'>,
    body: unknown,
    context: CallContext,
    token: string,
    timeoutMs: number,
    withSession: boolean,
  ): Promise<Answer> {
    const observed = options.observer?.request(operation);
    const traceId = observed?.traceId ?? context.traceId;
    try {
      const answer = await exchange(operation, body, context, token, timeoutMs, withSession, traceId);
      observed?.end({ httpStatus: 200 });
      return answer;
    } catch (err) {
      observed?.end(err instanceof SupplierError ? { httpStatus: err.details.httpStatus, errorType: err.type } : {});
      throw err;
    }
  }

  async function exchange(
    operation: Exclude<SupplierOperation, 'ticket'>,
    body: unknown,
    context: CallContext,
    token: string,
    timeoutMs: number,
    withSession: boolean,
    traceId: string | undefined,
  ): Promise<Answer> {
    const requestId = newRequestId();
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'request-id': requestId,
      'client-request-timestamp': String(Math.floor(now() / 1000)),
    };
    if (traceId) headers['trace-id'] = traceId;
    if (context.language) headers['language'] = context.language;
    if (context.ip) headers['ip'] = context.ip;
    if (withSession) {
      headers['session-id'] = context.sessionId!;
      headers['timeout-milliseconds'] = String(timeoutMs);
      if (context.currency) headers['currency'] = context.currency;
      if (context.test) headers['test'] = context.test;
    }

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onCallerAbort = () => controller.abort();
    context.signal?.addEventListener('abort', onCallerAbort, { once: true });
    // A signal aborted before the call never fires 'abort': without this, the request would still be sent.
    if (context.signal?.aborted) controller.abort();
    const base = { operation, requestId };

    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(`${baseUrl}${profile.paths[operation]}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          dispatcher,
          signal: controller.signal,
        });
      } catch (err) {
        throw classifyTransport(err, base, timedOut, timeoutMs);
      }
      let text: string;
      try {
        text = await res.body.text();
      } catch (err) {
        throw classifyTransport(err, { ...base, httpStatus: res.statusCode }, timedOut, timeoutMs);
      }
      return interpret(operation, res.statusCode, res.headers, text, requestId, token);
    } finally {
      clearTimeout(timer);
      context.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  function interpret(
    operation: Exclude<SupplierOperation, 'ticket'>,
    status: number,
    headers: Dispatcher.ResponseData['headers'],
    text: string,
    requestId: string,
    token: string,
  ): Answer {
    // The supplier's `msg` is untrusted text that may echo a guest's name or our own token: it travels as
    // the error's non-enumerable `supplierMessage`, never in its message or details, which worker logs
    // print. Text copied from the body is also redacted of the token.
    const redact = (s: string) => (token ? s.split(token).join('[redacted]') : s);
    let json: unknown;
    let parsed = false;
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      json = undefined;
    }
    const reading = parsed ? readAnswer(json, ENVELOPE, '') : undefined;
    const envelope = reading?.ok ? reading.value : undefined;
    if (envelope?.msg !== undefined) envelope.msg = redact(envelope.msg);
    const details = { operation, httpStatus: status, requestId, code: envelope?.code, supplierMessage: envelope?.msg };

    if (status !== 200) {
      const type = typeForStatus(status);
      const hinted = status === 429 ? parseRetryAfter(headers['retry-after'], now()) : undefined;
      // Honoured up to the profile's ceiling: a day's hint must not become a day's wait.
      const retryAfterMs = hinted === undefined ? undefined : Math.min(hinted, profile.retryAfterCeilingSeconds * 1000);
      throw new SupplierError(type, `${operation}: HTTP ${status}${envelope ? ` (code ${envelope.code})` : ''}`, {
        ...details,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (!envelope) {
      const issues = reading && !reading.ok ? reading.issues.map(redact) : ['(body): not JSON'];
      throw invalid(operation, `invalid response envelope: ${issues.join('; ')}`, { ...details, issues });
    }
    if (reading?.ok) drift.report(operation, reading.drift);
    if (envelope.code !== profile.codes.success) {
      const type = typeForCode(envelope.code);
      throw new SupplierError(type, `${operation}: supplier code ${envelope.code}`, details);
    }
    return { data: envelope.data, details, redact };
  }

  /** Reads `data` against `shape`; an unreadable decision field makes the whole answer invalid. */
  function readData<T>(operation: SupplierOperation, answer: Answer, shape: AnswerShape<T>, at = 'data'): T {
    const reading = readAnswer(answer.data, shape, at);
    if (!reading.ok) {
      const issues = reading.issues.map(answer.redact);
      throw invalid(operation, `invalid response: ${issues.join('; ')}`, { ...answer.details, issues });
    }
    drift.report(operation, reading.drift);
    return reading.value;
  }

  /** Each order on its own: a malformed one is set aside, never failing the orders beside it. */
  function readOrders(answer: Answer): OrderListing {
    const list = readData('queryOrders', answer, ORDER_LIST).orders ?? [];
    const listing: OrderListing = { orders: [], unreadable: [] };
    list.forEach((raw, i) => {
      const reading = readAnswer(raw, ORDER, `data.orders.${i}`);
      if (reading.ok) {
        drift.report(
          'queryOrders',
          reading.drift.map((p) => p.replace(/^data\.orders\.\d+/, 'data.orders[]')),
        );
        listing.orders.push(reading.value);
      } else {
        listing.unreadable.push(unreadableOrder(raw, reading.issues.map(answer.redact)));
      }
    });
    return listing;
  }

  function typeForStatus(status: number): SupplierErrorType {
    if (status === 400) return 'SupplierBadRequest';
    if (status === 401) return 'SupplierUnauthorized';
    if (status === 403) return 'SupplierForbidden';
    if (status === 404) return 'SupplierNotFound';
    if (status === 429) return 'SupplierRateLimited';
    if (status === 504) return 'SupplierGatewayTimeout';
    if (status >= 500) return 'SupplierServerError';
    // Any other status is outside the interface: we cannot say what the supplier did.
    return 'SupplierInvalidResponse';
  }

  function typeForCode(code: number): SupplierErrorType {
    const c = profile.codes;
    const byCode: Record<number, SupplierErrorType> = {
      [c.ariChanged]: 'SupplierAriChanged',
      [c.creditLimitExceeded]: 'SupplierCreditLimit',
      [c.badRequest]: 'SupplierBadRequest',
      [c.unauthorized]: 'SupplierUnauthorized',
      [c.forbidden]: 'SupplierForbidden',
      [c.notFound]: 'SupplierNotFound',
      [c.rateLimited]: 'SupplierRateLimited',
      [c.timeout]: 'SupplierGatewayTimeout',
      [c.systemError]: 'SupplierServerError',
      [c.dependencyFailure]: 'SupplierServerError',
    };
    return byCode[code] ?? 'SupplierBusinessError';
  }

  return {
    async checkAvail(req: CheckAvailRequest, context: CallContext): Promise<CheckAvailAnswer> {
      const answer = await call('checkAvail', req, context);
      const data = readData('checkAvail', answer, CHECK_AVAIL);
      // Beside what the decision reads: the fallback candidates, where the profile says they are (./candidates).
      const candidates = candidatesIn(answer.data, profile.fallbackCandidatesField);
      return candidates.length > 0 ? { ...data, candidates } : data;
    },
    async book(req: BookRequest, context: CallContext): Promise<HotelOrder> {
      // The callback URL goes under the field name the supplier profile gives (not documented by the spec).
      const { callbackUrl, ...rest } = req;
      const body = callbackUrl ? { ...rest, [profile.callbacks.urlField]: callbackUrl } : rest;
      return readData('book', await call('book', body, context), BOOK).hotelOrder;
    },
    async cancel(req: CancelRequest, context: CallContext): Promise<CancelData> {
      return readData('cancel', await call('cancel', req, context), CANCEL);
    },
    async queryOrders(req: QueryOrdersRequest, context): Promise<OrderListing> {
      return readOrders(await call('queryOrders', req, context));
    },
    async close() {
      await ownDispatcher?.close();
    },
  };
}

/** A success envelope's `data`, before its operation reads it, with what an error about it must carry. */
interface Answer {
  data: unknown;
  details: SupplierErrorDetails;
  redact: (text: string) => string;
}

function invalid(operation: SupplierOperation, what: string, details: SupplierErrorDetails): SupplierError {
  return new SupplierError('SupplierInvalidResponse', `${operation}: ${what}`, details);
}

/** Whatever can be told of an unreadable order: its reference, when that field at least is a string. */
function unreadableOrder(raw: unknown, issues: string[]): UnreadableOrder {
  const ref = (raw as { customerReferenceNo?: unknown } | null)?.customerReferenceNo;
  return typeof ref === 'string' && ref.length > 0 ? { customerReferenceNo: ref, issues } : { issues };
}

/** A transport failure as a SupplierError. Only failures while connecting are known not to have reached the supplier. */
export function classifyTransport(
  err: unknown,
  details: { operation: SupplierOperation; requestId?: string; httpStatus?: number },
  timedOut: boolean,
  timeoutMs: number,
): SupplierError {
  const code = transportCode(err);
  if (timedOut) {
    return new SupplierError(
      'SupplierClientTimeout',
      `${details.operation}: no answer within ${timeoutMs} ms`,
      details,
      { cause: err },
    );
  }
  if (code && BEFORE_SEND_CODES.has(code)) {
    return new SupplierError(
      'SupplierNetworkBeforeSend',
      `${details.operation}: could not connect (${code})`,
      details,
      { cause: err },
    );
  }
  const name = (err as Error)?.name;
  if (name === 'AbortError' || code === 'UND_ERR_ABORTED') {
    return new SupplierError('SupplierClientTimeout', `${details.operation}: aborted by the caller`, details, {
      cause: err,
    });
  }
  return new SupplierError(
    'SupplierNetworkAfterSend',
    `${details.operation}: connection failed after the request was sent (${code ?? name ?? 'unknown'})`,
    details,
    { cause: err },
  );
}

/** The system or undici code of a failed request, on the error or its cause (ECONNREFUSED, UND_ERR_...). */
export function transportCode(err: unknown): string | undefined {
  return (err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) {
    // Beyond the safe integer range (or Infinity) it is no usable delay, and Temporal cannot encode it.
    const ms = Number(v.trim()) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
