/**
 * The sandbox supplier's options and the shapes its handle shows (orders, calls, stats, callbacks): what every part
 * of the sandbox and its callers share, so this file imports none of the sandbox's parts but its own leaves.
 */
import { randomBytes } from 'node:crypto';
import { defaultSupplierProfile, type SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { Money } from '../../src/runtime/supplier/schemas';
import type { AppKey } from './auth';
import type { RateLimits } from './rate-limit';

/**
 * What a worker's SUPPLIER_PROFILE must say for this sandbox where it differs from the defaults. Its QueryOrders
 * answers list every order they match (no page), stated as a page as large as the sweep's own ceiling; with the
 * profile's conservative default (20), every listing of more orders would be split or reported as possibly cut.
 */
export const SANDBOX_PROFILE = { queryOrders: { pageSize: 3_000 } } as const;

export type SandboxOperation = 'ticket' | 'checkAvail' | 'book' | 'queryOrders' | 'cancel';
export type QueryOrdersFault = '429' | '500' | '503' | 'malformed' | 'hang';

export interface SandboxOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  profile: SupplierProfile;
  appKeys: AppKey[];
  /** Also accepted as a bearer token; rate limits then count per client IP. */
  staticToken?: string;
  jwtSecret: string;
  /** demo: orders settle after confirmAfterMs; realistic: after 3 to 10 minutes, as the spec says Book takes. */
  mode: 'demo' | 'realistic';
  confirmAfterMs: number;
  rateLimits: RateLimits;
  /** The real supplier sends no Retry-After on 429; set to send one (seconds). */
  rateLimitRetryAfterSeconds?: number;
  /** Answer as a drifting live supplier would (./drift.ts), for every order and CheckAvail. */
  drift?: boolean;
  /** Signs order-status callbacks the way the profile's `callbacks` says; without it they go unsigned. */
  callbackSecret?: string;
  /** The sandbox's clock (booking times, stay dates, settle delays); tests align it with a time-skipping server. */
  now?: () => number;
}

/** One order-status callback delivery attempt, for tests (GET /_sandbox/callbacks). */
export interface SandboxCallbackAttempt {
  at: string;
  customerReferenceNo: string;
  status: number;
  attempt: number;
  /** HTTP status of the receiver's answer; 0 when it could not be reached. */
  httpStatus: number;
}

export interface SandboxCall {
  at: string;
  op: SandboxOperation;
  requestId?: string;
  /** The `Trace-Id` header received: the worker's trace id when it traces, else its workflow id. */
  traceId?: string;
  sessionId?: string;
  customerReferenceNos?: string[];
  httpStatus: number;
  fault?: string;
  /** QueryOrders: the references whose listing lagged behind a Confirmed already answered (Test lagAfterConfirmedMs). */
  lagged?: string[];
}

export interface SandboxOrderView {
  customerReferenceNo: string;
  platformReferenceNo: string;
  status: number;
  outcome: string;
  ratePkgId: string;
  price: Money;
  createdAt: string;
  queriesSeen: number;
  test: string;
  /** A Cancel the sandbox took: when, and the service fee it charged (the policy's fee at that moment). */
  cancel?: { requestedAt: string; serviceFee: Money };
}

export interface SandboxStats {
  byOperation: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  queryOrders: { requests: number; references: number };
  /** Highest number of requests seen within one wall-clock second, per operation. */
  peakPerSecond: Record<string, number>;
}

export interface SandboxRuntimeConfig {
  rateLimits?: Partial<RateLimits>;
  confirmAfterMs?: number;
  mode?: 'demo' | 'realistic';
  queryOrders?: { fault: QueryOrdersFault; times: number } | null;
  rateLimitRetryAfterSeconds?: number | null;
}

export interface Sandbox {
  url: string;
  port: number;
  orders(): SandboxOrderView[];
  calls(op?: SandboxOperation): SandboxCall[];
  stats(): SandboxStats;
  reset(): void;
  configure(config: SandboxRuntimeConfig): void;
  setOrderStatus(customerReferenceNo: string, status: number): boolean;
  callbacks(): SandboxCallbackAttempt[];
  close(): Promise<void>;
}

/** The sandbox's options when nothing is overridden: loopback port 8787, demo mode, the default profile's limits. */
export function defaultSandboxOptions(): SandboxOptions {
  const profile = defaultSupplierProfile;
  return {
    host: '127.0.0.1',
    port: 8787,
    profile,
    appKeys: [
      { appKey: 'sandbox-app', appSecret: 'sandbox-secret', permissions: ['search', 'trade', 'query'] },
      { appKey: 'sandbox-readonly', appSecret: 'sandbox-readonly-secret', permissions: ['query'] },
    ],
    jwtSecret: randomBytes(32).toString('hex'),
    mode: 'demo',
    confirmAfterMs: 3_000,
    rateLimits: { ...profile.rateLimits },
  };
}
