/**
 * The fleet-wide QueryOrders cap, on the real dev server (which enforces task-queue rate limits)
 * against the sandbox supplier: two booking workers on one queue, neither with a client-side limiter
 * or coalescer, so each would poll as fast as its bookings ask. Together they must stay under the
 * supplier's QueryOrders limit, because the server hands out QueryOrders tasks on the companion
 * queue at the profile's rate. The same load with the cap set above the supplier's limit runs into
 * 429s, which shows the load is enough to hit it.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { startBooking } from '../../src/api/client/index';
import { queryOrdersTaskQueue } from '../../src/api/contract/index';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { bookingRequest, expectAtMostOneOrderPerReference, testProfile } from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { connectDevServer, workflowBundle } from '../harness/temporal';

/** The supplier's QueryOrders limit in the sandbox (requests per second per application key). */
const SUPPLIER_QPS = 6;
const BOOKINGS = 8;
/** Every booking wants a poll every 200 ms: 40 polls/s asked of a supplier that allows 6. */
const fastRecovery = { testing: true, delaysSeconds: [0.2, 0.2, 0.2, 0.2, 0.2], repeatEverySeconds: 0.2 };

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  env = await connectDevServer();
  sandbox = await startSandbox({
    port: 0,
    rateLimits: { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: SUPPLIER_QPS },
  });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await sandbox?.close();
  await env?.teardown();
});

/**
 * A booking worker with its own connection (as a separate process would have; the SDK refuses two
 * workers on one queue over one connection) and its own supplier client: no client-side limiter,
 * no coalescer.
 */
async function startWorker(taskQueue: string, profile: SupplierProfile): Promise<BookingWorker> {
  const connection = await NativeConnection.connect({ address: process.env.TEST_DEV_SERVER_ADDRESS! });
  const tokens = ticketTokens({ baseUrl: sandbox.url, profile, appKey: 'sandbox-app', appSecret: 'sandbox-secret' });
  const supplier: SupplierClient = createHttpSupplierClient({ baseUrl: sandbox.url, profile, tokens });
  const worker = await createBookingWorker({
    connection,
    namespace: 'default',
    taskQueue,
    supplier,
    profile,
    workflowBundle: workflowBundle(),
    recoveryTesting: true,
  });
  const running = worker.run();
  closers.push(async () => {
    worker.shutdown();
    await running;
    await supplier.close();
    await tokens.close?.();
    await connection.close();
  });
  return worker;
}

/** Runs the load on two workers whose fleet cap is `fleetQps`; returns the sandbox's view of it. */
async function stormOnTwoWorkers(fleetQps: number) {
  sandbox.reset();
  const profile = SupplierProfile.parse({
    ...testProfile,
    rateLimits: { ...testProfile.rateLimits, queryOrders: fleetQps },
  });
  const taskQueue = `fleet-cap-${randomUUID().slice(0, 8)}`;
  await startWorker(taskQueue, profile);
  await startWorker(taskQueue, profile);
  const requests = Array.from({ length: BOOKINGS }, () =>
    bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=5', recovery: fastRecovery }),
  );
  const handles = await Promise.all(requests.map((r) => startBooking(env.client, r, { taskQueue })));
  const outcomes = await Promise.all(handles.map((h) => h.result()));
  return { taskQueue, handles, outcomes, stats: sandbox.stats() };
}

test('two workers together stay under the supplier QueryOrders limit; every poll ran on the capped queue', async () => {
  const { taskQueue, handles, outcomes, stats } = await stormOnTwoWorkers(SUPPLIER_QPS / 2);

  expect(outcomes.map((o) => o.kind)).toEqual(Array(BOOKINGS).fill('confirmed'));
  expect(stats.queryOrders.requests).toBeGreaterThanOrEqual(BOOKINGS * 5);
  expect(stats.rateLimited).toBe(0);
  expect(stats.peakPerSecond.queryOrders).toBeLessThanOrEqual(SUPPLIER_QPS);
  expectAtMostOneOrderPerReference(sandbox);

  for (const handle of handles) {
    const history = await handle.fetchHistory();
    const queues = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'queryOrder')
      .map((a) => a?.taskQueue?.name);
    expect(queues.length).toBeGreaterThanOrEqual(5);
    expect(new Set(queues)).toEqual(new Set([queryOrdersTaskQueue(taskQueue)]));
  }
}, 120_000);

test('control: the same load with the cap above the supplier limit gets 429s', async () => {
  // The 429s this control is about, each logged as a failed QueryOrders attempt before its retry.
  expectWorkerWarnings(/^WARN Activity failed .*"activityType":"queryOrder".*"httpStatus":429/);
  const { outcomes, stats } = await stormOnTwoWorkers(1_000);

  // 429s are retried and never count as polls, so every booking still ends confirmed.
  expect(outcomes.map((o) => o.kind)).toEqual(Array(BOOKINGS).fill('confirmed'));
  expect(stats.rateLimited).toBeGreaterThan(0);
  expectAtMostOneOrderPerReference(sandbox);
}, 120_000);
