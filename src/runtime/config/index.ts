/**
 * The worker's configuration: one zod schema over environment variables, parsed once at start.
 *
 * The schema is written over the variable names themselves, so an error names the variable to fix.
 * The Temporal connection is read the ecosystem's way, by @temporalio/envconfig (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE).
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../../api/contract/index';
import { SupplierProfile } from './supplier-profile';
import { readAccountsFile, type AccountsReading } from './accounts';
import { timeoutIssues } from './timeouts';

export { SUPPLIER_CALL_ACTIVITIES, supplierTimeoutBoundMs, type SupplierCall } from './timeouts';
import type { EncryptionCodecOptions } from '../../api/codec/encryption';
import { EncryptionEnv, encryptionFromEnv } from '../../api/codec/config';
import { BUILD_ID_PATTERN, DEPLOYMENT_NAME_PATTERN, defaultBuildId, type WorkerBuild } from './build';

const intFromEnv = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const onOff = (fallback: 'on' | 'off') => z.enum(['on', 'off']).default(fallback);

/** Every variable, its default and its meaning; the README's configuration table mirrors this. */
export const EnvSchema = EncryptionEnv.extend({
  /** Task queue the worker polls and clients start bookings on. */
  BOOKING_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  /** Base URL of the supplier API (the sandbox supplier by default). */
  SUPPLIER_BASE_URL: z.url().default('http://127.0.0.1:8787'),
  /** A static bearer token; alternatively SUPPLIER_APP_KEY + SUPPLIER_APP_SECRET for Ticket. */
  SUPPLIER_TOKEN: z.string().min(1).optional(),
  SUPPLIER_APP_KEY: z.string().min(1).optional(),
  SUPPLIER_APP_SECRET: z.string().min(1).optional(),
  /** JSON with any part of the supplier profile to override, e.g. {"timeoutsMs":{"book":60000}}. */
  SUPPLIER_PROFILE: z.string().optional(),
  /**
   * A JSON file naming several supplier accounts (src/runtime/config/accounts.ts, docs/suppliers.md): each its
   * base URL, credential files, profile and the partners (namespaces) that may book on it. A booking names its
   * account in `supplier`, or takes its partner's default. Without a SUPPLIER_* credential, the first account also
   * serves bookings that name none and were started before (their queues are the booking queue's own).
   */
  SUPPLIER_ACCOUNTS_FILE: z.string().min(1).optional(),
  /** Connections kept open to the supplier. */
  SUPPLIER_MAX_CONNECTIONS: intFromEnv(64),
  /** Milliseconds order lookups arriving behind a QueryOrders in flight wait to share the next request. */
  SUPPLIER_QUERY_BATCH_WINDOW_MS: z.coerce.number().int().nonnegative().default(20),
  /**
   * Customer references carried by one QueryOrders request at most; also fewer than the profile's
   * `queryOrders.pageSize` (19 by default), so a whole answer cannot be mistaken for a cut one.
   */
  SUPPLIER_QUERY_BATCH_MAX_REFERENCES: intFromEnv(50),
  /**
   * Least milliseconds between two QueryOrders requests of this worker (a full batch goes at once):
   * a poll after a quiet spell goes at once, a storm's polls share requests (bench recovery-storm).
   */
  SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS: z.coerce.number().int().nonnegative().default(500),
  /** on: wait for the profile's rateLimits (per operation and overall) before each request; off: send at once. */
  SUPPLIER_RATE_LIMIT: onOff('on'),
  /** Activities one worker runs at once (most are waiting on HTTP). */
  WORKER_MAX_CONCURRENT_ACTIVITIES: intFromEnv(200),
  /** Workflow tasks one worker runs at once. */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: intFromEnv(40),
  /**
   * Workflows kept in the worker's sticky cache. Measured here at about 4.4 MB of worker RSS per cached booking
   * (bench parked), so the default is small: parked bookings sleep for minutes and lose little by replaying.
   */
  WORKER_MAX_CACHED_WORKFLOWS: intFromEnv(100),
  /**
   * on: at start, register the search attributes the workflow writes if the namespace lacks them; off (or
   * when the service refuses, as Temporal Cloud does): exit at once naming them and the command to run.
   */
  WORKER_REGISTER_SEARCH_ATTRIBUTES: onOff('on'),
  /** Worker log level: TRACE, DEBUG, INFO, WARN or ERROR. */
  LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
  /** text: the SDK's lines, for a terminal; json: one JSON object per line (workflowId, runId, activity, bookingStage). */
  LOG_FORMAT: z.enum(['text', 'json']).default('text'),
  /** Port of the worker's Prometheus endpoint (/metrics: the SDK's metrics and the booking's); off when unset or empty. */
  WORKER_METRICS_PORT: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(1).max(65535).optional(),
  ),
  /**
   * Address the metrics endpoint listens on: loopback by default, closed to strangers like every listener; a
   * scraper in another container needs `0.0.0.0` on a private network (docker-compose sets it).
   */
  WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Traces (OpenTelemetry's own variable): none (default, off), otlp (OTLP over HTTP, configured by the
   * standard OTEL_EXPORTER_OTLP_* variables) or console.
   */
  OTEL_TRACES_EXPORTER: z.enum(['none', 'otlp', 'console']).default('none'),
  /** The service name on every span (OpenTelemetry's own variable). */
  OTEL_SERVICE_NAME: z.string().min(1).default('hotel-booking-worker'),
  /** A workflow bundle built ahead (`npm run bundle`), so a restarted worker polls in about a second, not after webpack. */
  WORKER_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  /**
   * The Worker Deployment this worker belongs to (Temporal's Worker Versioning): set, the worker polls as one build
   * of it, and runs finish on the build they started on while a new build takes new runs (docs/operations.md,
   * "Deploying a new build"). Unset: an unversioned worker, every worker takes every task (tests, a single worker).
   */
  WORKER_DEPLOYMENT_NAME: z.string().regex(DEPLOYMENT_NAME_PATTERN, 'letters, digits, - and _ only').optional(),
  /** This worker's build id within the deployment; default `<package version>+<commit>` (BUILD_COMMIT or git). */
  WORKER_BUILD_ID: z.string().regex(BUILD_ID_PATTERN, 'letters, digits and . _ + - only').optional(),
  /** Sent with every Book so the supplier calls back on order-status changes (the callback receiver's URL). */
  SUPPLIER_CALLBACK_URL: z.url().optional(),
  /** The secret callbacks are verified with (profile `callbacks.verification`); the receiver refuses all without it. */
  SUPPLIER_CALLBACK_SECRET: z.string().min(16).optional(),
  /** The callback receiver (`npm run callbacks`): interface and port. */
  CALLBACKS_HOST: z.string().min(1).default('127.0.0.1'),
  CALLBACKS_PORT: z.coerce.number().int().nonnegative().default(8236),
  /** The receiver's admin listener (/metrics, /callbacks/stats): loopback by default, never the public one. */
  CALLBACKS_ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  CALLBACKS_ADMIN_PORT: z.coerce.number().int().nonnegative().default(8237),
  /** Open sockets at most on the receiver's public listener; more are closed at once. */
  CALLBACKS_MAX_CONNECTIONS: z.coerce.number().int().positive().default(256),
  /** on: the worker creates (or updates) the reconciliation sweep's Temporal Schedule at start. */
  RECONCILIATION_SCHEDULE: onOff('on'),
  /** Minutes between two sweeps. */
  RECONCILIATION_EVERY_MINUTES: intFromEnv(15),
  /** How far back a sweep looks at orders (by booking time). */
  RECONCILIATION_LOOKBACK_MINUTES: intFromEnv(24 * 60),
  /** Orders younger than this are left to their bookings, still at work on them. */
  RECONCILIATION_SETTLE_MINUTES: intFromEnv(10),
  /** One QueryOrders request covers this much booking time (the spec has no paging: the window is sliced). */
  RECONCILIATION_SLICE_MINUTES: intFromEnv(60),
  /** on: an orphan found Confirmed is cancelled (through an order workflow, with the fee that applies). Off by default. */
  RECONCILIATION_CANCEL_ORPHANS: onOff('off'),
  /**
   * The most an orphan's automatic cancellation may cost, as `<amount> <currency>` (e.g. `50 USD`). Default `0`:
   * only free cancellations. Checked again before every Cancel send; above it the order run stops for a person.
   * Orphans are cancelled only where this namespace has a booking workflow for the reference (evidence we made
   * the order), never orders another system made on the same supplier account.
   */
  RECONCILIATION_ORPHAN_FEE_CEILING: z
    .string()
    .regex(/^\s*\d+(\.\d+)?(\s+[A-Z]{3})?\s*$/, 'expected "<amount> <currency>", e.g. "50 USD", or "0"')
    .default('0'),
  /** Orders checking in within this many hours are listed by check-in time too (still Confirmed?). */
  RECONCILIATION_CHECK_IN_HOURS: intFromEnv(48),
  /**
   * on: this worker accepts bookings whose `recovery.testing` is true, with recovery settings below the
   * production floors (re-send sooner than 10 minutes, short deadlines). For the sandbox, tests, chaos runs
   * and benchmarks only: never on a worker that books for real.
   */
  RECOVERY_TESTING: onOff('off'),
});

