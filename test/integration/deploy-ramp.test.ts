/**
 * The progressive ramp on a real dev server (src/operators/deploy/ramp.ts): builds A (current) and B, C of one
 * deployment. B fails its first workflow task (its booking throws); the gate passes it (no run of it exists yet), so
 * only its health can stop it.
 *  - `ramp --steps 50,100` of B, with bookings started during the pause: B's runs fail their first task, the ramp is
 *    undone by itself, A still takes every new run (exit 1).
 *  - The same ramp of C (this checkout's code) goes step by step to current (exit 0).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { runDeployStep } from '../../src/operators/deploy/main';
import { describeDeployment, lastPolls, setCurrentBuild } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { workflowBundlerOptions } from '../../src/workflow-bundle';
import {
  bookingRequest,
  createBookingRig,
  eventually,
  startBooking,
  testProfile,
  type BookingRig,
} from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { connectDevServer, workflowBundle } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let dir: string;
let brokenBundle: string;
const handles: WorkflowHandle[] = [];
const workers: Array<{ worker: BookingWorker; running: Promise<void> }> = [];
const deploymentName = `ramp-${randomUUID().slice(0, 8)}`;
const a: WorkerBuild = { deploymentName, buildId: '1.0.0+aaaaaaa' };
const b: WorkerBuild = { deploymentName, buildId: '1.0.0+bbbbbbb' };
const c: WorkerBuild = { deploymentName, buildId: '1.0.0+ccccccc' };

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'deploy-ramp', { deployment: a });
  // Under node_modules/.cache: the bundler resolves the SDK's modules from there (not from the system's temp dir).
  const cache = path.resolve(__dirname, '../../node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  dir = mkdtempSync(path.join(cache, 'deploy-ramp-'));
  // Build B: this checkout's workflows, but a booking that throws in its first task.
  // Plain JavaScript: the bundler compiles TypeScript outside node_modules only.
  const source = path.join(dir, 'broken.js');
  writeFileSync(
    source,
    `export * from ${JSON.stringify(path.resolve(__dirname, '../../src/workflows'))};\n` +
      'export async function bookingWorkflow() {\n' +
      "  throw new TypeError('build B fails its first workflow task');\n}\n",
  );
  const { code } = await bundleWorkflowCode({
    workflowsPath: source,
    ...workflowBundlerOptions(),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  brokenBundle = path.join(dir, 'broken-bundle.js');
  writeFileSync(brokenBundle, code);
}, 120_000);

afterAll(async () => {
  await Promise.all(handles.map((h) => h.terminate('deploy-ramp test done').catch(() => undefined)));
  for (const w of workers) {
    if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
    await w.running;
  }
  await rig?.close();
  rmSync(dir, { recursive: true, force: true });
});

const served = (polls: Array<{ lastPollMs?: number }>) =>
  polls.length >= 3 && polls.every((p) => p.lastPollMs !== undefined) ? true : undefined;

async function startWorker(build: WorkerBuild, codePath: string): Promise<void> {
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: rig.taskQueue,
    supplier: rig.supplier,
    profile: testProfile,
    workflowBundle: { codePath },
    recoveryTesting: true,
    deployment: build,
  });
  workers.push({ worker, running: worker.run() });
  await eventually(async () => (served(await lastPolls(env.client, build)) ? true : undefined));
}

const lines: string[] = [];
const io = { say: (line: string) => lines.push(line), identity: 'deploy-ramp test' };
const args = (...argv: string[]) =>
  parseDeployArgs([...argv, '--deployment', deploymentName, '--task-queue', rig.taskQueue], {});

/** Starts a booking every 200 ms until `done` settles: the traffic a ramp shares out. */
async function trafficUntil(done: Promise<unknown>): Promise<void> {
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    handles.push(await startBooking(env, rig, bookingRequest()));
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a ramp whose build fails its first workflow task is undone by itself; the current build stays', async () => {
  expectWorkerWarnings(/build B fails its first workflow task/);
  await eventually(async () => (served(await lastPolls(env.client, a)) ? true : undefined));
  await setCurrentBuild(env.client, a, io);
  await startWorker(b, brokenBundle);

  const ramp = runDeployStep(
    env.client,
    args('ramp', '--build-id', b.buildId, '--steps', '50,100', '--pause', '4s', '--bundle', brokenBundle),
    io,
  );
  await trafficUntil(ramp);
  const result = await ramp;
  expect(result).toMatchObject({ exitCode: 1, value: { rolledBack: true, current: a.buildId } });
  const [step] = (result.value as { steps: Array<{ percent: number; health: { failures: number } }> }).steps;
  expect(step!.percent).toBe(50);
  expect(step!.health.failures).toBeGreaterThan(0);
  const routing = (await describeDeployment(env.client, deploymentName))!;
  expect(routing.current).toBe(a.buildId);
  expect(routing.ramping).toBeUndefined();
  expect(lines.join('\n')).toContain(`Ramp undone: build ${a.buildId} takes every new run again`);
}, 90_000);

test('a ramp of a healthy build goes step by step to current', async () => {
  await startWorker(c, workflowBundle().codePath);
  const ramp = runDeployStep(
    env.client,
    args('ramp', '--build-id', c.buildId, '--steps', '50,100', '--pause', '2s', '--bundle', workflowBundle().codePath),
    io,
  );
  await trafficUntil(ramp);
  expect(await ramp).toMatchObject({ exitCode: 0, value: { rolledBack: false } });
  expect((await describeDeployment(env.client, deploymentName))?.current).toBe(c.buildId);
}, 90_000);
