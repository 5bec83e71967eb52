/**
 * `deploy settings` on a real dev server (src/operators/deploy/settings.ts): the fleet-wide settings have one owner.
 *  - The QueryOrders queue's rate limit is set at queue level, and the server applies it (source: the API) while a
 *    worker polls with a limit of its own.
 *  - The sweep Schedule written by the deploy is marked so, and a worker starting with another configuration (an
 *    old build's, say) leaves it as it is; a Schedule no deploy set is still brought up to date by a worker.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { queryOrdersTaskQueue, supplierTaskQueue, sweepScheduleId } from '../../src/api/contract/index';
import { settingsStep } from '../../src/operators/deploy/settings';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import { DEPLOY_OWNED_NOTE, ensureReconciliationSchedule } from '../../src/runtime/namespace/sweep-schedule';
import { eventually, testProfile } from '../harness/booking';
import { sweepConfig, useDeployTest } from '../harness/deploy';

// The deploy's sweep Schedule for the rig's queue is made by the tests, and deleted at the end.
const d = useDeployTest({ name: 'deploy-settings', sweepSchedule: true });
const { io } = d;
/** The fleet's configuration as the workers read it, without the supplier's credentials (settings needs none). */
const fleetEnv = (queryOrdersPerSecond: number, everyMinutes: number) => ({
  SUPPLIER_PROFILE: JSON.stringify({ rateLimits: { queryOrders: queryOrdersPerSecond } }),
  RECONCILIATION_EVERY_MINUTES: String(everyMinutes),
});
const args = () => d.args('settings');

async function queueLimit(queue: string) {
  const described = await d.env.client.workflowService.describeTaskQueue({
    namespace: d.env.namespace ?? 'default',
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    reportConfig: true,
  });
  return {
    set: described.config?.queueRateLimit?.rateLimit?.requestsPerSecond,
    effective: described.effectiveRateLimit?.requestsPerSecond,
    source: described.effectiveRateLimit?.rateLimitSource,
  };
}

test("the QueryOrders limit is the queue's, whatever the polling worker says", async () => {
  const queue = queryOrdersTaskQueue(d.rig.taskQueue);
  expect(testProfile.rateLimits.queryOrders).not.toBe(3);
  const result = await settingsStep(d.env.client, args(), io, fleetEnv(3, 7));
  expect(result.value).toMatchObject({ queryOrdersLimits: [{ queue, perSecond: 3 }] });
  // The rig's worker polls the queue with its profile's own limit; the queue-level one is what the server applies.
  const limit = await eventually(async () => {
    const l = await queueLimit(queue);
    return l.effective === 3 ? l : undefined;
  });
  expect(limit).toEqual({ set: 3, effective: 3, source: temporal.api.enums.v1.RateLimitSource.RATE_LIMIT_SOURCE_API });
});

test("the deploy's sweep Schedule is left alone by a worker with another configuration", async () => {
  const handle = d.env.client.schedule.getHandle(sweepScheduleId(d.rig.taskQueue));
  const described = await handle.describe();
  expect(described.state.note).toMatch(new RegExp(`^${DEPLOY_OWNED_NOTE} by deploy-settings test`));
  expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 7 * 60_000 })]);

  const worker = { taskQueue: d.rig.taskQueue, profile: defaultSupplierProfile, reconciliation: sweepConfig(15) };
  expect(await ensureReconciliationSchedule(d.env.client, worker)).toMatchObject({ created: false, keptDeploys: true });
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 7 * 60_000 })]);

  // The deploy's next settings change it; a Schedule no deploy set is still a worker's to update.
  await settingsStep(d.env.client, args(), io, fleetEnv(3, 9));
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 9 * 60_000 })]);
  await handle.delete();
  await ensureReconciliationSchedule(d.env.client, { ...worker, reconciliation: sweepConfig(20) });
  expect(await ensureReconciliationSchedule(d.env.client, worker)).toEqual({
    scheduleId: sweepScheduleId(d.rig.taskQueue),
    created: false,
  });
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 15 * 60_000 })]);
});

test('a configuration the workers would refuse is refused, naming the variable', async () => {
  await expect(
    settingsStep(d.env.client, args(), io, { ...fleetEnv(3, 7), SUPPLIER_PROFILE: '{"rateLimits":' }),
  ).rejects.toThrow(/^settings reads the fleet's configuration.*SUPPLIER_PROFILE: not valid JSON/s);
});

test("with supplier accounts, each account's QueryOrders limit and sweep Schedule are the deploy's too", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'deploy-settings-accounts-'));
  writeFileSync(path.join(dir, 'token'), 'not-read\n');
  const account = (id: string, queryOrders: number) => ({
    id,
    baseUrl: 'http://127.0.0.1:9',
    credentials: { tokenFile: 'token' },
    profile: { rateLimits: { queryOrders }, orderStatus: { confirmed: 12 } },
    partners: ['*'],
  });
  writeFileSync(
    path.join(dir, 'accounts.json'),
    JSON.stringify({ accounts: [account('own', 4), account('other', 2)] }),
  );
  try {
    const result = await settingsStep(d.env.client, args(), io, {
      SUPPLIER_ACCOUNTS_FILE: path.join(dir, 'accounts.json'),
      RECONCILIATION_EVERY_MINUTES: '9',
    });
    const other = supplierTaskQueue(d.rig.taskQueue, 'other');
    expect(result.value).toMatchObject({
      queryOrdersLimits: expect.arrayContaining([{ queue: queryOrdersTaskQueue(other), perSecond: 2 }]),
      // The first account is the worker's own supplier: its sweep is the queue's own Schedule, not a second one.
      accountSchedules: [{ account: 'other', scheduleId: sweepScheduleId(other), created: true }],
    });
    const described = await d.env.client.schedule.getHandle(sweepScheduleId(other)).describe();
    expect(described.action.type === 'startWorkflow' && described.action.args?.[0]).toMatchObject({
      supplier: 'other',
      statuses: { confirmed: 12 },
    });
    expect(described.action.type === 'startWorkflow' && described.action.taskQueue).toBe(d.rig.taskQueue);
    await d.env.client.schedule.getHandle(sweepScheduleId(other)).delete();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
