/**
 * How a chaos run goes (its size, its pace, the chaos done, where its report goes) and the recovery schedule and
 * supplier timeouts it runs with: what every step of the run reads, so this file imports none of the steps.
 */
import type { RecoveryOptions } from '../src/api/client/index';
import type { Log } from './stack';

/**
 * The production schedule (30 s, 1, 2, 4, 8 min, then every 10 min; re-Book after 10 min; give up after
 * 24 h) scaled 60× down, and the deadline 576× down, so a run resolves in minutes, not a day. Below the
 * production bounds: `testing`, and the run's workers have RECOVERY_TESTING=on.
 */
export const CHAOS_RECOVERY: RecoveryOptions = {
  testing: true,
  delaysSeconds: [0.5, 1, 2, 4, 8],
  repeatEverySeconds: 10,
  rebookAfterSeconds: 10,
  deadlineSeconds: 150,
};

/** Client timeouts short enough that a hang costs seconds; CheckAvail's 2 s is inside the workflow's 30 s. */
export const CHAOS_SUPPLIER_TIMEOUTS_MS = { book: 3_000, checkAvail: 2_000, queryOrders: 2_000 };

/** How a chaos run goes: its size, its pace, the chaos done, and where its report goes. */
export interface ChaosOptions {
  n: number;
  seed: number;
  /** Bookings are started evenly over this many minutes, while workers are killed and faults injected. */
  minutes: number;
  killEverySeconds: number;
  /** Stop killing after this many kills (the smoke test keeps its run short with it). */
  maxKills: number;
  /** Kills and QueryOrders faults go on this long after the last start. */
  chaosTailSeconds: number;
  /** How the dev server is brought down once, halfway through the starts; `none` to skip. */
  serverRestart: 'SIGKILL' | 'SIGTERM' | 'none';
  /**
   * `dev`: the CLI dev server on SQLite. `prod`: PostgreSQL and two Temporal nodes (dev/prod); instead of
   * the dev-server restart, one node is SIGKILLed at a third of the starts and brought back, PostgreSQL
   * is restarted at half, and the other node is SIGKILLed at two thirds.
   */
  engine: 'dev' | 'prod';
  /** Prod engine: how long a killed node stays down before it is started again. */
  nodeDownSeconds: number;
  /**
   * The deploy drill (chaos/deploy.ts, on the prod engine): workers of build A versioned and current from the start,
   * build B (changed commands) beside them, gated and made current, rolled back to A, forward to B again, then A
   * drained and stopped; every run must finish on the build it started on, and none fail for nondeterminism.
   */
  deploy: boolean;
  recovery: RecoveryOptions;
  supplierTimeoutsMs: { book: number; checkAvail: number; queryOrders: number };
  /**
   * After the last start, how long the run waits for every workflow to close before calling the rest stuck.
   * Default: the recovery deadline plus 7 minutes, room for CheckAvail's retries and a Book whose worker was
   * killed (its activity times out after the workflow's 2 minutes).
   */
  drainLimitSeconds?: number;
  /** Where chaos-<seed>.json (and, on violations, the histories involved) go; null writes nothing. */
  resultsDir: string | null;
  /** A prebuilt workflow bundle; built when absent. */
  bundlePath?: string;
  /** Start requests in flight at once. */
  startConcurrency: number;
  /**
   * The order the bookings are started in over `minutes`: `plan` (the seed's shuffle, the default), or
   * `longest-first`: those whose faults keep them open longest (chaos/mix.ts expectedOpenMs: a deadline to reach,
   * an order listed or settled late, a cancellation window) first, the quick ones last. The chaos and the checks are
   * the same; the last start is followed by short bookings, so the drain after it is short (the smoke tests).
   */
  startOrder: 'plan' | 'longest-first';
  /**
   * Bookings whose workflow the run terminates once their Book has made the order (orphans made on purpose,
   * reported apart from the run's own failures); the reconciliation sweep at the end must find exactly them.
   */
  orphans: number;
  /** Keep the temp dir (database, worker logs, build) even when every invariant held. */
  keepTempDir: boolean;
  log: Log;
  signal?: AbortSignal;
}
