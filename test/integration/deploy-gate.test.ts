/**
 * The deploy command on a real dev server (src/operators/deploy): the replay gate reads histories from the cluster and replays
 * them against a new build's bundle; build B (dev/builds/changed-commands) adds a step to the booking with no patch.
 *  - An open booking of an unversioned worker would move to the build made current: B breaks it, so B is refused,
 *    and the same code as the booking's own passes.
 *  - A booking pinned to build A stays on A: B passes, naming the runs A must still finish; `--strict` refuses.
 *  - `rollout`, `drain` and `rollback` move new runs between builds while the pinned booking stays where it is.
 * Bookings here answer Book 504 and stay pending: they are open for the whole file, and terminated at its end.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { runReplayGate } from '../../src/operators/deploy/gate';
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { runDeployStep } from '../../src/operators/deploy/main';
import { describeDeployment, openRunsOn, setCurrentBuild } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { bookingRequest, eventually, startBooking, type BookingRig } from '../harness/booking';
import { deployBuilds, useDeployTest } from '../harness/deploy';
import { workflowBundle } from '../harness/temporal';

// No rig of the file's own: each test makes the one it needs.
const d = useDeployTest({ name: 'deploy-gate', rig: false });
const { handles } = d;
let bundleB: string;

beforeAll(async () => {
  bundleB = await d.bundle('build-b.js', require.resolve('../../dev/builds/changed-commands'));
}, 120_000);

/** A booking whose Book answers 504 and whose order stays pending: open, polling, until terminated. */
async function openBooking(rig: BookingRig): Promise<WorkflowHandle> {
  const handle = await startBooking(d.env, rig, bookingRequest({ test: 'book=504AfterCreate&outcome=pending' }));
  handles.push(handle);
  // Book sent and answered: the run is in recovery, with history beyond its first task.
  await eventually(async () => (rig.sandbox.orders().length > 0 ? true : undefined));
  return handle;
}

/** Makes `build` current once its workers have polled (the server registers a build at its first poll). */
async function makeCurrent(build: WorkerBuild): Promise<void> {
  await eventually(async () => {
    const routing = await describeDeployment(d.env.client, build.deploymentName);
    if (!routing?.builds.some((b) => b.buildId === build.buildId)) return undefined;
    await setCurrentBuild(d.env.client, build, d.io, routing.conflictToken);
    return true;
  });
}

