/**
 * Merges QueryOrders lookups by reference into shared requests, so hundreds of bookings polling at
 * the same moment (after a supplier incident) cost a handful of requests instead of hundreds of 429s.
 *
 * How a lookup travels:
 *  - when nothing is queued or in flight it is sent at once (on the next turn of the event loop, so
 *    lookups made in the same turn still share it): a lone booking never waits for a window;
 *  - lookups that arrive while a request is in flight wait `windowMs` for company, then go together;
 *  - a request follows the previous one by at least `minIntervalMs`: in a storm, polls collect for that
 *    long and share a request, while a poll after a quiet spell still goes at once;
 *  - a request carries at most `maxReferences` references, and fewer than the profile's `queryOrders.pageSize`;
 *    a full batch goes without waiting;
 *  - with a limiter, the batch is cut only once a token is granted, so it keeps filling while it waits.
 * Each caller gets the orders whose `customerReferenceNo` is its own, or [] (not found); a failed
 * request rejects each of its callers with the same SupplierError, and an order that cannot be read
 * rejects only the callers it may belong to (see ordersOf). An answer that may have been cut short at the
 * supplier's page (a page's worth of orders, or "page size exceeded") answers nobody: its references are asked
 * again in halves, since the order left out may be any reference's, a listed one's Confirmed order included, and
 * "not found" lets a booking send Book again. One process, one coalescer: it holds no global state.
 */
import { AsyncResource } from 'node:async_hooks';
import { isSupplierError, SupplierError } from './errors';
import type { SupplierClient } from './interface';
import type { SupplierRateLimiter } from './rate-limiter';
import { ordersOf } from './orders';
import type { SupplierProfile } from '../config/supplier-profile';
import type { HotelOrder, OrderListing } from './schemas';

/** Looks up orders by customer reference, sharing requests with concurrent lookups. */
export interface QueryOrdersCoalescer {
  /** The orders for exactly this reference ([] when the supplier has none); rejects with the request's SupplierError. */
  lookup(customerReferenceNo: string, signal?: AbortSignal, traceId?: string): Promise<HotelOrder[]>;
  /** Rejects the lookups not sent yet; requests in flight still answer their callers. */
  close(): void;
}

export interface QueryOrdersCoalescerOptions {
  /** Give it the client without rate limiting when `limiter` is set, or each request pays twice. */
  supplier: Pick<SupplierClient, 'queryOrders'>;
  /**
   * Which order status is Confirmed (a lookup's share of an answer depends on it, see ordersOf), the supplier's
   * page size and its "page size exceeded" code (when an answer may be cut short).
   */
  profile: Pick<SupplierProfile, 'orderStatus' | 'queryOrders' | 'codes'>;
  /** How long lookups arriving behind a request in flight wait for company. Default 20 ms. */
  windowMs?: number;
  /** References per request. Default 50; never a page size or more (see the profile's `queryOrders.pageSize`). */
  maxReferences?: number;
  /**
   * Least time between two requests (a full batch goes without waiting). Default 0. It is what makes
   * a storm's polls, which a busy worker runs a few milliseconds apart, share requests.
   */
  minIntervalMs?: number;
  /** The credential's rate limiter: the coalescer waits for a queryOrders token before each request. */
  limiter?: Pick<SupplierRateLimiter, 'acquire'>;
  /** Told the number of references of each request sent (the batch-size metric). */
  onBatch?: (references: number) => void;
}

interface Waiter {
  resolve(orders: HotelOrder[]): void;
  reject(err: unknown): void;
  traceId?: string;
  /** The caller's async context (its trace, when traced), in which a request carrying only this lookup runs. */
  scope: AsyncResource;
  /** The request carrying this lookup, once sent. */
  batch?: Batch;
}

interface Batch {
  waiters: Map<string, Set<Waiter>>;
  /** Callers still waiting for the answer; when none are left the request is abandoned. */
  live: number;
  controller: AbortController;
}

