/**
 * Independent check of #46 (routing to a build nobody serves is refused), written without reading the product's code
 * or its tests. A build's only worker polls (registering the build and its queues) and is then killed; `deploy
 * rollout` to it, with its own code (`--bundle`), must be refused and leave routing as it was. docs/operations.md,
 * "Only to a build that is served": "the server lets routing go to any registered build, and a registration outlives
 * its workers, so new runs sent to a stopped build would wait for ever."
 *
 * Longer than the 40 s a file should take: the refusal itself comes after the gate run's 60 s wait for a first task
 * (seen: "no worker of build ... took the gate run's first task in 60 s"); the served check's 90 s window does not
 * catch a build stopped moments ago.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectDevServer, workflowBundle } from '../../harness/temporal';
import type { WorkerProcess } from '../../harness/worker-process';
import { deploy, deploymentName, versionedWorker } from './deploy';
import { startIndependentSupplier, type SpecSupplier } from './supplier';

jest.setTimeout(150_000);

const deployment = deploymentName();
let env: TestWorkflowEnvironment;
let supplier: SpecSupplier;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  env = await connectDevServer();
  supplier = await startIndependentSupplier();
});

afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await supplier?.close();
  // Closes this file's connections only; the dev server is the harness's.
  await env?.teardown();
});

test('rollout to a build whose only worker polled and was killed: refused, routing unchanged', async () => {
  worker = await versionedWorker(env.address, supplier.url, deployment, 'indep-gone-1');
  // The build is registered by its worker's first polls: killed only once the deployment lists it.
  while (!/indep-gone-1/.test((await deploy(env.address, deployment, ['status'])).stdout));
  worker.child.kill('SIGKILL');
  await worker.exited;
  const run = await deploy(env.address, deployment, [
    'rollout',
    '--build-id',
    'indep-gone-1',
    '--bundle',
    workflowBundle().codePath,
  ]);
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(/REFUSED/);
  const status = await deploy(env.address, deployment, ['status']);
  expect(status.stdout).toMatch(/current none/);
});