async function buildOfRun(handle: WorkflowHandle): Promise<string | undefined> {
  const desc = await handle.describe();
  return desc.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

test('a build that would break an open unversioned booking is refused; the code it runs passes', async () => {
  const rig = await d.addRig('gate-unversioned');
  const handle = await openBooking(rig);
  const build = { deploymentName: `gate-${randomUUID().slice(0, 8)}`, buildId: 'b' };

  const refused = await runReplayGate({
    client: d.env.client,
    workflowBundle: { codePath: bundleB },
    build,
    taskQueue: rig.taskQueue,
  });
  expect(refused.verdict).toBe('refuse');
  expect(refused.counts['would-continue']).toEqual({ replayed: 1, failed: 1 });
  expect(refused.reasons.join('\n')).toContain(handle.workflowId);
  expect(refused.runs[0]).toMatchObject({ role: 'would-continue', status: 'diverges', behavior: 'unversioned' });

  const passed = await runReplayGate({
    client: d.env.client,
    workflowBundle: workflowBundle(),
    build,
    taskQueue: rig.taskQueue,
  });
  expect(passed.verdict).toBe('pass');
  expect(passed.counts['would-continue']).toEqual({ replayed: 1, failed: 0 });
});

test('a build that changes commands passes while the runs it would break are pinned to theirs; strict refuses', async () => {
  const { deploymentName, a, b } = deployBuilds('gate');
  const rig = await d.addRig('gate-pinned', a);
  await makeCurrent(a);
  const pinned = await openBooking(rig);
  expect(await buildOfRun(pinned)).toBe(a.buildId);

  /** The gate for `build` with build B's code, on this rig's queue. */
  const gateWithB = (build: WorkerBuild, strict = false) =>
    runReplayGate({
      client: d.env.client,
      workflowBundle: { codePath: bundleB },
      build,
      taskQueue: rig.taskQueue,
      strict,
    });
  const gate = await gateWithB(b);
  expect(gate.verdict).toBe('pass');
  expect(gate.counts['would-continue'].replayed).toBe(0);
  expect(gate.counts['pinned-elsewhere']).toEqual({ replayed: 1, failed: 1 });
  expect(gate.openElsewhere).toEqual({ [a.buildId]: 1 });
  expect((await gateWithB(b, true)).verdict).toBe('refuse');
  // B's code under A's build id: A's own open run would be continued by it, and does not replay.
  expect((await gateWithB(a)).verdict).toBe('refuse');

  // The deploy steps: B's workers beside A's, rollout, drain, rollback.
  // Not waited for: the rollout below waits until the server has registered B.
  await d.startWorker(b, { codePath: bundleB, rig, waitServed: false });
  const { lines } = d;
  const io = { ...d.io, pollMs: 500 };
  const args = (...argv: string[]) =>
    parseDeployArgs([...argv, '--deployment', deploymentName, '--task-queue', rig.taskQueue, '--bundle', bundleB], {});

  const rollout = await eventually(async () => {
    const routing = await describeDeployment(d.env.client, deploymentName);
    return routing?.builds.some((x) => x.buildId === b.buildId)
      ? runDeployStep(d.env.client, args('rollout', '--build-id', b.buildId), io)
      : undefined;
  });
  expect(rollout.exitCode).toBe(0);
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(b.buildId);
  const onB = await startBooking(d.env, rig, bookingRequest());
  handles.push(onB);
  expect((await onB.result()).kind).toBe('confirmed');
  expect(await buildOfRun(onB)).toBe(b.buildId);
  expect(await buildOfRun(pinned)).toBe(a.buildId);

  const drain = await runDeployStep(d.env.client, args('drain', '--build-id', a.buildId), io);
  expect(drain).toMatchObject({ exitCode: 1, value: { openRuns: 1, drained: false } });

  // Back to A: the gate for A passes (A's own open run replays; B's closed run diverges, as expected), A is current.
  const rollback = await runDeployStep(d.env.client, { ...args('rollback'), bundle: workflowBundle().codePath }, io);
  expect(rollback.exitCode).toBe(0);
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(a.buildId);
  expect(lines.join('\n')).toContain(`Rolled back: build ${a.buildId} is current`);

  // Once A's last run ends, A is drained.
  await runDeployStep(d.env.client, args('rollout', '--build-id', b.buildId), io);
  await pinned.terminate('the order it waits for will never settle');
  await eventually(async () => ((await openRunsOn(d.env.client, a)) === 0 ? true : undefined));
  const drained = await runDeployStep(d.env.client, args('drain', '--build-id', a.buildId, '--grace', '0'), io);
  expect(drained).toMatchObject({ exitCode: 0, value: { drained: true } });
}, 180_000);

test('the deploy command names the flag it cannot use', () => {
  expect(() => parseDeployArgs(['launch'], {})).toThrow(/^step: one of status, gate/);
  expect(() => parseDeployArgs(['status'], {})).toThrow(/^--deployment/);
  expect(() => parseDeployArgs(['drain', '--deployment', 'd'], {})).toThrow(/^--build-id: drain needs/);
  expect(parseDeployArgs(['rollout', '--deployment', 'd'], { WORKER_BUILD_ID: '2.0.0+abc' }).buildId).toBe('2.0.0+abc');
  expect(() => parseDeployArgs(['ramp', '--deployment', 'd', '--build-id', 'b'], {})).toThrow(/^--percent/);
  expect(() => parseDeployArgs(['ramp', '--deployment', 'd', '--build-id', 'b', '--percent', '150'], {})).toThrow(
    /^--percent: 0 to 100/,
  );
  expect(() => parseDeployArgs(['gate', '--deployment', 'd.x', '--build-id', 'b'], {})).toThrow(/^--deployment/);
  expect(parseDeployArgs(['status'], { WORKER_DEPLOYMENT_NAME: 'fleet', BOOKING_TASK_QUEUE: 'q' })).toMatchObject({
    step: 'status',
    deploymentName: 'fleet',
    taskQueue: 'q',
  });
});
