/**
 * How a supplier call can end badly: a closed set of stable error types.
 *
 * The one question that matters for money is whether the supplier may have acted on the request.
 * `mayHaveActed` answers it: true means a Book might exist and must be verified with QueryOrders,
 * false means it cannot exist (the request was refused or never arrived) and a retry is safe.
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

export type SupplierOperation = 'ticket' | 'checkAvail' | 'book' | 'queryOrders';

/** Which endings leave the outcome of a write unknown. */
const MAY_HAVE_ACTED: ReadonlySet<SupplierErrorType> = new Set<SupplierErrorType>([
  'SupplierGatewayTimeout',
  'SupplierServerError',
  'SupplierNetworkAfterSend',
  'SupplierClientTimeout',
  'SupplierInvalidResponse',
]);

export interface SupplierErrorDetails {
  operation: SupplierOperation;
  httpStatus?: number;
  /** Envelope `code`, when a body was read. */
  code?: number;
  /** Envelope `msg`, when a body was read. Never contains request headers or secrets. */
  supplierMessage?: string;
  /** From a Retry-After header, when the supplier sent one. */
  retryAfterMs?: number;
  requestId?: string;
  /** JSON paths that failed validation, for SupplierInvalidResponse. */
  issues?: string[];
}

/** A classified supplier failure. Messages carry no token, ticket or secret. */
export class SupplierError extends Error {
  override readonly name = 'SupplierError';
  readonly mayHaveActed: boolean;

  constructor(
    readonly type: SupplierErrorType,
    message: string,
    readonly details: SupplierErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.mayHaveActed = MAY_HAVE_ACTED.has(type);
  }
}

export function isSupplierError(err: unknown): err is SupplierError {
  return err instanceof SupplierError;
}
