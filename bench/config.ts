/**
 * The configuration every benchmark worker runs with: the worker's own `loadConfig` (src/runtime/config),
 * so the supplier client, its timeouts and pool, and the worker tuning are what `npm run worker`
 * would use. SUPPLIER_* and WORKER_* variables of the environment pass through, so a run can try
 * other settings (`WORKER_MAX_CACHED_WORKFLOWS=200 npm run bench -- parked`); the rest is fixed.
 */
import { z } from 'zod';
import { loadConfig, type AppConfig } from '../src/runtime/config/index';
import type { RateLimits } from '../dev/sandbox/rate-limit';
import { SANDBOX_PROFILE } from '../dev/sandbox/server';

/** Sandbox credentials (src/sandbox/server.ts defaults); not secrets. */
const SANDBOX_CREDENTIALS = { SUPPLIER_APP_KEY: 'sandbox-app', SUPPLIER_APP_SECRET: 'sandbox-secret' };
/** Benchmarks scale the recovery schedule down (`recovery.testing`, see workload.ts): never a worker that books for real. */
const TEST_SCHEDULES = { RECOVERY_TESTING: 'on' };
const FIXED = new Set(['SUPPLIER_BASE_URL', 'SUPPLIER_TOKEN', 'SUPPLIER_APP_KEY', 'SUPPLIER_APP_SECRET']);

export interface WorkerTuning {
  maxConcurrentActivityTaskExecutions: number;
  maxConcurrentWorkflowTaskExecutions: number;
  maxCachedWorkflows: number;
}

/** The SUPPLIER_* and WORKER_* variables taken from the environment (reported with the results). */
export function passedThroughEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (kv): kv is [string, string] => /^(SUPPLIER|WORKER)_/.test(kv[0]) && !FIXED.has(kv[0]) && kv[1] !== undefined,
    ),
  );
}

export interface BenchConfigOptions {
  /** PAYLOAD_ENCRYPTION_KEYS, when payloads are encrypted. */
  encryptionKeys?: string;
  /**
   * The sandbox's limits, told to the worker through its profile (SUPPLIER_PROFILE): the worker's
   * client-side limiter then paces requests to what this supplier allows, as it would in production.
   */
  rateLimits?: RateLimits;
  /** SUPPLIER_MAX_CONNECTIONS, when a benchmark needs more requests in flight than the default pool. */
  maxConnections?: number;
}

/** The worker's configuration against this sandbox. */
export function benchConfig(sandboxUrl: string, options: BenchConfigOptions = {}): AppConfig {
  const env = passedThroughEnv();
  const profile = {
    ...SANDBOX_PROFILE,
    ...(env.SUPPLIER_PROFILE ? (JSON.parse(env.SUPPLIER_PROFILE) as Record<string, unknown>) : {}),
  };
  return loadConfig({
    ...env,
    ...SANDBOX_CREDENTIALS,
    ...TEST_SCHEDULES,
    SUPPLIER_BASE_URL: sandboxUrl,
    SUPPLIER_PROFILE: JSON.stringify(options.rateLimits ? { ...profile, rateLimits: options.rateLimits } : profile),
    ...(options.encryptionKeys ? { PAYLOAD_ENCRYPTION_KEYS: options.encryptionKeys } : {}),
    ...(options.maxConnections ? { SUPPLIER_MAX_CONNECTIONS: String(options.maxConnections) } : {}),
  });
}

/** The tuning `npm run worker` uses (WORKER_* variables or their defaults). */
export function projectTuning(): WorkerTuning {
  const { worker } = benchConfig('http://127.0.0.1:1');
  return {
    maxConcurrentActivityTaskExecutions: worker.maxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: worker.maxConcurrentWorkflowTasks,
    maxCachedWorkflows: worker.maxCachedWorkflows,
  };
}

/**
 * Options every benchmark takes: how its stack is built. The database is in memory by default: with
 * a file, the dev server's SQLite writes cost it about twice the CPU per workflow on a small machine
 * and would dominate what is measured. (In memory, the dev server's RSS includes the data.)
 */
export const stackFlags = (defaultDb: 'file' | 'memory') => ({
  /** Payload encryption (src/servers/codec) on, with a key made for the run, as production runs it. */
  encrypt: z.boolean().default(false),
  /** The dev server's SQLite database: a temp file, as `npm start` uses, or in memory. */
  db: z.enum(['file', 'memory']).default(defaultDb),
  /** Run the sandbox without the bench's QueryOrders memo (see bench/sandbox-process.ts). */
  sandboxAsIs: z.boolean().default(false),
  /** A prebuilt workflow bundle; built for the run when absent. */
  bundlePath: z.string().optional(),
  /**
   * Bundles built for the run preload the modules the worker ships preloaded (src/workflow-bundle.ts; the floor
   * the SDK's alone), or `off`: none, every module evaluated per workflow, as before SDK 1.24's preloadModules.
   */
  preload: z.enum(['on', 'off']).default('on'),
  /**
   * Server dynamic config, KEY=VALUE, over infra/dynamicconfig/booking.yaml (which every server we start
   * reads). E.g. the dev server has one history shard whose transfer queue is read at most
   * history.transferProcessorMaxPollRPS times a second (100 shipped, 20 Temporal's default): a task
   * waits for the next read, so `--server-config history.transferProcessorMaxPollRPS=50` shows its cost.
   */
  serverConfig: z.record(z.string(), z.string()).default({}),
  /**
   * `dev`: the CLI dev server (SQLite). `prod`: the production topology of dev/prod, PostgreSQL and two
   * Temporal nodes with infra/dynamicconfig/booking.yaml, --server-config values over it (--db does not apply).
   */
  engine: z.enum(['dev', 'prod']).default('dev'),
  /** Prod engine: the cluster's history shard count (default: infra/temporal-server.env). */
  shards: z.number().int().positive().optional(),
});
export type StackFlags = z.output<z.ZodObject<ReturnType<typeof stackFlags>>>;

/** The stack options these flags stand for. */
export function stackOptions(flags: StackFlags) {
  return {
    encrypt: flags.encrypt,
    db: flags.db,
    memoizeOrderViews: !flags.sandboxAsIs,
    bundlePath: flags.bundlePath,
    preload: flags.preload === 'on',
    dynamicConfig: flags.serverConfig,
    engine: flags.engine,
    historyShards: flags.shards,
  };
}