export type SupplierCredentials =
  { kind: 'token'; token: string } | { kind: 'ticket'; appKey: string; appSecret: string };

export interface AppConfig {
  taskQueue: string;
  temporal: { connection: NativeConnectionOptions; namespace: string };
  supplier: {
    baseUrl: string;
    credentials: SupplierCredentials;
    profile: SupplierProfile;
    maxConnections: number;
    /** How concurrent order lookups share QueryOrders requests; absent in hand-built configs means the defaults (20 ms, 50, 0 ms). */
    queryBatch?: { windowMs: number; maxReferences: number; minIntervalMs?: number };
    /** Whether requests wait for the profile's rate limits; absent means on, as by default. */
    rateLimit?: boolean;
    /** Sent with Book for order-status callbacks; none when absent. */
    callbackUrl?: string;
    /** This is the accounts file's first account (no SUPPLIER_* credential given): one stack serves both. */
    account?: string;
  };
  /** The accounts of SUPPLIER_ACCOUNTS_FILE, each with its own queues, limiter and tokens; absent: `supplier` alone. */
  accounts?: AccountsReading;
  /** The callback receiver; absent in hand-built configs (then: 127.0.0.1:8236, no secret: all refused). */
  callbacks?: CallbacksConfig;
  /** The reconciliation sweep's schedule; absent in hand-built configs means no schedule. */
  reconciliation?: ReconciliationConfig;
  worker: {
    maxConcurrentActivities: number;
    maxConcurrentWorkflowTasks: number;
    maxCachedWorkflows: number;
    /** Register missing search attributes at start (else only check). Absent in hand-built configs: on. */
    registerSearchAttributes?: boolean;
    /** The worker's build in its Worker Deployment; absent: an unversioned worker. */
    deployment?: WorkerBuild;
  };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Logs, metrics and traces (src/runtime/observability). Absent in hand-built configs: text logs, nothing exported. */
  observability?: ObservabilityConfig;
  /** Path of a prebuilt workflow bundle, if any. */
  workflowBundlePath?: string;
  /** Payload encryption, when configured (see PAYLOAD_ENCRYPTION_KEYS). */
  encryption?: EncryptionCodecOptions;
  /** RECOVERY_TESTING: accept test recovery schedules (below the floors). Absent in hand-built configs: off. */
  recoveryTesting?: boolean;
}

