/**
 * The reconciliation sweep's Schedule on the dev server: created by the worker's setup, safe to create again
 * (the second call updates it to the configuration), and what it starts is a sweep that runs on the worker
 * (triggered here rather than waited for).
 */
import { ensureReconciliationSchedule } from '../../src/runtime/namespace/sweep-schedule';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import { sweepScheduleId, type SweepResult } from '../../src/api/contract/index';
import { sweepConfig, useDeployTest } from '../harness/deploy';

// The rig and its sweep Schedule are the deploy tests' (deleted at the end).
const d = useDeployTest({ name: 'reconciliation-schedule', queue: 'sweep-schedule', sweepSchedule: true });
// Registered after the harness's clean-up, so it runs after it: the connection is closed last.
afterAll(() => d.env?.teardown());

const config = (everyMinutes: number) => sweepConfig(everyMinutes, { checkInHours: 6 });

test('created once, then updated in place; a triggered run sweeps on the worker', async () => {
  const options = { taskQueue: d.rig.taskQueue, profile: defaultSupplierProfile };
  const first = await ensureReconciliationSchedule(d.env.client, { ...options, reconciliation: config(15) });
  const second = await ensureReconciliationSchedule(d.env.client, { ...options, reconciliation: config(5) });
  expect(first).toEqual({ scheduleId: sweepScheduleId(d.rig.taskQueue), created: true });
  expect(second).toEqual({ scheduleId: first.scheduleId, created: false });

  const handle = d.env.client.schedule.getHandle(first.scheduleId);
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
  const result: SweepResult = await d.env.client.workflow.getHandle(runId).result();
  // 2 slices of booking time, 2 of cancellation time, 2 of check-in time (6 h in 3-hour slices).
  expect(result).toMatchObject({ requests: 6, orphans: [], mismatches: [], failedSlices: [] });
});
