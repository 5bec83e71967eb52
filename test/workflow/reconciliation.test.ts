/**
 * The reconciliation sweep on the time-skipping server against the sandbox: it lists the orders of a
 * booking-time window slice by slice, and reports exactly the orders no booking stands for (no workflow,
 * a terminated one) and those whose status denies the booking's outcome; with cancelOrphans, an orphan
 * is cancelled through an order workflow of its own.
 */
import { randomUUID } from 'node:crypto';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import {
  alignedClock,
  bookingRequest,
  createBookingRig,
  eventually,
  guests,
  holder,
  type BookingRig,
} from '../harness/booking';
import {
  bookingStateQuery,
  bookingWorkflowId,
  orderWorkflowId,
  type BookingRequest,
  type SweepResult,
} from '../../src/api/contract/index';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import type { SweepWorkflowInput } from '../../src/workflows/sweep';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;

/** The sandbox's clock is the server's, aligned again where a test skips time. */
let clockOffsetMs = 0;
const realign = async () => {
  clockOffsetMs = (await env.currentTimeMs()) - Date.now();
};

beforeAll(async () => {
  env = await connectTimeSkipping();
  clockOffsetMs = (await alignedClock(env))() - Date.now();
  rig = await createBookingRig(env, 'sweep-wf', { sandboxNow: () => Date.now() + clockOffsetMs });
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

const sweepInput = (cancelOrphans: boolean): SweepWorkflowInput => ({
  lookbackMinutes: 60,
  settleMinutes: 0,
  sliceMinutes: 15,
  cancelOrphans,
  checkInHours: 6,
  statuses: defaultSupplierProfile.orderStatus,
});

async function runSweep(cancelOrphans: boolean, workflowId = `sweep-${randomUUID()}`): Promise<SweepResult> {
  return client.workflow.execute('reconciliationSweepWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId,
    args: [sweepInput(cancelOrphans)],
  });
}

/** The references a sweep looked up, and those whose order workflow it described too (from its history). */
async function lookedUp(workflowId: string): Promise<{ references: string[]; orderDescribed: string[] }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const views = (history.events ?? []).flatMap((e) => {
    const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    const value: unknown = data ? JSON.parse(Buffer.from(data).toString()) : undefined;
    // lookUpBookings' results: reference → { booking, order? }; a listing's result has `orders`.
    return value && typeof value === 'object' && !('orders' in value)
      ? Object.entries(value as Record<string, { order?: unknown }>)
      : [];
  });
  return {
    references: views.map(([ref]) => ref),
    orderDescribed: views.filter(([, view]) => view.order !== undefined).map(([ref]) => ref),
  };
}

async function settled<T>(handle: WorkflowHandle<() => Promise<T>>): Promise<T> {
  await eventually(async () => ((await handle.describe()).status.name !== 'RUNNING' ? true : undefined));
  return handle.result();
}

async function startBooking(request: BookingRequest) {
  return client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
  });
}

/**
 * Waits until a recovering booking sleeps on its next poll's timer. Only then is it terminated: the Java test
 * server never releases its time-skipping lock for a workflow task in flight when the workflow is terminated,
 * and time skipping then stops for every later test file.
 */
async function parked(handle: WorkflowHandle<typeof bookingWorkflow>): Promise<void> {
  await eventually(async () => {
    const state = await handle.query(bookingStateQuery);
    return state.stage === 'recovering' && state.polls.length >= 1 && state.nextPollAt ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 500));
}

/** Books at the supplier directly, as a booking nobody recorded would have. */
async function orderWithoutBooking(): Promise<string> {
  const ref = randomUUID();
  await rig.supplier.book(
    { customerReferenceNo: ref, ratePkgId: 'pkg-orphan', holder, guests },
    { sessionId: `s-${ref}`, test: 'confirmAfterMs=0' },
  );
  return ref;
}

