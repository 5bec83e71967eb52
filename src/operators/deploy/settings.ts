/**
 * `settings`: the fleet-wide settings no single worker should own, written once per deployment from the fleet's
 * configuration (the workers' environment: SUPPLIER_PROFILE, RECONCILIATION_*, the accounts).
 *  - Each QueryOrders queue's rate limit, at queue level (UpdateTaskQueueConfig): the supplier's limit is one for
 *    every worker and every build, but a worker's own `maxTaskQueueActivitiesPerSecond` is the last poller's value,
 *    so two builds configured differently flip it with each poll. The queue-level limit outranks every worker's.
 *  - The reconciliation sweep's Schedule, marked as the deploy's: workers then leave it as it is
 *    (src/runtime/namespace/sweep-schedule.ts).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { queryOrdersTaskQueue, supplierTaskQueue } from '../../api/contract/definitions';
import { ConfigError, loadConfig, type AppConfig } from '../../runtime/config/index';
import { ensureReconciliationSchedule } from '../../runtime/namespace/sweep-schedule';
import { DeployError, type DeployArgs, type DeployIo, type DeployResult } from './command';

/** Every QueryOrders queue of the fleet with the supplier account's limit: the main one, then each account's. */
export function queryOrdersLimits(config: AppConfig, taskQueue: string): Array<{ queue: string; perSecond: number }> {
  return [
    { queue: queryOrdersTaskQueue(taskQueue), perSecond: config.supplier.profile.rateLimits.queryOrders },
    ...(config.accounts?.accounts ?? []).map((account) => ({
      queue: queryOrdersTaskQueue(supplierTaskQueue(taskQueue, account.id)),
      perSecond: account.profile.rateLimits.queryOrders,
    })),
  ];
}

/** Sets one activity queue's rate limit at queue level; returns the limit the server now applies. */
async function setQueueLimit(client: Client, queue: string, perSecond: number, identity: string): Promise<number> {
  const type = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;
  await client.workflowService.updateTaskQueueConfig({
    namespace: client.options.namespace,
    identity,
    taskQueue: queue,
    taskQueueType: type,
    updateQueueRateLimit: {
      rateLimit: { requestsPerSecond: perSecond },
      reason: "the supplier's QueryOrders limit (SUPPLIER_PROFILE rateLimits.queryOrders), set by deploy settings",
    },
  });
  const described = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type,
    reportConfig: true,
  });
  return described.config?.queueRateLimit?.rateLimit?.requestsPerSecond ?? NaN;
}

/** Writes both settings; a configuration the workers would refuse is refused here too, naming the variable. */
export async function settingsStep(
  client: Client,
  args: DeployArgs,
  io: DeployIo,
  env: Record<string, string | undefined> = process.env,
): Promise<DeployResult> {
  let config: AppConfig;
  try {
    // No supplier credential is read or sent here: an operator's environment holds none, so a stand-in fills the
    // place the workers' credentials take in the configuration (only when none is given).
    const credentials = env.SUPPLIER_TOKEN || env.SUPPLIER_APP_KEY || env.SUPPLIER_ACCOUNTS_FILE;
    config = loadConfig(credentials ? env : { ...env, SUPPLIER_TOKEN: 'not-read-by-deploy-settings' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new DeployError(`settings reads the fleet's configuration (the workers' environment): ${err.message}`);
  }
  const limits = [];
  for (const { queue, perSecond } of queryOrdersLimits(config, args.taskQueue)) {
    const applied = await setQueueLimit(client, queue, perSecond, io.identity);
    io.say(`QueryOrders queue ${queue}: ${applied}/s at queue level, for every worker of every build`);
    limits.push({ queue, perSecond: applied });
  }
  let schedule: { scheduleId: string; created: boolean } | null = null;
  const accountSchedules: Array<{ account: string; scheduleId: string; created: boolean }> = [];
  if (config.reconciliation?.schedule) {
    const { scheduleId, created } = await ensureReconciliationSchedule(client, {
      taskQueue: args.taskQueue,
      reconciliation: config.reconciliation,
      profile: config.supplier.profile,
      owner: 'deploy',
      identity: io.identity,
    });
    schedule = { scheduleId, created };
    io.say(
      `Reconciliation sweep schedule ${scheduleId} ${created ? 'created' : 'updated'}: every ` +
        `${config.reconciliation.everyMinutes} min; workers now leave it as it is`,
    );
    // Each other supplier account is swept on its own Schedule, as the workers keep them (src/worker.ts).
    for (const account of config.accounts?.accounts ?? []) {
      if (account.id === config.supplier.account) continue;
      const own = await ensureReconciliationSchedule(client, {
        taskQueue: args.taskQueue,
        reconciliation: config.reconciliation,
        profile: account.profile,
        supplier: account.id,
        owner: 'deploy',
        identity: io.identity,
      });
      accountSchedules.push({ account: account.id, ...own });
      io.say(
        `Reconciliation sweep schedule ${own.scheduleId} (account ${account.id}) ${own.created ? 'created' : 'updated'}`,
      );
    }
  } else io.say('Reconciliation sweep schedule: off in this configuration (RECONCILIATION_SCHEDULE), left as it is');
  return { exitCode: 0, value: { queryOrdersLimits: limits, schedule, accountSchedules } };
}
