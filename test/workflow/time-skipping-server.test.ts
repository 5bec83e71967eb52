/** The Java time-skipping server from the registry build: simulated hours pass in moments. */
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import { sleepOneHour } from '../fixtures/proof-workflows';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await connectTimeSkipping();
});
afterAll(() => env?.teardown());

test('a workflow sleeping one hour completes once the server clock has moved an hour', async () => {
  // A workflow-only worker: the proof needs no activities.
  expectWorkerWarnings(/^WARN No activities registered, not polling for activity tasks .*"proof-time-skipping"/);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'proof-time-skipping',
    workflowsPath: require.resolve('../fixtures/proof-workflows'),
  });
  const serverBefore = await env.currentTimeMs();
  const wallBefore = Date.now();
  const slept = await worker.runUntil(
    env.client.workflow.execute(sleepOneHour, {
      taskQueue: 'proof-time-skipping',
      workflowId: `proof-sleep-${wallBefore}`,
    }),
  );
  const serverAdvanced = (await env.currentTimeMs()) - serverBefore;
  expect(slept).toBeGreaterThanOrEqual(3_600_000);
  expect(serverAdvanced).toBeGreaterThanOrEqual(3_600_000);
  // Wall time is reported, not asserted: performance belongs to bench/.
  process.stderr.write(`one simulated hour took ${Date.now() - wallBefore} ms of wall time\n`);
});
