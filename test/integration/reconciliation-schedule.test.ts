/**
 * The reconciliation sweep's Schedule on the dev server: created by the worker's setup, safe to create again
 * (the second call updates it to the configuration), and what it starts is a sweep that runs on the worker
 * (triggered here rather than waited for).
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectDevServer } from '../harness/temporal';
import { createBookingRig, type BookingRig } from '../harness/booking';
import { ensureReconciliationSchedule } from '../../src/runtime/namespace/sweep-schedule';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import { sweepScheduleId, type SweepResult } from '../../src/api/contract/index';
import type { ReconciliationConfig } from '../../src/runtime/config/index';

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, `sweep-schedule-${randomUUID().slice(0, 6)}`);
});
afterAll(async () => {
  await env?.client.schedule
    .getHandle(sweepScheduleId(rig.taskQueue))
    .delete()
    .catch(() => undefined);
  await rig?.close();
  await env?.teardown();
});

const config = (everyMinutes: number): ReconciliationConfig => ({
  schedule: true,
  everyMinutes,
  lookbackMinutes: 60,
  settleMinutes: 0,
  sliceMinutes: 30,
  cancelOrphans: false,
  checkInHours: 6,
});

test('created once, then updated in place; a triggered run sweeps on the worker', async () => {
  const options = { taskQueue: rig.taskQueue, profile: defaultSupplierProfile };
  const first = await ensureReconciliationSchedule(env.client, { ...options, reconciliation: config(15) });
  const second = await ensureReconciliationSchedule(env.client, { ...options, reconciliation: config(5) });
  expect(first).toEqual({ scheduleId: sweepScheduleId(rig.taskQueue), created: true });
  expect(second).toEqual({ scheduleId: first.scheduleId, created: false });

  const handle = env.client.schedule.getHandle(first.scheduleId);
  const described = await handle.describe();
  expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 5 * 60_000 })]);
  expect(described.policies.overlap).toBe('SKIP');

  await handle.trigger();
  const runId = await (async () => {
    for (let i = 0; i < 100; i++) {
      const recent = (await handle.describe()).info.recentActions;
      const started = recent[0]?.action.workflow;
      if (started) return started.workflowId;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the schedule started nothing');
  })();
  const result: SweepResult = await env.client.workflow.getHandle(runId).result();
  // 2 slices of booking time, 2 of cancellation time, 2 of check-in time (6 h in 3-hour slices).
  expect(result).toMatchObject({ requests: 6, orphans: [], mismatches: [], failedSlices: [] });
});
