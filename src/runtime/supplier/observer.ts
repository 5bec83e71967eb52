/**
 * What the supplier side tells the worker's metrics and traces (src/runtime/observability implements it): each
 * request as it starts and ends, each wait for the rate limiter, each QueryOrders batch. The supplier
 * code knows nothing of Prometheus or OpenTelemetry; without an observer nothing is recorded.
 */
import type { SupplierErrorType, SupplierOperation } from './errors';

/** How a request ended: the HTTP status when an answer came, the error type when it failed. */
export interface RequestEnding {
  httpStatus?: number;
  errorType?: SupplierErrorType;
}

/** One request being watched. */
export interface ObservedRequest {
  /** The trace this request belongs to, when it is traced: sent as `Trace-Id` instead of the caller's. */
  traceId?: string;
  end(ending: RequestEnding): void;
}

export interface SupplierObserver {
  /** Called just before a request is sent (after any rate-limit wait). */
  request(operation: Exclude<SupplierOperation, 'ticket'>): ObservedRequest;
  /** A request waited this long (seconds) for the worker's token bucket. */
  rateLimitWait(operation: string, seconds: number): void;
  /** The coalescer sent one QueryOrders request carrying this many references. */
  queryOrdersBatch(references: number): void;
}
