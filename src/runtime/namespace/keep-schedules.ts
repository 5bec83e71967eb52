/**
 * The sweep's Schedules as a worker keeps them at start (RECONCILIATION_SCHEDULE=on): its own supplier's and each
 * other account's, each created or brought up to date (unless the deploy set it) without holding up polling.
 */
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { dataConverterFor } from '../../api/codec/config';
import type { AppConfig } from '../config/index';
import type { SupplierProfile } from '../config/supplier-profile';
import { unanswered } from './setup';
import { ensureReconciliationSchedule } from './sweep-schedule';

/** Where the worker says what it did: a line for the person starting it, a WARN. */
export interface ScheduleLog {
  say(line: string): void;
  warn(line: string): void;
}

/**
 * Creates or updates the reconciliation sweep's Schedule without holding up polling: the sweep is a safety net,
 * bookings are not. A failure (a server node down at this moment, say) is logged as a WARN and retried with
 * backoff until it succeeds or the worker stops; a service without the Schedule API is one WARN, not retried.
 * Returns what stops the retries.
 */
function keepReconciliationSchedule(
  config: AppConfig,
  options: { client: Client; taskQueue: string; account?: { id: string; profile: SupplierProfile } },
  log: ScheduleLog,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (nextDelayMs: number): Promise<void> => {
    try {
      const { scheduleId, created, keptDeploys } = await ensureReconciliationSchedule(options.client, {
        taskQueue: options.taskQueue,
        reconciliation: config.reconciliation!,
        profile: options.account?.profile ?? config.supplier.profile,
        ...(options.account ? { supplier: options.account.id } : {}),
      });
      const what = created ? 'created' : keptDeploys ? 'set by the deploy, left as it is' : 'up to date';
      if (!stopped) log.say(`Reconciliation sweep schedule "${scheduleId}" ${what}`);
    } catch (err) {
      if (stopped) return;
      const unimplemented = unanswered(err, 'the Schedule API');
      if (unimplemented?.status === 'UNIMPLEMENTED') {
        // Asking again cannot help (the Java test server has no schedules): say so once and leave it.
        log.warn(
          `Reconciliation sweep schedule not set up: ${unimplemented.reason}; no sweep runs against this service`,
        );
        return;
      }
      log.warn(
        `Reconciliation sweep schedule not set up yet (${err instanceof Error ? err.message : String(err)}); ` +
          `retrying in ${Math.round(nextDelayMs / 1000)} s`,
      );
      timer = setTimeout(() => void attempt(Math.min(nextDelayMs * 2, 300_000)), nextDelayMs);
      timer.unref();
    }
  };
  void attempt(5_000);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * The sweep's Schedules: the worker's own supplier's, and each other account's (listed with its credential, judged
 * by its profile). The first account, when it is the worker's own supplier, is swept by the first Schedule alone.
 */
export function keepSchedules(
  connection: NativeConnection,
  config: AppConfig,
  overrides: { taskQueue?: string },
  log: ScheduleLog,
): () => void {
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: dataConverterFor(config.encryption),
  });
  const taskQueue = overrides.taskQueue ?? config.taskQueue;
  const stops = [
    keepReconciliationSchedule(config, { client, taskQueue }, log),
    ...(config.accounts?.accounts ?? [])
      .filter((account) => account.id !== config.supplier.account)
      .map((account) => keepReconciliationSchedule(config, { client, taskQueue, account }, log)),
  ];
  return () => stops.forEach((stop) => stop());
}
