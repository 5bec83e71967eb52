/**
 * The one follow loop (src/workflows/follow.ts), alone, on the time-skipping server: a fixture workflow follows
 * nothing but the loop, so what is checked here is the loop's own word, once, for the booking's recovery, a
 * cancellation's follow-up and the automatic cancellation's wait alike: the reads come at the schedule's offsets and
 * the last at the deadline; a hint brings one read forward, a second within the minute waits; a stop ends a wait at
 * once; a long history hands the place to a new run and the schedule goes on where it was.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { hintSignal, stopSignal, type followFixture, type FollowFixtureInput } from './fixtures/follow-workflow';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { connectTimeSkipping } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `follow-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  // The fixture is a workflow alone: its worker has no activities to poll for, and says so.
  expectWorkerWarnings(/^WARN No activities registered, not polling for activity tasks/);
  env = await connectTimeSkipping();
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('./fixtures/follow-workflow'),
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const start = (input: FollowFixtureInput) =>
  env.client.workflow.start<typeof followFixture>('followFixture', {
    taskQueue,
    workflowId: `follow:${randomUUID()}`,
    args: [input],
  });

/** 0, 30, 30+60, 90+120, then the next (210+600) capped at a 600 s deadline. */
const TO_THE_DEADLINE = [
  [0, 'schedule'],
  [30, 'schedule'],
  [90, 'schedule'],
  [210, 'schedule'],
  [600, 'schedule'],
];

const readsOf = (reads: { atSeconds: number; trigger: string }[]) => reads.map((r) => [r.atSeconds, r.trigger]);

test("reads at once, then at the schedule's offsets, the last one at the deadline", async () => {
  const result = await (await start({ deadlineSeconds: 600, endAfterReads: 100 })).result();
  expect(result.ended).toBe('deadline');
  expect(readsOf(result.reads)).toEqual(TO_THE_DEADLINE);
  expect(result.reads.map((r) => r.atDeadline)).toEqual([false, false, false, false, true]);
});

test('a hint brings one read forward; a second within the minute waits for the scheduled read', async () => {
  const handle = await start({ deadlineSeconds: 3600, endAfterReads: 3 });
  await env.sleep('10 seconds');
  await handle.signal(hintSignal);
  await env.sleep('10 seconds');
  await handle.signal(hintSignal);
  const result = await handle.result();
  expect(readsOf(result.reads)).toEqual([
    [0, 'schedule'],
    [10, 'supplier-hint'],
    [30, 'schedule'],
  ]);
  // The hint's read did not move the schedule: the read due at 30 s still came at 30 s.
  expect(result.reads.map((r) => r.early)).toEqual([false, true, false]);
});

test('a stop ends the wait at once and the read it makes ends the follow-up', async () => {
  const handle = await start({ deadlineSeconds: 3600, endAfterReads: 100 });
  await env.sleep('45 seconds');
  await handle.signal(stopSignal);
  const result = await handle.result();
  expect(result.ended).toBe('stopped');
  expect(readsOf(result.reads)).toEqual([
    [0, 'schedule'],
    [30, 'schedule'],
    [45, 'schedule'],
  ]);
  expect(result.reads[2]).toMatchObject({ early: true, atDeadline: false });
});

test('a long history hands the place over to a new run, and the schedule goes on where it was', async () => {
  const result = await (await start({ deadlineSeconds: 600, endAfterReads: 100, handOverAfterEvents: 12 })).result();
  expect(result.runs).toBeGreaterThan(1);
  expect(result.ended).toBe('deadline');
  expect(readsOf(result.reads)).toEqual(TO_THE_DEADLINE);
});
