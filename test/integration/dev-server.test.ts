/** The Temporal CLI dev server from the registry build runs a workflow with a real activity. */
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectDevServer } from '../harness/temporal';
import { echoOnce } from '../fixtures/proof-workflows';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await connectDevServer();
});
afterAll(() => env?.teardown());

test('a workflow with one activity completes on the dev server', async () => {
  const taskQueue = `proof-dev-${Date.now()}`;
  const calls: string[] = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('../fixtures/proof-workflows'),
    activities: {
      async echo(text: string) {
        calls.push(text);
        return `echo: ${text}`;
      },
    },
  });
  const result = await worker.runUntil(
    env.client.workflow.execute(echoOnce, { taskQueue, workflowId: `proof-echo-${Date.now()}`, args: ['hello'] }),
  );
  expect(result).toBe('echo: hello');
  expect(calls).toEqual(['hello']);
});