export interface ObservabilityConfig {
  logFormat: 'text' | 'json';
  /** The Prometheus endpoint, when on. */
  metrics?: { host: string; port: number };
  /** Where spans go, when tracing is on. */
  tracing?: { exporter: 'otlp' | 'console'; serviceName: string };
}

export interface CallbacksConfig {
  host: string;
  port: number;
  secret?: string;
  /** The admin listener (/metrics, /callbacks/stats); 127.0.0.1:8237 by default. */
  admin?: { host: string; port: number };
  /** Default 256. */
  maxConnections?: number;
}

export interface ReconciliationConfig {
  schedule: boolean;
  everyMinutes: number;
  lookbackMinutes: number;
  settleMinutes: number;
  sliceMinutes: number;
  cancelOrphans: boolean;
  /** The most an orphan's cancellation may cost; amount 0 (the default): only free. */
  orphanFeeCeiling?: { currency: string; amount: number };
  /** Orders checking in within this many hours are listed too; default 48. */
  checkInHours?: number;
}

/** Raised at start for a bad environment; the message names each variable. Never includes values. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join('\n  ')}`);
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(issueLines(undefined, parsed.error.issues));
  }
  const e = parsed.data;
  const issues: string[] = [];
  if (e.WORKER_BUILD_ID && !e.WORKER_DEPLOYMENT_NAME) {
    issues.push('WORKER_BUILD_ID: a build id needs WORKER_DEPLOYMENT_NAME, the deployment it is a build of');
  }

  let accounts: AccountsReading | undefined;
  if (e.SUPPLIER_ACCOUNTS_FILE) {
    try {
      accounts = readAccountsFile(e.SUPPLIER_ACCOUNTS_FILE);
    } catch (err) {
      issues.push((err as Error).message);
    }
  }
  let credentials: SupplierCredentials | undefined;
  if (e.SUPPLIER_TOKEN) credentials = { kind: 'token', token: e.SUPPLIER_TOKEN };
  else if (e.SUPPLIER_APP_KEY && e.SUPPLIER_APP_SECRET) {
    credentials = { kind: 'ticket', appKey: e.SUPPLIER_APP_KEY, appSecret: e.SUPPLIER_APP_SECRET };
  } else if (!e.SUPPLIER_ACCOUNTS_FILE) {
    issues.push('SUPPLIER_TOKEN or SUPPLIER_APP_KEY + SUPPLIER_APP_SECRET: one supplier credential is required');
  }

  let profile: SupplierProfile | undefined;
  try {
    const overrides: unknown = e.SUPPLIER_PROFILE ? JSON.parse(e.SUPPLIER_PROFILE) : {};
    const result = SupplierProfile.safeParse(overrides);
    if (result.success) {
      profile = result.data;
      issues.push(...timeoutIssues(profile));
    } else issues.push(...issueLines('SUPPLIER_PROFILE', result.error.issues));
  } catch {
    issues.push('SUPPLIER_PROFILE: not valid JSON');
  }

  const temporal = loadClientConnectConfig({
    overrideEnvVars: definedOnly(env),
    disableFile: !env.TEMPORAL_CONFIG_FILE,
  });
  const { encryption, issues: encryptionIssues } = encryptionFromEnv(e);
  issues.push(...encryptionIssues);

  // Bookings that name no account, and were started before accounts, go to the queues of `supplier`: without a
  // credential of its own, that is the first account.
  const first = accounts?.accounts[0];
  if (!credentials && first) {
    credentials = first.credentials;
    if (!e.SUPPLIER_PROFILE) profile = first.profile;
  }
  if (issues.length > 0 || !credentials || !profile) throw new ConfigError(issues);

  return {
    taskQueue: e.BOOKING_TASK_QUEUE,
    temporal: {
      connection: { ...temporal.connectionOptions, address: temporal.connectionOptions.address ?? 'localhost:7233' },
      namespace: temporal.namespace ?? 'default',
    },
    ...(accounts ? { accounts } : {}),
    supplier: {
      baseUrl: first && !e.SUPPLIER_TOKEN && !e.SUPPLIER_APP_KEY ? first.baseUrl : e.SUPPLIER_BASE_URL,
      credentials,
      profile,
      maxConnections: e.SUPPLIER_MAX_CONNECTIONS,
      queryBatch: {
        windowMs: e.SUPPLIER_QUERY_BATCH_WINDOW_MS,
        maxReferences: e.SUPPLIER_QUERY_BATCH_MAX_REFERENCES,
        minIntervalMs: e.SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS,
      },
      rateLimit: e.SUPPLIER_RATE_LIMIT === 'on',
      ...(e.SUPPLIER_CALLBACK_URL ? { callbackUrl: e.SUPPLIER_CALLBACK_URL } : {}),
      ...(first && credentials === first.credentials ? { account: first.id } : {}),
    },
    callbacks: callbacksOf(e),
    reconciliation: {
      schedule: e.RECONCILIATION_SCHEDULE === 'on',
      everyMinutes: e.RECONCILIATION_EVERY_MINUTES,
      lookbackMinutes: e.RECONCILIATION_LOOKBACK_MINUTES,
      settleMinutes: e.RECONCILIATION_SETTLE_MINUTES,
      sliceMinutes: e.RECONCILIATION_SLICE_MINUTES,
      cancelOrphans: e.RECONCILIATION_CANCEL_ORPHANS === 'on',
      orphanFeeCeiling: feeCeiling(e.RECONCILIATION_ORPHAN_FEE_CEILING),
      checkInHours: e.RECONCILIATION_CHECK_IN_HOURS,
    },
    worker: {
      maxConcurrentActivities: e.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxConcurrentWorkflowTasks: e.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
      registerSearchAttributes: e.WORKER_REGISTER_SEARCH_ATTRIBUTES === 'on',
      ...(e.WORKER_DEPLOYMENT_NAME
        ? {
            deployment: { deploymentName: e.WORKER_DEPLOYMENT_NAME, buildId: e.WORKER_BUILD_ID ?? defaultBuildId(env) },
          }
        : {}),
    },
    logLevel: e.LOG_LEVEL,
    observability: {
      logFormat: e.LOG_FORMAT,
      ...(e.WORKER_METRICS_PORT ? { metrics: { host: e.WORKER_METRICS_HOST, port: e.WORKER_METRICS_PORT } } : {}),
      ...(e.OTEL_TRACES_EXPORTER !== 'none'
        ? { tracing: { exporter: e.OTEL_TRACES_EXPORTER, serviceName: e.OTEL_SERVICE_NAME } }
        : {}),
    },
    ...(e.WORKER_WORKFLOW_BUNDLE ? { workflowBundlePath: e.WORKER_WORKFLOW_BUNDLE } : {}),
    ...(encryption ? { encryption } : {}),
    recoveryTesting: e.RECOVERY_TESTING === 'on',
  };
}

function callbacksOf(e: z.infer<typeof EnvSchema>): CallbacksConfig {
  return {
    host: e.CALLBACKS_HOST,
    port: e.CALLBACKS_PORT,
    admin: { host: e.CALLBACKS_ADMIN_HOST, port: e.CALLBACKS_ADMIN_PORT },
    maxConnections: e.CALLBACKS_MAX_CONNECTIONS,
    ...(e.SUPPLIER_CALLBACK_SECRET ? { secret: e.SUPPLIER_CALLBACK_SECRET } : {}),
  };
}

/**
 * The callback receiver's configuration (`npm run callbacks`): the same schema as the worker's, without
 * the supplier credential it does not use.
 */
