/**
 * A booking whose workflow task keeps failing (here a nondeterminism error, as after a change that was not
 * patched) never reaches its deadline, so it never ends `unresolved` and BookingUnresolved never fires: the
 * worker's count of failed workflow tasks is how a person is told. Made for real: a worker running a
 * deliberately changed bookingWorkflow (test/replay/fixtures/changed-workflow.ts) takes the booking's first task
 * and stops; the worker process as `npm run worker` starts it then takes the next task, replays, and fails it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { parse } from 'yaml';
import { bookingWorkflowId } from '../../src/api/contract/index';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { freePort } from '../../dev/temporal/dev-server';
import { bookingRequest, eventually } from '../harness/booking';
import { connectDevServer } from '../harness/temporal';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import { parseScrape, sampleValue } from '../fixtures/prometheus';

const ROOT = path.resolve(__dirname, '../..');
const EventType = temporal.api.enums.v1.EventType;
const FAILED_TASKS = 'temporal_workflow_task_execution_failed_total';

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  env = await connectDevServer();
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await sandbox?.close();
  await env?.teardown();
});

test('a booking stuck on a failing workflow task is counted where the WorkflowTaskFailing alert reads it', async () => {
  const taskQueue = `stuck-task-${Date.now()}`;
  const request = bookingRequest({ test: 'confirmAfterMs=0' });
  const workflowId = bookingWorkflowId(request.customerReferenceNo);

  // The changed code records a one-second timer first, where the shipped code records its patch marker.
  const changed = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('../replay/fixtures/changed-workflow'),
  });
  await changed.runUntil(async () => {
    await env.client.workflow.start('bookingWorkflow', { taskQueue, workflowId, args: [request] });
    await eventually(async () => {
      const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
      return events?.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED) ? true : undefined;
    });
  });

  const port = await freePort();
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  worker = await startWorkerProcess(
    { temporalAddress: env.address, supplierUrl: sandbox.url },
    {
      BOOKING_TASK_QUEUE: taskQueue,
      WORKER_METRICS_PORT: String(port),
      WORKER_METRICS_HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
    },
    `Metrics: ${metricsUrl}`,
  );

  // The worker fails the task; the server records it with its cause, and the counter moves.
  const failed = await eventually(async () => {
    const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
    return events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
  }, 60_000);
  expect(failed.workflowTaskFailedEventAttributes?.cause).toBe(
    temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
  );
  const scrape = await eventually(async () => {
    const text = await (await fetch(metricsUrl)).text();
    const s = parseScrape(text);
    return sampleValue(s, FAILED_TASKS, { workflow_type: 'bookingWorkflow', task_queue: taskQueue }) > 0
      ? s
      : undefined;
  }, 30_000);
  // Under the name and labels test/fixtures/sdk-metric-names.txt and the alert rule use.
  const failures = [...scrape.samples].filter((s) => s.name === FAILED_TASKS);
  expect(failures.map((s) => s.labels)).toContainEqual(
    expect.objectContaining({
      failure_reason: 'NonDeterminismError',
      namespace: 'default',
      task_queue: taskQueue,
      workflow_type: 'bookingWorkflow',
    }),
  );

  // The booking is still running: nothing else would ever end it or tell anyone.
  expect((await env.client.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');

  // The alert reads that very series.
  const rules = parse(readFileSync(path.join(ROOT, 'infra/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const rule = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'WorkflowTaskFailing');
  expect(rule?.expr).toContain(FAILED_TASKS);
}, 120_000);
