/**
 * Operating the worker: its Prometheus endpoint during real bookings (a worker process started as
 * `npm run worker` is, with WORKER_METRICS_PORT and LOG_FORMAT=json), and one booking's trace, from the
 * client's start through the workflow and its activities to the supplier, whose id the sandbox received
 * as `Trace-Id`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { noopMetricMeter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { bookingWorkflowId, type BookingOutcome } from '../../src/api/contract/index';
import {
  BookingMeters,
  createSupplierObserver,
  startTracing,
  type Tracing,
} from '../../src/runtime/observability/index';
import { createSupplierStack } from '../../src/runtime/supplier/stack';
import { createBookingWorker } from '../../src/worker';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { freePort } from '../../dev/temporal/dev-server';
import type { bookingWorkflow } from '../../src/workflows';
import { bookingRequest, eventually, testProfile } from '../harness/booking';
import { connectDevServer } from '../harness/temporal';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import { parseScrape, sampleValue, type Scrape } from '../fixtures/prometheus';

const ROOT = path.resolve(__dirname, '../..');

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
beforeAll(async () => {
  env = await connectDevServer();
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  await env?.teardown();
});

async function scrape(url: string): Promise<{ text: string; scrape: Scrape }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, scrape: parseScrape(text) };
}

describe('metrics and JSON logs of a worker process', () => {
  let worker: WorkerProcess;
  let metricsUrl: string;
  const taskQueue = `observability-${Date.now()}`;
  let dir: string | undefined;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // The bookings go to the partner's account, alpha (the sandbox again): every series says so.
    dir = mkdtempSync(path.join(os.tmpdir(), 'observability-'));
    writeFileSync(path.join(dir, 'app-key'), 'sandbox-app\n');
    writeFileSync(path.join(dir, 'app-secret'), 'sandbox-secret\n');
    const alpha = {
      id: 'alpha',
      baseUrl: sandbox.url,
      credentials: { appKeyFile: 'app-key', appSecretFile: 'app-secret' },
      partners: ['default'],
    };
    writeFileSync(path.join(dir, 'accounts.json'), JSON.stringify({ accounts: [alpha] }));
    worker = await startWorkerProcess(
      { temporalAddress: env.address, supplierUrl: sandbox.url },
      {
        BOOKING_TASK_QUEUE: taskQueue,
        SUPPLIER_ACCOUNTS_FILE: path.join(dir, 'accounts.json'),
        WORKER_METRICS_PORT: String(port),
        WORKER_METRICS_HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'DEBUG',
      },
      `Metrics: ${metricsUrl}`,
    );
  }, 60_000);
  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('counters and histograms move as bookings go, with no reference in any label', async () => {
    expect(worker.stdout()).toContain(`Metrics: ${metricsUrl}`);
    const before = (await scrape(metricsUrl)).scrape;

    const requests = [
      bookingRequest({ test: 'confirmAfterMs=0&drift=1' }),
      bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=1' }),
      bookingRequest({ test: 'scenario=soldOut' }),
      bookingRequest({ test: 'checkAvail=429&checkAvailTimes=1&confirmAfterMs=0' }),
    ];
    const outcomes = await Promise.all(
      requests.map(async (request) => {
        const handle = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
          taskQueue,
          workflowId: bookingWorkflowId(request.customerReferenceNo),
          args: [request],
        });
        return handle.result();
      }),
    );
    expect(outcomes.map((o: BookingOutcome) => o.kind)).toEqual(['confirmed', 'confirmed', 'unavailable', 'confirmed']);

    // Workflow-side metrics reach the meter once their workflow task completes: wait for all four outcomes
    // and the SDK's count of completed workflows.
    const { text, scrape: after } = await eventually(async () => {
      const s = await scrape(metricsUrl);
      const moved = (name: string) => sampleValue(s.scrape, name) - sampleValue(before, name);
      return moved('booking_outcomes_total') >= 4 && moved('temporal_workflow_completed_total') >= 4 ? s : undefined;
    });
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);

    // Each account's series start at 0 with the worker, so an alert sees an account's first unresolved booking.
    expect(sampleValue(before, 'booking_outcomes_total', { kind: 'unresolved', supplier_account: 'alpha' })).toBe(0);
    expect(
      before.samples.some((s) => s.name === 'booking_outcomes_total' && s.labels.supplier_account === 'alpha'),
    ).toBe(true);
    const onAlpha = { supplier_account: 'alpha' };
    expect(delta('booking_outcomes_total', { kind: 'confirmed', ...onAlpha })).toBe(3);
    expect(delta('booking_stage_entered_total', { stage: 'recovering', ...onAlpha })).toBe(1);
    expect(delta('booking_book_attempts_total', { result: 'order', ...onAlpha })).toBe(2);
    expect(delta('booking_recovery_polls_total', { result: 'confirmed', ...onAlpha })).toBe(1);
    expect(delta('booking_supplier_responses_total', { operation: 'book', status_class: '5xx', ...onAlpha })).toBe(1);
    expect(delta('booking_outcomes_total', { kind: 'confirmed' })).toBe(3);
    expect(delta('booking_outcomes_total', { kind: 'unavailable' })).toBe(1);
    expect(delta('booking_stage_entered_total', { stage: 'checking-availability' })).toBe(4);
    expect(delta('booking_stage_entered_total', { stage: 'booking' })).toBe(3);
    expect(delta('booking_stage_entered_total', { stage: 'recovering' })).toBe(1);
    expect(delta('booking_recoveries_ended_total', { kind: 'confirmed' })).toBe(1);
    expect(delta('booking_book_attempts_total', { result: 'order' })).toBe(2);
    expect(delta('booking_book_attempts_total', { result: 'ambiguous' })).toBe(1);
    expect(delta('booking_recovery_polls_total', { result: 'confirmed' })).toBe(1);
    expect(delta('booking_supplier_errors_total', { operation: 'book', error_type: 'SupplierGatewayTimeout' })).toBe(1);
    expect(delta('booking_supplier_responses_total', { operation: 'book', status_class: '5xx' })).toBe(1);
    expect(delta('booking_supplier_rate_limited_total', { operation: 'checkAvail' })).toBe(1);
    expect(delta('booking_supplier_request_duration_seconds_count', { operation: 'book' })).toBe(3);
    expect(delta('booking_supplier_request_duration_seconds_count', { operation: 'checkAvail' })).toBe(5);
    expect(delta('booking_supplier_request_duration_seconds_sum', { operation: 'checkAvail' })).toBeGreaterThan(0);
    expect(delta('booking_query_orders_batch_references_count')).toBeGreaterThanOrEqual(1);
    expect(delta('booking_rate_limiter_wait_seconds_count', { operation: 'book' })).toBe(3);
    expect(
      [...after.samples].filter((s) => s.name === 'booking_supplier_drift_total' && s.labels.operation === 'book'),
    ).not.toEqual([]);
    // The SDK's own metrics, on the same endpoint, under the names the dashboards and alert rules were checked against.
    const sdkNames = readFileSync(path.join(ROOT, 'test/fixtures/sdk-metric-names.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#') && !l.endsWith(' on-failure'))
      .map((l) => l.split(' ')[0]!);
    expect(sdkNames.filter((name) => !after.types.has(name))).toEqual([]);
    expect(delta('temporal_workflow_completed_total', { workflow_type: 'bookingWorkflow' })).toBe(4);
    expect(delta('temporal_activity_execution_latency_seconds_count', { activity_type: 'book' })).toBe(3);

    for (const request of requests) expect(text).not.toContain(request.customerReferenceNo);
    console.log(`metrics scrape after 4 bookings: ${text.length} bytes, ${after.samples.length} samples`);
  }, 60_000);

  test('LOG_FORMAT=json: every line is one JSON object; workflow and activity lines carry their ids and stage', () => {
    // Complete lines only: the worker may be writing one as we read.
    const lines = worker
      .stdout()
      .split('\n')
      .slice(0, -1)
      .filter((l) => l.trim() !== '');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const r of records)
      expect(r).toEqual(
        expect.objectContaining({ time: expect.any(String), level: expect.any(String), message: expect.any(String) }),
      );
    const activityLine = records.find((r) => r.activity === 'book');
    expect(activityLine).toEqual(
      expect.objectContaining({
        workflowId: expect.stringMatching(/^booking:/),
        runId: expect.any(String),
        bookingStage: 'booking',
      }),
    );
    const workflowLine = records.find((r) => r.workflowType === 'bookingWorkflow' && r.activity === undefined);
    expect(workflowLine).toEqual(
      expect.objectContaining({ workflowId: expect.any(String), runId: expect.any(String) }),
    );
    expect(records.some((r) => String(r.message).startsWith('Worker polling'))).toBe(true);
  });
});

describe('one booking, one trace', () => {
  let tracing: Tracing;
  const spans = new InMemorySpanExporter();

  beforeAll(() => {
    tracing = startTracing({ serviceName: 'observability-test', processor: new SimpleSpanProcessor(spans) });
  });
  afterAll(() => tracing?.shutdown());

  test('client, workflow, activities and supplier requests share the trace id the sandbox got as Trace-Id', async () => {
    const stack = createSupplierStack(
      {
        baseUrl: sandbox.url,
        credentials: { kind: 'ticket', appKey: 'sandbox-app', appSecret: 'sandbox-secret' },
        profile: testProfile,
        maxConnections: 4,
      },
      { observer: createSupplierObserver(new BookingMeters(noopMetricMeter)) },
    );
    const taskQueue = `traced-${Date.now()}`;
    // Bundled at start (no prebuilt bundle): the tracing plugin adds its workflow interceptors to the bundle.
    const worker = await createBookingWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      supplier: stack.supplier,
      orders: stack.orders,
      profile: testProfile,
      plugins: [tracing.plugin],
    });
    const client = new Client({ connection: env.connection, plugins: [tracing.plugin] });
    const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=1' });
    try {
      const outcome = await worker.runUntil(async () => {
        const handle = await client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
          taskQueue,
          workflowId: bookingWorkflowId(request.customerReferenceNo),
          args: [request],
        });
        return handle.result();
      });
      expect(outcome.kind).toBe('confirmed');
    } finally {
      await stack.close();
    }

    const start = spans.getFinishedSpans().find((s) => s.name === 'StartWorkflow:bookingWorkflow');
    expect(start).toBeDefined();
    const traceId = start!.spanContext().traceId;
    // Workflow spans come through the worker's sink after their task completes.
    const mine = await eventually(async () => {
      const found = spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      return found.some((s) => s.name.startsWith('RunWorkflow:')) ? found : undefined;
    });
    const names = new Set(mine.map((s: ReadableSpan) => s.name));
    for (const name of [
      'StartWorkflow:bookingWorkflow',
      'RunWorkflow:bookingWorkflow',
      // A new booking's input check and first CheckAvail: one local activity.
      'RunActivity:checkRequestAndAvail',
      'RunActivity:book',
      'RunActivity:queryOrder',
      'supplier checkAvail',
      'supplier book',
      'supplier queryOrders',
    ]) {
      expect([...names]).toContain(name);
    }
    // Every span of this booking's supplier requests is in this trace, and the sandbox saw its id.
    const supplierSpans = spans.getFinishedSpans().filter((s) => s.name.startsWith('supplier '));
    expect(supplierSpans.every((s) => s.spanContext().traceId === traceId)).toBe(true);
    const calls = sandbox
      .calls()
      .filter(
        (c) =>
          c.sessionId === `sess-${request.customerReferenceNo}` ||
          c.customerReferenceNos?.includes(request.customerReferenceNo),
      );
    expect(calls.map((c) => c.op).sort()).toEqual(['book', 'checkAvail', 'queryOrders']);
    for (const call of calls) expect(call.traceId).toBe(traceId);
  }, 90_000);
});
