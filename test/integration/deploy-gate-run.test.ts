/**
 * The gate run on a real dev server (src/operators/deploy/gate-run.ts, src/workflows/gate): before a routing change,
 * a short gate workflow starts pinned to the target build, so the build's own workers prove their code, whatever
 * bundle the operator handed the replay gate. Builds A (current, this checkout's code), B and C of one deployment:
 *  - A passes: the run completed on A itself, through a local activity and one on the queue.
 *  - B's workers run code that fails every first workflow task (a module that throws as it loads): the replay gate,
 *    given this checkout's bundle, passes it, and the gate run refuses it; routing stays on A.
 *  - C's workers polled seconds ago and stopped: the served check still counts them, and the gate run, which no
 *    worker takes, refuses C; routing stays on A.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runDeployStep } from '../../src/operators/deploy/main';
import { describeDeployment, setCurrentBuild } from '../../src/operators/deploy/routing';
import { deployBuilds, useDeployTest } from '../harness/deploy';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { workflowBundle } from '../harness/temporal';

const { deploymentName, a, b, c } = deployBuilds('gate-run');
const d = useDeployTest({
  name: 'deploy-gate-run',
  deployment: a,
  // The operator's bundle is this checkout's for every build: only the gate run sees what B's workers run.
  moreArgs: () => ['--bundle', workflowBundle().codePath, '--gate-timeout', '6s'],
});
const { lines, io, args } = d;
let brokenBundle: string;

beforeAll(async () => {
  // Plain JavaScript: the bundler compiles TypeScript outside node_modules only.
  const source = path.join(d.dir, 'broken.js');
  writeFileSync(
    source,
    `export * from ${JSON.stringify(path.resolve(__dirname, '../../src/workflows'))};\n` +
      "throw new TypeError('build B cannot load its workflow code');\n",
  );
  brokenBundle = await d.bundle('broken-bundle.js', source);
}, 120_000);

test('the gate run passes the build that runs it; refuses a build that fails its first task', async () => {
  expectWorkerWarnings(/build B cannot load its workflow code/, /Failed to process Workflow Activation/);
  await d.waitServed(a);
  await setCurrentBuild(d.env.client, a, io);
  const own = await runDeployStep(d.env.client, args('gate', '--build-id', a.buildId), io);
  expect(own.exitCode).toBe(0);
  expect((own.value.gate as { run: unknown }).run).toMatchObject({ verdict: 'pass', ranOn: a });

  await d.startWorker(b, { codePath: brokenBundle });
  const rollout = await runDeployStep(d.env.client, args('rollout', '--build-id', b.buildId), io);
  expect(rollout).toMatchObject({ exitCode: 1, value: { moved: false } });
  expect(lines.join('\n')).toContain('Replay gate for build 1.0.0+bbbbbbb: PASS');
  expect(lines.at(-1)).toMatch(
    /Gate run on build 1\.0\.0\+bbbbbbb: REFUSED: .*failed its first workflow task: .*cannot load/,
  );
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(a.buildId);
}, 60_000);

test('the gate run refuses a build whose workers stopped, while its last polls still look recent', async () => {
  const worker = await d.startWorker(c);
  // Its polls reach the server first (the build is registered and looks served), then it stops.
  await d.waitServed(c);
  worker.worker.shutdown();
  await worker.running;
  const rollout = await runDeployStep(d.env.client, args('rollout', '--build-id', c.buildId), io);
  expect(rollout).toMatchObject({ exitCode: 1, value: { moved: false } });
  expect(lines.at(-1)).toMatch(
    /Gate run on build 1\.0\.0\+ccccccc: REFUSED: no worker of build .* took .* no live worker/,
  );
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(a.buildId);
}, 60_000);
