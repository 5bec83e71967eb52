/**
 * Where the deploy command lets new runs go, on a real dev server (src/operators/deploy): builds A, B and C of one deployment
 * on one queue, all running this checkout's code (the gate is not what is tested here).
 *  - Rollback goes to the build current just before, never to a build whose ramp was aborted later (the server stamps
 *    lastDeactivationTime on both).
 *  - Drain does not say a build may stop until the grace period after it stopped taking new runs has passed.
 *  - A move to a build whose workers stopped is refused, naming the queue nobody polls, and routing stays as it was.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { runDeployStep } from '../../src/operators/deploy/main';
import { moveNewRuns, rollbackTarget } from '../../src/operators/deploy/moves';
import { describeDeployment, lastPolls, setCurrentBuild, setRampingBuild } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { createBookingRig, eventually, testProfile, type BookingRig } from '../harness/booking';
import { connectDevServer, workflowBundle } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
const workers: Array<{ worker: BookingWorker; running: Promise<void> }> = [];
const deploymentName = `routing-${randomUUID().slice(0, 8)}`;
const a: WorkerBuild = { deploymentName, buildId: '1.0.0+aaaaaaa' };
const b: WorkerBuild = { deploymentName, buildId: '1.0.0+bbbbbbb' };
const c: WorkerBuild = { deploymentName, buildId: '1.0.0+ccccccc' };

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'deploy-routing', { deployment: a });
}, 60_000);

afterAll(async () => {
  for (const w of workers) {
    if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
    await w.running;
  }
  await rig?.close();
});

/** The build's three queues (booking workflows and activities, QueryOrders activities) each polled. */
const served = (polls: Array<{ lastPollMs?: number }>) =>
  polls.length >= 3 && polls.every((p) => p.lastPollMs !== undefined) ? true : undefined;

async function startWorker(build: WorkerBuild): Promise<void> {
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: rig.taskQueue,
    supplier: rig.supplier,
    profile: testProfile,
    workflowBundle: workflowBundle(),
    recoveryTesting: true,
    deployment: build,
  });
  workers.push({ worker, running: worker.run() });
  // Registered once it has polled every queue build A polls.
  await eventually(async () => (served(await lastPolls(env.client, build)) ? true : undefined));
}

const lines: string[] = [];
const io = { say: (line: string) => lines.push(line), identity: 'deploy-routing test' };
const args = (...argv: string[]) =>
  parseDeployArgs(
    [...argv, '--deployment', deploymentName, '--task-queue', rig.taskQueue, '--bundle', workflowBundle().codePath],
    {},
  );

test('rollback goes to the build current before, not to a later aborted ramp; never to a build nobody serves', async () => {
  await eventually(async () => (served(await lastPolls(env.client, a)) ? true : undefined));
  await setCurrentBuild(env.client, a, { identity: 'deploy-routing test' });
  await startWorker(b);
  await startWorker(c);

  expect((await runDeployStep(env.client, args('rollout', '--build-id', b.buildId), io)).exitCode).toBe(0);
  // A has no open run, but it stopped taking new runs a moment ago: visibility may not list a run started just
  // before, so drain does not say it may stop until the grace period has passed (or the server says drained).
  const early = await runDeployStep(env.client, args('drain', '--build-id', a.buildId), io);
  expect(early).toMatchObject({ exitCode: 1, value: { openRuns: 0, drained: false } });
  expect(lines.at(-1)).toMatch(/stopped taking new runs \d+ s ago.*not yet/);
  await new Promise((r) => setTimeout(r, 1_000));
  const late = await runDeployStep(env.client, args('drain', '--build-id', a.buildId, '--grace', '1'), io);
  expect(late).toMatchObject({ exitCode: 0, value: { openRuns: 0, drained: true } });
  // C ramps and the ramp is aborted after B became current: C now has the latest lastDeactivationTime.
  expect((await runDeployStep(env.client, args('ramp', '--build-id', c.buildId, '--percent', '10'), io)).exitCode).toBe(
    0,
  );
  expect((await runDeployStep(env.client, args('ramp', '--build-id', c.buildId, '--percent', '0'), io)).exitCode).toBe(
    0,
  );
  const routing = (await describeDeployment(env.client, deploymentName))!;
  expect(routing.current).toBe(b.buildId);
  expect(rollbackTarget(routing)).toBe(a.buildId);

  // A's workers stop; its registration (and its queues) stay. Rolling back to it is refused, naming a queue.
  await rig.stopWorker();
  await new Promise((r) => setTimeout(r, 3_000));
  const stopped = runDeployStep(env.client, args('rollback'), { ...io, liveWithinMs: 2_000 });
  await expect(stopped).rejects.toThrow(
    new RegExp(`build ${a.buildId.replace('+', '\\+')}: no live worker: none of its workers polled ${rig.taskQueue}`),
  );
  expect((await describeDeployment(env.client, deploymentName))?.current).toBe(b.buildId);
  // A rollout to C, whose workers still poll, goes ahead.
  expect((await runDeployStep(env.client, args('rollout', '--build-id', c.buildId), io)).exitCode).toBe(0);
  expect((await describeDeployment(env.client, deploymentName))?.current).toBe(c.buildId);
}, 60_000);

test('a routing change that lost the race to another one is refused, and the other one stands', async () => {
  const stale = (await describeDeployment(env.client, deploymentName))!;
  expect(stale.current).toBe(c.buildId);
  // Another operator ramps B between this step's read and its change.
  const other = { identity: 'another operator' };
  await setRampingBuild(env.client, deploymentName, { buildId: b.buildId, percentage: 20 }, other, stale.conflictToken);
  await expect(moveNewRuns(env.client, stale, { current: a.buildId }, io)).rejects.toThrow(
    /routing changed since this step read it.*nothing was changed by this step/,
  );
  const fresh = (await describeDeployment(env.client, deploymentName))!;
  expect(fresh).toMatchObject({ current: c.buildId, ramping: { buildId: b.buildId, percentage: 20 } });
  // Read again, the change goes.
  await moveNewRuns(env.client, fresh, { current: b.buildId }, io);
  expect((await describeDeployment(env.client, deploymentName))?.current).toBe(b.buildId);
}, 30_000);

test("a gate, rollout or rollback for a build whose code this checkout is not is refused without that build's bundle", async () => {
  const elsewhere = (...argv: string[]) =>
    parseDeployArgs([...argv, '--deployment', deploymentName, '--task-queue', rig.taskQueue], {});
  await expect(runDeployStep(env.client, elsewhere('gate', '--build-id', '9.9.9+elsewhere'), io)).rejects.toThrow(
    /^build 9\.9\.9\+elsewhere is not this checkout's code/,
  );
  // The rollback target (C, current before B) is no build of this checkout either.
  await expect(runDeployStep(env.client, elsewhere('rollback'), io)).rejects.toThrow(
    new RegExp(`^build ${c.buildId.replace('+', '\\+')} is not this checkout's code`),
  );
  expect((await describeDeployment(env.client, deploymentName))?.current).toBe(b.buildId);
});
