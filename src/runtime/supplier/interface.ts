/**
 * The supplier client as the activities see it. One implementation talks HTTP with undici
 * (http-client.ts); tests use the same implementation against the sandbox supplier.
 *
 * Every method either returns the parsed `data` of a success envelope or throws a SupplierError
 * (errors.ts). Expected business answers that arrive as errors (ARI changed, credit limit) are
 * thrown as typed errors here; the activities turn them into values.
 */
import type {
  BookRequest,
  CancelData,
  CancelRequest,
  CheckAvailAnswer,
  CheckAvailRequest,
  HotelOrder,
  OrderListing,
  QueryOrdersRequest,
} from './schemas';

/** Per-call request context, sent as headers. None of it is secret. */
export interface CallContext {
  /** `Session-Id`: required for CheckAvail and Book; the same id through one booking flow. */
  sessionId?: string;
  /** `Trace-Id`: groups the requests of one flow (we use the workflow id). */
  traceId?: string;
  currency?: string;
  language?: string;
  ip?: string;
  /** `Test` header, e.g. `scenario=soldOut`; the sandbox supplier reads further keys. */
  test?: string;
  /** Aborts the call (activity cancellation). An aborted call is classified like a client timeout. */
  signal?: AbortSignal;
  /** Overrides the profile's timeout for this call; also sent as `Timeout-Milliseconds`. */
  timeoutMs?: number;
}

export interface SupplierClient {
  checkAvail(request: CheckAvailRequest, context: CallContext): Promise<CheckAvailAnswer>;
  book(request: BookRequest, context: CallContext): Promise<HotelOrder>;
  /** The orders found, each read on its own: one that cannot be read is listed apart (see ordersOf). */
  queryOrders(
    request: QueryOrdersRequest,
    context: Omit<CallContext, 'sessionId' | 'currency' | 'test'> & { test?: string },
  ): Promise<OrderListing>;
  /** Asks the supplier to cancel an order; the answer is not final, the order is then followed with QueryOrders. */
  cancel(request: CancelRequest, context: CallContext): Promise<CancelData>;
  /** Releases pooled connections. */
  close(): Promise<void>;
}

/** Where the bearer token comes from: a static token, or Ticket with caching and renewal. */
export interface TokenProvider {
  /** A valid token; may call Ticket. */
  getToken(signal?: AbortSignal): Promise<string>;
  /** Called after a 401: drop the cached token so the next getToken issues a new one. */
  invalidate(token: string): void;
  /** Releases what the provider opened itself (a connection pool), never what it was given. Optional: a static token holds nothing. */
  close?(): Promise<void>;
}
