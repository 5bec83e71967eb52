/**
 * The supplier side of a worker, built from configuration: the HTTP client, the credential's rate
 * limiter in front of it, and the QueryOrders coalescer. One stack per process and credential.
 */
import { createQueryOrdersCoalescer, type QueryOrdersCoalescer } from './coalescer';
import { createDriftReporter, type DriftReporter } from './drift';
import { createHttpSupplierClient } from './http-client';
import type { SupplierClient } from './interface';
import type { SupplierObserver } from './observer';
import { createRateLimitedSupplierClient } from './limited-client';
import type { SupplierProfile } from '../config/supplier-profile';
import { SupplierRateLimiter, type RateLimiterOptions } from './rate-limiter';
import { reachSupplier, type Reach } from './reachability';
import { staticToken, ticketTokens } from './token';

/** What the stack reads from configuration; `AppConfig['supplier']` (src/runtime/config) is one. */
export interface SupplierStackConfig {
  baseUrl: string;
  credentials: { kind: 'token'; token: string } | { kind: 'ticket'; appKey: string; appSecret: string };
  profile: SupplierProfile;
  maxConnections: number;
  /** Default 20 ms, 50 references, no spacing. */
  queryBatch?: { windowMs: number; maxReferences: number; minIntervalMs?: number };
  /** Default on. */
  rateLimit?: boolean;
}

/** A client for the activities, the coalescer for order lookups, and one close for both. */
export interface SupplierStack {
  /** Rate limited when the configuration says so. */
  supplier: SupplierClient;
  orders: QueryOrdersCoalescer;
  /** Fields of supplier answers that drift from the spec's shapes, counted per path (logged once each). */
  drift: DriftReporter;
  /** Whether the supplier answers and, for a Ticket credential, issues a Ticket (asked once, at start). */
  reach(): Promise<Reach>;
  /** Stops waiting lookups and closes the connection pools. */
  close(): Promise<void>;
}

/**
 * Builds the supplier stack the configuration describes; `limiter` tunes the rate limiter (see
 * RateLimiterOptions), `drift` receives schema drift (default: a reporter of its own, logging to the console).
 */
export function createSupplierStack(
  config: SupplierStackConfig,
  options: {
    limiter?: Pick<RateLimiterOptions, 'capacity' | 'marginMs'>;
    drift?: DriftReporter;
    /** Metrics and traces (src/runtime/observability): requests, rate-limit waits, QueryOrders batches. */
    observer?: SupplierObserver;
  } = {},
): SupplierStack {
  const { baseUrl, profile, credentials, maxConnections } = config;
  const tokens =
    credentials.kind === 'token'
      ? staticToken(credentials.token)
      : ticketTokens({
          baseUrl,
          profile,
          appKey: credentials.appKey,
          appSecret: credentials.appSecret,
        });
  const drift = options.drift ?? createDriftReporter();
  const { observer } = options;
  const http = createHttpSupplierClient({ baseUrl, profile, tokens, maxConnections, drift, observer });
  const ownLimiter =
    config.rateLimit !== false
      ? new SupplierRateLimiter({ ...options.limiter, limits: profile.rateLimits })
      : undefined;
  const limiter = ownLimiter && observer ? timedLimiter(ownLimiter, observer) : ownLimiter;

  const supplier = limiter ? createRateLimitedSupplierClient(http, limiter) : http;
  // The coalescer takes its tokens itself, from the shared limiter, so it gets the unlimited client.
  const orders = createQueryOrdersCoalescer({
    supplier: http,
    profile,
    windowMs: config.queryBatch?.windowMs,
    maxReferences: config.queryBatch?.maxReferences,
    minIntervalMs: config.queryBatch?.minIntervalMs,
    limiter,
    onBatch: observer ? (n) => observer.queryOrdersBatch(n) : undefined,
  });

  return {
    supplier,
    orders,
    drift,
    reach: () => reachSupplier({ baseUrl, ...(credentials.kind === 'ticket' ? { tickets: tokens } : {}) }),
    async close() {
      orders.close();
      ownLimiter?.close();
      await http.close();
      await tokens.close?.();
    },
  };
}

/** The limiter, telling the observer how long each request waited for its tokens. */
function timedLimiter(limiter: SupplierRateLimiter, observer: SupplierObserver): Pick<SupplierRateLimiter, 'acquire'> {
  return {
    async acquire(operation, signal) {
      const started = performance.now();
      await limiter.acquire(operation, signal);
      observer.rateLimitWait(operation, (performance.now() - started) / 1000);
    },
  };
}