/** A coalescer over one supplier client; create one per worker process. */
export function createQueryOrdersCoalescer(options: QueryOrdersCoalescerOptions): QueryOrdersCoalescer {
  const { supplier, limiter, profile } = options;
  const windowMs = options.windowMs ?? 20;
  // Under the page, so an answer listing one order per reference asked for is whole, not a page that may be cut.
  const maxReferences = Math.max(1, Math.min(options.maxReferences ?? 50, profile.queryOrders.pageSize - 1));
  const minIntervalMs = Math.max(0, options.minIntervalMs ?? 0);
  /** When the last request was sent (ms since epoch); spacing starts from it. */
  let lastSentAt = -Infinity;
  /** Where a shared request runs: the coalescer's own context, belonging to no single caller's trace. */
  const sharedScope = new AsyncResource('QueryOrdersCoalescer');

  /** Lookups not sent yet, by reference, in arrival order: one reference is sent once however many ask. */
  const queue = new Map<string, Set<Waiter>>();
  let inFlight = 0;
  let timer: { kind: 'now'; handle: NodeJS.Immediate } | { kind: 'window'; handle: NodeJS.Timeout } | undefined;
  /** A drain is running (possibly waiting for a token): new lookups join the batch it will cut. */
  let draining = false;
  let closed = false;

  function schedule(): void {
    if (draining || closed) return;
    const full = queue.size >= maxReferences;
    if (timer) {
      if (timer.kind === 'window' && full) {
        clearTimeout(timer.handle);
        timer = undefined;
        void drain();
      }
      return;
    }
    const spacing = Math.max(0, lastSentAt + minIntervalMs - Date.now());
    timer =
      full || (inFlight === 0 && spacing === 0)
        ? { kind: 'now', handle: setImmediate(fire) }
        : { kind: 'window', handle: setTimeout(fire, Math.max(inFlight > 0 ? windowMs : 0, spacing)) };
  }

  function fire(): void {
    timer = undefined;
    void drain();
  }

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.size > 0 && !closed) {
        if (limiter) await limiter.acquire('queryOrders');
        // Every caller may have given up while we waited.
        if (queue.size === 0 || closed) break;
        send(cut());
        if (queue.size < maxReferences) break;
      }
    } catch (err) {
      // Only a closed limiter rejects here: nobody queued can be served any more.
      failQueued(err);
    } finally {
      draining = false;
    }
    // What is left waits for company behind the request just sent.
    if (queue.size > 0) schedule();
  }

  function cut(): Map<string, Set<Waiter>> {
    const batch = new Map<string, Set<Waiter>>();
    for (const [ref, waiters] of queue) {
      if (batch.size >= maxReferences) break;
      batch.set(ref, waiters);
      queue.delete(ref);
    }
    return batch;
  }

  function send(waiters: Map<string, Set<Waiter>>): void {
    const batch: Batch = { waiters, live: 0, controller: new AbortController() };
    for (const set of waiters.values()) {
      for (const w of set) w.batch = batch;
      batch.live += set.size;
    }
    const all = [...waiters.values()].flatMap((set) => [...set]);
    // A Trace-Id groups one flow's requests; a shared request belongs to no single flow.
    const traceId = all.length === 1 ? all[0]!.traceId : undefined;
    // Sent from a timer, whose async context is whichever lookup happened to schedule it: a lone lookup's
    // request runs in that lookup's own context instead, so its span joins the right trace.
    const scope = all.length === 1 ? all[0]!.scope : sharedScope;
    inFlight++;
    lastSentAt = Date.now();
    options.onBatch?.(waiters.size);
    // Through a promise, so even a client that throws synchronously answers every caller.
    new Promise<OrderListing>((resolve) =>
      resolve(
        scope.runInAsyncScope(() =>
          supplier.queryOrders(
            { customerReferenceNos: [...waiters.keys()] },
            { signal: batch.controller.signal, ...(traceId ? { traceId } : {}) },
          ),
        ),
      ),
    ).then(
      (listing) => {
        // Counted down before callers resume, so a caller that looks up again at once is sent at once.
        inFlight--;
        if (mayBeCutShort(profile, listing)) {
          const listed = listing.orders.length + listing.unreadable.length;
          askAgain(waiters, () => cutShortError(listed, profile.queryOrders.pageSize));
          return;
        }
        for (const [ref, set] of waiters) {
          let mine: HotelOrder[];
          try {
            mine = ordersOf(listing, ref, profile);
          } catch (err) {
            for (const w of set) w.reject(err);
            continue;
          }
          for (const w of set) w.resolve([...mine]);
        }
      },
      (err: unknown) => {
        inFlight--;
        if (isPageSizeExceeded(profile, err)) {
          askAgain(waiters, () => err);
          return;
        }
        for (const set of waiters.values()) for (const w of set) w.reject(err);
      },
    );
  }

  /**
   * The references of an answer that may have been cut short, asked again in two requests of half as many; one
   * reference alone that still fills the page can be asked no smaller, and its callers get `error` (still unknown).
   */
  function askAgain(waiters: Map<string, Set<Waiter>>, error: () => unknown): void {
    // Callers that left while the request was out are not asked for again.
    const live = [...waiters].filter(([, set]) => set.size > 0);
    if (live.length === 0) return;
    if (live.length === 1) {
      const err = error();
      for (const w of live[0]![1]) w.reject(err);
      return;
    }
    const half = Math.ceil(live.length / 2);
    for (const part of [live.slice(0, half), live.slice(half)]) void sendAgain(new Map(part));
  }

  /** Sends a part of a batch asked again, after its token; a closed coalescer or limiter rejects its callers. */
  async function sendAgain(waiters: Map<string, Set<Waiter>>): Promise<void> {
    const reject = (err: unknown) => {
      for (const set of waiters.values()) for (const w of set) w.reject(err);
    };
    try {
      if (limiter) await limiter.acquire('queryOrders');
    } catch (err) {
      reject(err);
      return;
    }
    if (closed) reject(closedError());
    else if ([...waiters.values()].some((set) => set.size > 0)) send(waiters);
  }

  function failQueued(err: unknown): void {
    const waiters = [...queue.values()].flatMap((set) => [...set]);
    queue.clear();
    for (const w of waiters) w.reject(err);
  }

  /** Takes an aborted caller out; a request nobody waits for any more is abandoned. */
  function leave(ref: string, waiter: Waiter): void {
    const batch = waiter.batch;
    if (batch) {
      if (batch.waiters.get(ref)?.delete(waiter) && --batch.live === 0) batch.controller.abort();
      return;
    }
    const set = queue.get(ref);
    set?.delete(waiter);
    if (set?.size === 0) queue.delete(ref);
  }

  return {
    lookup(customerReferenceNo, signal, traceId) {
      if (closed) return Promise.reject(closedError());
      if (signal?.aborted) return Promise.reject(abortedError(signal));
      return new Promise<HotelOrder[]>((resolve, reject) => {
        const onAbort = () => {
          leave(customerReferenceNo, waiter);
          reject(abortedError(signal!));
        };
        const waiter: Waiter = {
          traceId,
          scope: new AsyncResource('QueryOrdersLookup'),
          resolve(orders) {
            signal?.removeEventListener('abort', onAbort);
            resolve(orders);
          },
          reject(err) {
            signal?.removeEventListener('abort', onAbort);
            reject(err);
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        let set = queue.get(customerReferenceNo);
        if (!set) queue.set(customerReferenceNo, (set = new Set()));
        set.add(waiter);
        schedule();
      });
    },

    close() {
      closed = true;
      if (timer?.kind === 'now') clearImmediate(timer.handle);
      if (timer?.kind === 'window') clearTimeout(timer.handle);
      timer = undefined;
      failQueued(closedError());
    },
  };
}

/**
 * Whether a QueryOrders answer may have been cut short at the supplier's page: it lists `queryOrders.pageSize`
 * orders or more, readable or not. Only an answer under the page proves that an order it does not list does not exist.
 */
export function mayBeCutShort(profile: Pick<SupplierProfile, 'queryOrders'>, listing: OrderListing): boolean {
  return listing.orders.length + listing.unreadable.length >= profile.queryOrders.pageSize;
}

/** A QueryOrders refused as asking for more than one answer lists (`codes.pageSizeExceeded`, whatever its HTTP status). */
export function isPageSizeExceeded(profile: Pick<SupplierProfile, 'codes'>, err: unknown): boolean {
  return isSupplierError(err) && err.details.code === profile.codes.pageSizeExceeded;
}

/** The caller's own abort, typed as the HTTP client types it. Nothing was sent on its behalf alone. */
function abortedError(signal: AbortSignal): SupplierError {
  return new SupplierError(
    'SupplierClientTimeout',
    'queryOrders: aborted by the caller',
    { operation: 'queryOrders' },
    { cause: signal.reason },
  );
}

/** An answer that filled the supplier's page for one reference: what it would decide is a guess, so it is unknown. */
function cutShortError(listed: number, pageSize: number): SupplierError {
  const issue = `data.orders: ${listed} orders for one reference, the page size is ${pageSize}: the answer may be cut short`;
  return new SupplierError('SupplierInvalidResponse', `queryOrders: ${issue}`, {
    operation: 'queryOrders',
    issues: [issue],
  });
}

function closedError(): Error {
  return new Error('QueryOrders coalescer closed');
}
