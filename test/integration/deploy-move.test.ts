/**
 * Drain that never strands a run, and moving pinned runs off a lost build, on a real dev server (src/operators/deploy):
 * builds A (current), B (live) and C (its workers started, then gone) of one deployment, this checkout's code.
 *  - A booking pinned to C by an override (it never ran a task there): drain says C may not stop, and how to move it.
 *  - `move --from C --to B` replays it against B's code, pins it to B, and it completes there; C then drains.
 *  - A drain waiting for A ends without "may stop" when A is made current again meanwhile (it read routing once,
 *    and said A may stop once the grace since A's old deactivation had passed).
 *  - A run B's code does not replay (build B' adds a step: dev/builds/changed-commands) is not moved, and nothing is.
 */
import { bookingWorkflowId } from '../../src/api/contract/index';
import { runDeployStep } from '../../src/operators/deploy/main';
import { openPinnedRunsOn, openRunsOn, setCurrentBuild } from '../../src/operators/deploy/routing';
import { bookingRequest, eventually, startBooking } from '../harness/booking';
import { deployBuilds, useDeployTest } from '../harness/deploy';
import { workflowBundle } from '../harness/temporal';

const { a, b, c } = deployBuilds('move');
const d = useDeployTest({ name: 'deploy-move', deployment: a });
const { handles, lines, io, args } = d;
let changedBundle: string;

beforeAll(async () => {
  changedBundle = await d.bundle('changed-commands.js', require.resolve('../../dev/builds/changed-commands'));
}, 120_000);

test('drain never says a build may stop while a run is pinned to it; move takes the run to a live build', async () => {
  await d.waitServed(a);
  await setCurrentBuild(d.env.client, a, io);
  await d.startWorker(b);
  // C's workers came up, then C was lost.
  const lost = await d.startWorker(c);
  lost.worker.shutdown();
  await lost.running;

  // Pinned to C by an override (an operator's, or a move of an earlier day): its first task waits for C's workers.
  const request = bookingRequest();
  const stranded = await d.env.client.workflow.start('bookingWorkflow', {
    taskQueue: d.rig.taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
    versioningOverride: { pinnedTo: c },
  });
  handles.push(stranded);
  await eventually(async () => ((await openPinnedRunsOn(d.env.client, c)) === 1 ? true : undefined));

  const early = await runDeployStep(d.env.client, args('drain', '--build-id', c.buildId, '--grace', '0'), io);
  expect(early).toMatchObject({ exitCode: 1, value: { pinnedRuns: 1, drained: false } });
  expect(lines.at(-1)).toMatch(/1 pinned to it; not until they finish, or `deploy move --from 1\.0\.0\+ccccccc`/);

  const bundle = ['--bundle', workflowBundle().codePath];
  const moved = await runDeployStep(d.env.client, args('move', '--from', c.buildId, '--to', b.buildId, ...bundle), io);
  expect(moved).toMatchObject({ exitCode: 0, value: { moved: 1 } });
  expect((await stranded.result()).kind).toBe('confirmed');
  const desc = await stranded.describe();
  expect(desc.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(b.buildId);

  await eventually(async () => ((await openPinnedRunsOn(d.env.client, c)) === 0 ? true : undefined));
  const late = await runDeployStep(d.env.client, args('drain', '--build-id', c.buildId, '--grace', '0'), io);
  expect(late).toMatchObject({ exitCode: 0, value: { pinnedRuns: 0, drained: true } });
}, 120_000);

test("a move whose target's code does not replay a pinned run moves none", async () => {
  // A booking on A (current) that stays open: Book answers 504 and the order stays pending.
  const open = await startBooking(d.env, d.rig, bookingRequest({ test: 'book=504AfterCreate&outcome=pending' }));
  handles.push(open);
  // Book sent (the first test's booking made the first order): the run has history beyond its first task.
  await eventually(async () => (d.rig.sandbox.orders().length > 1 ? true : undefined));
  await eventually(async () => ((await openPinnedRunsOn(d.env.client, a)) === 1 ? true : undefined));

  const refused = await runDeployStep(
    d.env.client,
    args('move', '--from', a.buildId, '--to', b.buildId, '--bundle', changedBundle),
    io,
  );
  expect(refused).toMatchObject({ exitCode: 1, value: { moved: 0, refused: [{ workflowId: open.workflowId }] } });
  expect(lines.at(-1)).toMatch(/^Nothing moved/);
  const desc = await open.describe();
  expect(desc.raw.workflowExecutionInfo?.versioningInfo?.versioningOverride ?? null).toBeNull();
  // Without the target's code the move is refused before anything is read.
  await expect(runDeployStep(d.env.client, args('move', '--from', a.buildId, '--to', b.buildId), io)).rejects.toThrow(
    /is not this checkout's code/,
  );
  await open.terminate('the order it waits for will never settle');
  await eventually(async () => ((await openRunsOn(d.env.client, a)) === 0 ? true : undefined));
}, 60_000);

test('a drain that waits ends without "may stop" when its build takes new runs again meanwhile', async () => {
  // No run is open on A: only routing can keep A from stopping.
  // B current, A no longer: A's grace (5 s) starts now.
  await setCurrentBuild(d.env.client, b, io);
  const waiting = runDeployStep(d.env.client, args('drain', '--build-id', a.buildId, '--wait', '--grace', '5'), {
    ...io,
    pollMs: 1_000,
  });
  // A rollback by someone else before the grace is over: A takes every new run again.
  await setCurrentBuild(d.env.client, a, io);
  const result = await waiting;
  expect(result).toMatchObject({ exitCode: 1, value: { takesNewRuns: true, drained: false } });
  expect(lines.join('\n')).not.toContain(`Build ${a.buildId} is drained`);
}, 60_000);
