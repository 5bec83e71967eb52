/**
 * Where the deploy command lets new runs go, on a real dev server (src/operators/deploy): builds A, B and C of one deployment
 * on one queue, all running this checkout's code (the gate is not what is tested here).
 *  - Rollback goes to the build current just before, never to a build whose ramp was aborted later (the server stamps
 *    lastDeactivationTime on both).
 *  - Drain does not say a build may stop until the grace period after it stopped taking new runs has passed.
 *  - A move to a build whose workers stopped is refused, naming the queue nobody polls, and routing stays as it was.
 */
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { runDeployStep } from '../../src/operators/deploy/main';
import { moveNewRuns, rollbackTarget } from '../../src/operators/deploy/moves';
import { describeDeployment, setCurrentBuild, setRampingBuild } from '../../src/operators/deploy/routing';
import { deployBuilds, useDeployTest } from '../harness/deploy';
import { workflowBundle } from '../harness/temporal';

const { deploymentName, a, b, c } = deployBuilds('routing');
const d = useDeployTest({
  name: 'deploy-routing',
  deployment: a,
  moreArgs: () => ['--bundle', workflowBundle().codePath],
});
const { lines, io, args } = d;

test('rollback goes to the build current before, not to a later aborted ramp; never to a build nobody serves', async () => {
  await d.waitServed(a);
  await setCurrentBuild(d.env.client, a, io);
  // B and C registered once each has polled every queue build A polls.
  await d.startWorker(b);
  await d.startWorker(c);

  expect((await runDeployStep(d.env.client, args('rollout', '--build-id', b.buildId), io)).exitCode).toBe(0);
  // A has no open run, but it stopped taking new runs a moment ago: visibility may not list a run started just
  // before, so drain does not say it may stop until the grace period has passed (or the server says drained).
  const early = await runDeployStep(d.env.client, args('drain', '--build-id', a.buildId), io);
  expect(early).toMatchObject({ exitCode: 1, value: { openRuns: 0, drained: false } });
  expect(lines.at(-1)).toMatch(/stopped taking new runs \d+ s ago.*not yet/);
  await new Promise((r) => setTimeout(r, 1_000));
  const late = await runDeployStep(d.env.client, args('drain', '--build-id', a.buildId, '--grace', '1'), io);
  expect(late).toMatchObject({ exitCode: 0, value: { openRuns: 0, drained: true } });
  // C ramps and the ramp is aborted after B became current: C now has the latest lastDeactivationTime.
  expect(
    (await runDeployStep(d.env.client, args('ramp', '--build-id', c.buildId, '--percent', '10'), io)).exitCode,
  ).toBe(0);
  expect(
    (await runDeployStep(d.env.client, args('ramp', '--build-id', c.buildId, '--percent', '0'), io)).exitCode,
  ).toBe(0);
  const routing = (await describeDeployment(d.env.client, deploymentName))!;
  expect(routing.current).toBe(b.buildId);
  expect(rollbackTarget(routing)).toBe(a.buildId);

  // A's workers stop; its registration (and its queues) stay. Rolling back to it is refused, naming a queue.
  await d.rig.stopWorker();
  await new Promise((r) => setTimeout(r, 3_000));
  const stopped = runDeployStep(d.env.client, args('rollback'), { ...io, liveWithinMs: 2_000 });
  await expect(stopped).rejects.toThrow(
    new RegExp(`build ${a.buildId.replace('+', '\\+')}: no live worker: none of its workers polled ${d.rig.taskQueue}`),
  );
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(b.buildId);
  // A rollout to C, whose workers still poll, goes ahead.
  expect((await runDeployStep(d.env.client, args('rollout', '--build-id', c.buildId), io)).exitCode).toBe(0);
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(c.buildId);
}, 60_000);

test('a routing change that lost the race to another one is refused, and the other one stands', async () => {
  const stale = (await describeDeployment(d.env.client, deploymentName))!;
  expect(stale.current).toBe(c.buildId);
  // Another operator ramps B between this step's read and its change.
  const other = { identity: 'another operator' };
  await setRampingBuild(
    d.env.client,
    deploymentName,
    { buildId: b.buildId, percentage: 20 },
    other,
    stale.conflictToken,
  );
  await expect(moveNewRuns(d.env.client, stale, { current: a.buildId }, io)).rejects.toThrow(
    /routing changed since this step read it.*nothing was changed by this step/,
  );
  const fresh = (await describeDeployment(d.env.client, deploymentName))!;
  expect(fresh).toMatchObject({ current: c.buildId, ramping: { buildId: b.buildId, percentage: 20 } });
  // Read again, the change goes.
  await moveNewRuns(d.env.client, fresh, { current: b.buildId }, io);
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(b.buildId);
}, 30_000);

test("a gate, rollout or rollback for a build whose code this checkout is not is refused without that build's bundle", async () => {
  const elsewhere = (...argv: string[]) =>
    parseDeployArgs([...argv, '--deployment', deploymentName, '--task-queue', d.rig.taskQueue], {});
  await expect(runDeployStep(d.env.client, elsewhere('gate', '--build-id', '9.9.9+elsewhere'), io)).rejects.toThrow(
    /^build 9\.9\.9\+elsewhere is not this checkout's code/,
  );
  // The rollback target (C, current before B) is no build of this checkout either.
  await expect(runDeployStep(d.env.client, elsewhere('rollback'), io)).rejects.toThrow(
    new RegExp(`^build ${c.buildId.replace('+', '\\+')} is not this checkout's code`),
  );
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(b.buildId);
});
