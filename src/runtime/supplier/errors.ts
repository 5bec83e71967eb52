/**
 * How a supplier call can end badly: a closed set of stable error types, with the HTTP status and
 * envelope code they came from. Whether a Book that ended so may have made an order is not decided
 * here but by the Book rule (src/runtime/rules/book.ts), from these details and the supplier profile.
 */

export const SupplierErrorTypes = [
  'SupplierBadRequest', // 400 / parameter error
  'SupplierUnauthorized', // 401: missing, invalid or expired token
  'SupplierForbidden', // 403: the key lacks permission
  'SupplierNotFound', // 404
  'SupplierRateLimited', // 429: refused before any work
  'SupplierGatewayTimeout', // 504: upstream delay; the request may still complete
  'SupplierServerError', // other 5xx or a system-error code
  'SupplierNetworkBeforeSend', // connection refused, DNS failure: nothing reached the supplier
  'SupplierNetworkAfterSend', // the connection broke after the request was sent
  'SupplierClientTimeout', // our own deadline passed while waiting for the answer
  'SupplierInvalidResponse', // non-JSON body or a body that does not match the schema
  'SupplierAriChanged', // CheckAvail: price or inventory changed
  'SupplierCreditLimit', // Book: the pre-paid account cannot cover it
  'SupplierBusinessError', // any other envelope code
] as const;
export type SupplierErrorType = (typeof SupplierErrorTypes)[number];

export type SupplierOperation = 'ticket' | 'checkAvail' | 'book' | 'queryOrders' | 'cancel';

export interface SupplierErrorDetails {
  operation: SupplierOperation;
  httpStatus?: number;
  /** Envelope `code`, when a body was read. */
  code?: number;
  /** From a Retry-After header, when the supplier sent one. */
  retryAfterMs?: number;
  requestId?: string;
  /** JSON paths that failed validation, for SupplierInvalidResponse. */
  issues?: string[];
}

/** A classified supplier failure. Messages and details carry no token, ticket, secret or supplier text. */
export class SupplierError extends Error {
  override readonly name = 'SupplierError';
  readonly details: SupplierErrorDetails;
  /**
   * The envelope's `msg`, redacted of our credentials: untrusted text that may echo a guest's name. Not
   * in `details` and not enumerable, so a logged or serialized error never prints it; only the Book
   * outcome (a payload, encrypted where payloads are) carries it on.
   */
  declare readonly supplierMessage?: string;

  constructor(
    readonly type: SupplierErrorType,
    message: string,
    details: SupplierErrorDetails & { supplierMessage?: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    const { supplierMessage, ...rest } = details;
    this.details = rest;
    Object.defineProperty(this, 'supplierMessage', { value: supplierMessage, enumerable: false });
  }
}

export function isSupplierError(err: unknown): err is SupplierError {
  return err instanceof SupplierError;
}
