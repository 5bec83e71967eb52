/**
 * The progressive ramp on a real dev server (src/operators/deploy/ramp.ts): builds A (current) and B, C of one
 * deployment. B fails its first workflow task (its booking throws); the gate passes it (no run of it exists yet), so
 * only its health can stop it.
 *  - `ramp --steps 50,100 --wait` of B, with bookings started during the pause: B's runs fail their first task, the
 *    watched pause sees it, the ramp is undone by itself, A still takes every new run (exit 1).
 *  - The same ramp of C (this checkout's code) goes step by step to current (exit 0).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runDeployStep } from '../../src/operators/deploy/main';
import { describeDeployment, setCurrentBuild } from '../../src/operators/deploy/routing';
import { bookingRequest, startBooking } from '../harness/booking';
import { deployBuilds, useDeployTest } from '../harness/deploy';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { workflowBundle } from '../harness/temporal';

const { deploymentName, a, b, c } = deployBuilds('ramp');
const d = useDeployTest({ name: 'deploy-ramp', deployment: a });
const { handles, lines, io, args } = d;
let brokenBundle: string;

beforeAll(async () => {
  // Build B: this checkout's workflows, but a booking that throws in its first task.
  // Plain JavaScript: the bundler compiles TypeScript outside node_modules only.
  const source = path.join(d.dir, 'broken.js');
  writeFileSync(
    source,
    `export * from ${JSON.stringify(path.resolve(__dirname, '../../src/workflows'))};\n` +
      'export async function bookingWorkflow() {\n' +
      "  throw new TypeError('build B fails its first workflow task');\n}\n",
  );
  brokenBundle = await d.bundle('broken-bundle.js', source);
}, 120_000);

/** Starts a booking every 200 ms until `done` settles: the traffic a ramp shares out. */
async function trafficUntil(done: Promise<unknown>): Promise<void> {
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    handles.push(await startBooking(d.env, d.rig, bookingRequest()));
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a ramp whose build fails its first workflow task is undone by itself; the current build stays', async () => {
  expectWorkerWarnings(/build B fails its first workflow task/);
  await d.waitServed(a);
  await setCurrentBuild(d.env.client, a, io);
  await d.startWorker(b, { codePath: brokenBundle });

  const ramp = runDeployStep(
    d.env.client,
    args('ramp', '--build-id', b.buildId, '--steps', '50,100', '--pause', '60s', '--wait', '--bundle', brokenBundle),
    { ...io, pollMs: 1_000 },
  );
  await trafficUntil(ramp);
  const result = await ramp;
  expect(result).toMatchObject({ exitCode: 1, value: { rolledBack: true, current: a.buildId } });
  const [step] = (result.value as { steps: Array<{ percent: number; health: { failures: number } }> }).steps;
  expect(step!.percent).toBe(50);
  expect(step!.health.failures).toBeGreaterThan(0);
  const routing = (await describeDeployment(d.env.client, deploymentName))!;
  expect(routing.current).toBe(a.buildId);
  expect(routing.ramping).toBeUndefined();
  expect(lines.join('\n')).toContain(`Ramp undone: build ${a.buildId} takes every new run again`);
  // --wait: the pause watched, health said as it goes, and the ramp undone once over the limit, not after 60 s.
  expect(lines.join('\n')).toMatch(/s into the 50 % step: \d+ runs on it, [1-9]\d* failing/);
}, 90_000);

test('a ramp of a healthy build goes step by step to current', async () => {
  await d.startWorker(c);
  const ramp = runDeployStep(
    d.env.client,
    args('ramp', '--build-id', c.buildId, '--steps', '50,100', '--pause', '2s', '--bundle', workflowBundle().codePath),
    io,
  );
  await trafficUntil(ramp);
  expect(await ramp).toMatchObject({ exitCode: 0, value: { rolledBack: false } });
  expect((await describeDeployment(d.env.client, deploymentName))?.current).toBe(c.buildId);
}, 90_000);