test('the sweep reports every orphan and mismatch, and nothing else', async () => {
  expectWorkerWarnings(/^ERROR Reconciliation (orphan|mismatch): /);
  // Agreeing: a confirmed booking, and a failed one.
  const fine = bookingRequest({ test: 'confirmAfterMs=0' });
  expect((await settled(await startBooking(fine))).kind).toBe('confirmed');
  const failed = bookingRequest({ test: 'confirmAfterMs=0&outcome=failed' });
  expect((await settled(await startBooking(failed))).kind).toBe('failed');
  // A booking still at work: not judged.
  const running = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=50' });
  const runningHandle = await startBooking(running);
  // Orphans: an order no workflow knows, and a booking terminated after its Book.
  const direct = await orderWithoutBooking();
  const terminated = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=50' });
  const terminatedHandle = await startBooking(terminated);
  await parked(terminatedHandle);
  await terminatedHandle.terminate('made an orphan for the test');
  await parked(runningHandle);
  // A mismatch: the booking said confirmed, the supplier now says Failed.
  const drifted = bookingRequest({ test: 'confirmAfterMs=0' });
  expect((await settled(await startBooking(drifted))).kind).toBe('confirmed');
  rig.sandbox.setOrderStatus(drifted.customerReferenceNo, defaultSupplierProfile.orderStatus.failed);

  const sweepId = `sweep-${randomUUID()}`;
  const result = await runSweep(false, sweepId);
  // 4 slices of booking time, 4 of cancellation time, 1 of check-in time (6 h in 90-minute slices: 4).
  expect(result.requests).toBe(12);
  expect(result.failedSlices).toEqual([]);
  expect(result.ordersSeen).toBe(rig.sandbox.orders().length);
  expect(result.orphans.map((o) => o.customerReferenceNo).sort()).toEqual(
    [direct, terminated.customerReferenceNo].sort(),
  );
  expect(result.mismatches.map((m) => m.customerReferenceNo)).toEqual([drifted.customerReferenceNo]);
  expect(result.mismatches[0]).toMatchObject({ status: 4, reason: expect.stringContaining('booking confirmed') });
  // Reported, not acted on: no order workflow for the orphan.
  await expect(client.workflow.getHandle(orderWorkflowId(direct)).describe()).rejects.toThrow(/not found/i);
  // Each booking workflow described once, and an order workflow only where the rule reads it: the orphans'.
  // 6 references, 8 describes (12 before: two each).
  const { references, orderDescribed } = await lookedUp(sweepId);
  expect(references).toHaveLength(6);
  expect(orderDescribed.sort()).toEqual([direct, terminated.customerReferenceNo].sort());
  await runningHandle.terminate('end of test');
});

test("with cancelOrphans, only an orphan of ours is cancelled, within the fee ceiling; another system's is reported", async () => {
  expectWorkerWarnings(
    /^ERROR Reconciliation (orphan|mismatch): /,
    /^ERROR Order cancel-stopped: needs manual follow-up/,
  );
  await rig.endOrderWorkflows();
  rig.sandbox.reset();
  // A Cancel settles at once, so the order run's first poll finds it Cancelled.
  rig.sandbox.configure({ confirmAfterMs: 0 });
  // Another system's order on the same account: no booking workflow of ours stands for it.
  const theirs = await orderWithoutBooking();
  // Ours: bookings terminated after their Book (orphans); one still free to cancel, one past free cancellation.
  // Confirmed 3 s after Book (real time: nothing here skips it), by when their bookings are terminated.
  const free = bookingRequest({ test: 'book=504AfterCreate&confirmAfterMs=3000&cancelAfterQueries=1' });
  const costly = bookingRequest({ test: 'book=504AfterCreate&confirmAfterMs=3000&freeCancel=0' });
  for (const request of [free, costly]) {
    const handle = await startBooking(request);
    await parked(handle);
    await handle.terminate('made an orphan for the test');
  }
  await eventually(async () =>
    rig.sandbox.orders().every((o) => o.status === defaultSupplierProfile.orderStatus.confirmed) ? true : undefined,
  );
  const result = await runSweep(true);
  expect(result.orphans.map((o) => o.customerReferenceNo).sort()).toEqual(
    [theirs, free.customerReferenceNo, costly.customerReferenceNo].sort(),
  );
  expect(result.orphans.find((o) => o.customerReferenceNo === theirs)?.cancelling).toBeUndefined();
  await expect(client.workflow.getHandle(orderWorkflowId(theirs)).describe()).rejects.toThrow(/not found/i);

  const order = (ref: string) => settled(client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(ref)));
  expect(await order(free.customerReferenceNo)).toMatchObject({
    kind: 'cancelled',
    cancellation: { origin: 'reconciliation', accepted: { kind: 'fee', fee: { amount: 0 } } },
  });
  // The default ceiling is "only free": above it nothing is sent and a person decides.
  expect(await order(costly.customerReferenceNo)).toMatchObject({ kind: 'cancel-stopped' });
  const statusOf = (ref: string) => rig.sandbox.orders().find((o) => o.customerReferenceNo === ref)?.status;
  expect(statusOf(free.customerReferenceNo)).toBe(3);
  expect(statusOf(costly.customerReferenceNo)).toBe(2);
  expect(statusOf(theirs)).toBe(2);
});

test('the supplier cancelling a confirmed booking without a callback is found by the cancellation window', async () => {
  expectWorkerWarnings(/^ERROR Reconciliation (orphan|mismatch): /, /^ERROR Order cancel-stopped/);
  await rig.endOrderWorkflows();
  rig.sandbox.reset();
  const booked = bookingRequest({ test: 'confirmAfterMs=0' });
  expect((await settled(await startBooking(booked))).kind).toBe('confirmed');
  // Hours later, out of the sweep's booking-time window, the hotel cancels; no callback is sent.
  await env.sleep('3 hours');
  await realign();
  rig.sandbox.setOrderStatus(booked.customerReferenceNo, defaultSupplierProfile.orderStatus.cancelled);
  const result = await runSweep(false);
  expect(result.mismatches).toEqual([
    expect.objectContaining({
      customerReferenceNo: booked.customerReferenceNo,
      status: 3,
      reason: expect.stringContaining('booking confirmed'),
    }),
  ]);
});
