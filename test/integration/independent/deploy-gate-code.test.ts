/**
 * Independent check of #46 (the gate refuses a build whose code it cannot get), written without reading the product's
 * code or its tests. docs/operations.md: without `--bundle` the gate replays "this checkout's workflows, and then only
 * for this checkout's own build id: a `--build-id` of any other build ... is refused without its bundle, since
 * replaying other code would prove nothing about it"; `npm run deploy -- --help`: "gate ... (exit 1 when refused)".
 * A build of the deployment is registered by a worker that polls, so the deployment exists and only the code is missing.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectDevServer } from '../../harness/temporal';
import type { WorkerProcess } from '../../harness/worker-process';
import { deploy, deploymentName, versionedWorker } from './deploy';
import { startIndependentSupplier, type SpecSupplier } from './supplier';

jest.setTimeout(40_000);

const deployment = deploymentName();
let env: TestWorkflowEnvironment;
let supplier: SpecSupplier;
let worker: WorkerProcess;

beforeAll(async () => {
  env = await connectDevServer();
  supplier = await startIndependentSupplier();
  worker = await versionedWorker(env.address, supplier.url, deployment, 'indep-served-1');
});

afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await supplier?.close();
  // Closes this file's connections only; the dev server is the harness's.
  await env?.teardown();
});

/** A refusal: not 0 (the help says 1; see the README of these checks for what was seen). */
function expectRefused(run: { code: number | null }): void {
  expect(run.code).not.toBe(0);
  expect(run.code).not.toBeNull();
}

test('a served build whose code is not here, without --bundle: refused, naming the missing code', async () => {
  // The worker runs this checkout's code under another build id: the command cannot have that build's code.
  const run = await deploy(env.address, deployment, ['rollout', '--build-id', 'indep-served-1']);
  expect(`${run.stdout}${run.stderr}`).toMatch(/--bundle/);
  expectRefused(run);
});

test('a --bundle that cannot be read: refused', async () => {
  const run = await deploy(env.address, deployment, [
    'rollout',
    '--build-id',
    'indep-served-1',
    '--bundle',
    '/nonexistent/indep-bundle.js',
  ]);
  expectRefused(run);
});

test('a --bundle that is not workflow code: refused, and after all three nothing is current', async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'indep-bundle-')), 'bundle.js');
  writeFileSync(file, 'this is not the workflow code of any build\n');
  const run = await deploy(env.address, deployment, ['rollout', '--build-id', 'indep-served-1', '--bundle', file]);
  expectRefused(run);
  expect((await deploy(env.address, deployment, ['status'])).stdout).toMatch(/current none/);
});
