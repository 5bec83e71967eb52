/**
 * A SupplierClient that waits for the rate limiter before each request, so the worker never sends
 * over the supplier's limits. It waits rather than refusing: a refusal would only become a retry
 * later, while waiting sends the request at the first moment the supplier will take it.
 *
 * A 429 that still happens (another process on the same credential, a tighter supplier) stays the
 * SupplierError it is today, with its Retry-After hint.
 */
import { SupplierError } from './errors';
import type { SupplierClient } from './interface';
import type { RateLimitedOperation, SupplierRateLimiter } from './rate-limiter';

/** Wraps `inner` so every call first takes its tokens from `limiter`; close() closes `inner`. */
export function createRateLimitedSupplierClient(
  inner: SupplierClient,
  limiter: Pick<SupplierRateLimiter, 'acquire'>,
): SupplierClient {
  async function admitted(operation: RateLimitedOperation, signal: AbortSignal | undefined): Promise<void> {
    try {
      await limiter.acquire(operation, signal);
    } catch (err) {
      // Nothing was sent. Typed as the HTTP client types a caller's abort, so callers see one type for it.
      throw new SupplierError(
        'SupplierClientTimeout',
        `${operation}: stopped waiting for the rate limit (aborted or closed)`,
        { operation },
        { cause: err },
      );
    }
  }

  return {
    async checkAvail(request, context) {
      await admitted('checkAvail', context.signal);
      return inner.checkAvail(request, context);
    },
    async book(request, context) {
      await admitted('book', context.signal);
      return inner.book(request, context);
    },
    async queryOrders(request, context) {
      await admitted('queryOrders', context.signal);
      return inner.queryOrders(request, context);
    },
    async cancel(request, context) {
      await admitted('cancel', context.signal);
      return inner.cancel(request, context);
    },
    close: () => inner.close(),
  };
}