export function loadCallbacksConfig(env: Record<string, string | undefined> = process.env): {
  callbacks: CallbacksConfig;
  profile: SupplierProfile;
  temporal: AppConfig['temporal'];
  /** Where the receiver starts order checks: the booking task queue (BOOKING_TASK_QUEUE). */
  taskQueue: string;
  encryption?: EncryptionCodecOptions;
} {
  // A placeholder credential: the receiver calls no supplier, and loadConfig insists on one.
  const config = loadConfig({ SUPPLIER_TOKEN: 'unused-by-the-callback-receiver', ...env });
  return {
    callbacks: config.callbacks!,
    profile: config.supplier.profile,
    temporal: config.temporal,
    taskQueue: config.taskQueue,
    ...(config.encryption ? { encryption: config.encryption } : {}),
  };
}

/**
 * Schema issues as `VARIABLE.path: message` lines. An unknown key is named, so a misspelt override reads as
 * what it is rather than zod's generic wording.
 */
function issueLines(variable: string | undefined, issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    const where = [...(variable ? [variable] : []), ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${where}: unknown key "${key}"`);
    return [`${where}: ${issue.message}`];
  });
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined));
}

/** `50 USD` → { amount: 50, currency: 'USD' }; a bare `0` means "only free" (any currency). */
function feeCeiling(text: string): { currency: string; amount: number } {
  const [amount, currency] = text.trim().split(/\s+/);
  return { amount: Number(amount), currency: currency ?? 'USD' };
}
