/**
 * Client-side rate limiting: token buckets per operation plus one for every request, refilled
 * continuously at the supplier profile's `rateLimits`, so a worker waits instead of earning a 429.
 *
 * The supplier counts per credential, so one limiter stands for one credential: every client that
 * sends with the same credential from this process must share it.
 *
 * Buckets hold one token by default. A bucket of capacity C lets C requests out back to back, so
 * any one-second window could then see C + rate requests; with C = 1 requests are spaced at least
 * 1/rate apart and no second ever holds more than the limit, whichever way the supplier counts.
 * Requests do not reach the supplier exactly when their token was granted (a Ticket renewal, a new
 * connection, the network), so the rate is lowered a little: spacing grows by `marginMs`/rate, and a
 * second of the supplier's clock stays within the limit while delays vary by up to `marginMs`.
 */
import type { SupplierProfile } from '../config/supplier-profile';

const EPSILON = 1e-9;

/** The operations the supplier limits one by one; each request also counts against `overall`. */
export type RateLimitedOperation = 'checkAvail' | 'book' | 'queryOrders' | 'cancel';

/** Requests per second, per operation and overall (the profile's `rateLimits`). */
export type RateLimits = SupplierProfile['rateLimits'];

/** A bucket refilled continuously at `ratePerSecond` up to `capacity`; it starts full. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly ratePerSecond: number,
    readonly capacity: number,
    private readonly now: () => number,
  ) {
    this.tokens = capacity;
    this.at = now();
  }

  /** Tokens available now, fractions included. */
  available(): number {
    const t = this.now();
    // A clock that steps back must not drain the bucket.
    const elapsed = Math.max(0, t - this.at);
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed / 1000) * this.ratePerSecond);
    this.at = t;
    return this.tokens;
  }

  /** Whether a whole token is there. Refill is floating point: a token due now may read 0.9999999. */
  hasToken(): boolean {
    return this.available() >= 1 - EPSILON;
  }

  /** Milliseconds until a whole token is there; 0 when one is. */
  msUntilToken(): number {
    if (this.hasToken()) return 0;
    return ((1 - this.tokens) / this.ratePerSecond) * 1000;
  }

  /** Takes one token; callers check `hasToken()` first. */
  take(): void {
    this.available();
    this.tokens -= 1;
  }
}

export interface RateLimiterOptions {
  limits: RateLimits;
  /** Tokens a bucket holds (burst size); at least 1, at most one second's worth. Default 1. */
  capacity?: number;
  /** How much the delay from grant to arrival may vary without a second holding more than the limit. Default 50 ms (rates 5% lower). */
  marginMs?: number;
  now?: () => number;
}

interface Waiter {
  operation: RateLimitedOperation;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Token buckets for one credential; `acquire` waits, in arrival order, until a request may go. */
export class SupplierRateLimiter {
  private readonly buckets: Record<RateLimitedOperation | 'overall', TokenBucket>;
  /** Everyone waiting, oldest first: the oldest waiter whose buckets have tokens goes next. */
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: RateLimiterOptions) {
    const now = options.now ?? Date.now;
    const slowdown = 1000 / (1000 + (options.marginMs ?? 50));
    const bucket = (limit: number) => {
      const capacity = Math.max(1, Math.min(options.capacity ?? 1, limit));
      return new TokenBucket(limit * slowdown, capacity, now);
    };
    const l = options.limits;
    this.buckets = {
      overall: bucket(l.overall),
      checkAvail: bucket(l.checkAvail),
      book: bucket(l.book),
      queryOrders: bucket(l.queryOrders),
      // No documented limit of its own: then only `overall` limits it (a bucket at that rate never binds first).
      cancel: bucket(l.cancel ?? l.overall),
    };
  }

  /** Takes a token for the operation and one overall when both have one; never waits. */
  tryAcquire(operation: RateLimitedOperation): boolean {
    const own = this.buckets[operation];
    const overall = this.buckets.overall;
    if (!own.hasToken() || !overall.hasToken()) return false;
    own.take();
    overall.take();
    return true;
  }

  /** Milliseconds until `tryAcquire(operation)` would succeed, if nobody else takes a token first. */
  msUntilAvailable(operation: RateLimitedOperation): number {
    return Math.max(this.buckets[operation].msUntilToken(), this.buckets.overall.msUntilToken());
  }

  /**
   * Resolves when a request for the operation may be sent, its tokens taken. Rejects with the
   * signal's reason when aborted first (its place in line is given up), or when the limiter closes.
   */
  acquire(operation: RateLimitedOperation, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new Error('rate limiter closed'));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    // With others in line, pump() decides: taking a token here could jump ahead of them.
    if (this.waiters.length === 0 && this.tryAcquire(operation)) return Promise.resolve();

    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(abortReason(signal!));
        this.pump();
      };
      const waiter: Waiter = {
        operation,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Rejects everyone still waiting; later acquires reject at once. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new Error('rate limiter closed'));
  }

  /** Lets out every waiter that can go now, then sleeps until the next one can. */
  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const blocked = new Set<RateLimitedOperation>();
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      // Once one waiter of an operation must wait, the later ones of that operation wait behind it.
      if (!blocked.has(w.operation) && this.tryAcquire(w.operation)) w.resolve();
      else {
        blocked.add(w.operation);
        still.push(w);
      }
    }
    this.waiters = still;
    if (still.length === 0) return;
    const waitMs = Math.min(...[...blocked].map((op) => this.msUntilAvailable(op)));
    // Rounded up so the timer never fires a hair early and spins.
    this.timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(waitMs)));
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}
