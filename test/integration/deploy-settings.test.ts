/**
 * `deploy settings` on a real dev server (src/operators/deploy/settings.ts): the fleet-wide settings have one owner.
 *  - The QueryOrders queue's rate limit is set at queue level, and the server applies it (source: the API) while a
 *    worker polls with a limit of its own.
 *  - The sweep Schedule written by the deploy is marked so, and a worker starting with another configuration (an
 *    old build's, say) leaves it as it is; a Schedule no deploy set is still brought up to date by a worker.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { queryOrdersTaskQueue, supplierTaskQueue, sweepScheduleId } from '../../src/api/contract/index';
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { settingsStep } from '../../src/operators/deploy/settings';
import type { ReconciliationConfig } from '../../src/runtime/config/index';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import { DEPLOY_OWNED_NOTE, ensureReconciliationSchedule } from '../../src/runtime/namespace/sweep-schedule';
import { createBookingRig, eventually, testProfile, type BookingRig } from '../harness/booking';
import { connectDevServer } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, `deploy-settings-${randomUUID().slice(0, 6)}`);
});
afterAll(async () => {
  await env?.client.schedule
    .getHandle(sweepScheduleId(rig.taskQueue))
    .delete()
    .catch(() => undefined);
  await rig?.close();
});

const lines: string[] = [];
const io = { say: (line: string) => lines.push(line), identity: 'deploy-settings test' };
/** The fleet's configuration as the workers read it, without the supplier's credentials (settings needs none). */
const fleetEnv = (queryOrdersPerSecond: number, everyMinutes: number) => ({
  SUPPLIER_PROFILE: JSON.stringify({ rateLimits: { queryOrders: queryOrdersPerSecond } }),
  RECONCILIATION_EVERY_MINUTES: String(everyMinutes),
});
const args = () => parseDeployArgs(['settings', '--deployment', 'fleet', '--task-queue', rig.taskQueue], {});

async function queueLimit(queue: string) {
  const described = await env.client.workflowService.describeTaskQueue({
    namespace: env.namespace ?? 'default',
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
  const queue = queryOrdersTaskQueue(rig.taskQueue);
  expect(testProfile.rateLimits.queryOrders).not.toBe(3);
  const result = await settingsStep(env.client, args(), io, fleetEnv(3, 7));
  expect(result.value).toMatchObject({ queryOrdersLimits: [{ queue, perSecond: 3 }] });
  // The rig's worker polls the queue with its profile's own limit; the queue-level one is what the server applies.
  const limit = await eventually(async () => {
    const l = await queueLimit(queue);
    return l.effective === 3 ? l : undefined;
  });
  expect(limit).toEqual({ set: 3, effective: 3, source: temporal.api.enums.v1.RateLimitSource.RATE_LIMIT_SOURCE_API });
});

const reconciliation = (everyMinutes: number): ReconciliationConfig => ({
  schedule: true,
  everyMinutes,
  lookbackMinutes: 60,
  settleMinutes: 0,
  sliceMinutes: 30,
  cancelOrphans: false,
});

test("the deploy's sweep Schedule is left alone by a worker with another configuration", async () => {
  const handle = env.client.schedule.getHandle(sweepScheduleId(rig.taskQueue));
  const described = await handle.describe();
  expect(described.state.note).toMatch(new RegExp(`^${DEPLOY_OWNED_NOTE} by deploy-settings test`));
  expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 7 * 60_000 })]);

  const worker = { taskQueue: rig.taskQueue, profile: defaultSupplierProfile, reconciliation: reconciliation(15) };
  expect(await ensureReconciliationSchedule(env.client, worker)).toMatchObject({ created: false, keptDeploys: true });
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 7 * 60_000 })]);

  // The deploy's next settings change it; a Schedule no deploy set is still a worker's to update.
  await settingsStep(env.client, args(), io, fleetEnv(3, 9));
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 9 * 60_000 })]);
  await handle.delete();
  await ensureReconciliationSchedule(env.client, { ...worker, reconciliation: reconciliation(20) });
  expect(await ensureReconciliationSchedule(env.client, worker)).toEqual({
    scheduleId: sweepScheduleId(rig.taskQueue),
    created: false,
  });
  expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 15 * 60_000 })]);
});

test('a configuration the workers would refuse is refused, naming the variable', async () => {
  await expect(
    settingsStep(env.client, args(), io, { ...fleetEnv(3, 7), SUPPLIER_PROFILE: '{"rateLimits":' }),
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
    const result = await settingsStep(env.client, args(), io, {
      SUPPLIER_ACCOUNTS_FILE: path.join(dir, 'accounts.json'),
      RECONCILIATION_EVERY_MINUTES: '9',
    });
    const other = supplierTaskQueue(rig.taskQueue, 'other');
    expect(result.value).toMatchObject({
      queryOrdersLimits: expect.arrayContaining([{ queue: queryOrdersTaskQueue(other), perSecond: 2 }]),
      // The first account is the worker's own supplier: its sweep is the queue's own Schedule, not a second one.
      accountSchedules: [{ account: 'other', scheduleId: sweepScheduleId(other), created: true }],
    });
    const described = await env.client.schedule.getHandle(sweepScheduleId(other)).describe();
    expect(described.action.type === 'startWorkflow' && described.action.args?.[0]).toMatchObject({
      supplier: 'other',
      statuses: { confirmed: 12 },
    });
    expect(described.action.type === 'startWorkflow' && described.action.taskQueue).toBe(rig.taskQueue);
    await env.client.schedule.getHandle(sweepScheduleId(other)).delete();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
