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
} from '../../src/contract';
import { defaultSupplierProfile } from '../../src/supplier/profile';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import type { SweepWorkflowInput } from '../../src/workflows/reconciliation';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await createBookingRig(env, 'sweep-wf', { sandboxNow: await alignedClock(env) });
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
  statuses: defaultSupplierProfile.orderStatus,
});

async function runSweep(cancelOrphans: boolean): Promise<SweepResult> {
  return client.workflow.execute('reconciliationSweepWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: `sweep-${randomUUID()}`,
    args: [sweepInput(cancelOrphans)],
  });
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

  const result = await runSweep(false);
  expect(result.requests).toBe(4);
  expect(result.ordersSeen).toBe(rig.sandbox.orders().length);
  expect(result.orphans.map((o) => o.customerReferenceNo).sort()).toEqual(
    [direct, terminated.customerReferenceNo].sort(),
  );
  expect(result.mismatches.map((m) => m.customerReferenceNo)).toEqual([drifted.customerReferenceNo]);
  expect(result.mismatches[0]).toMatchObject({ status: 4, reason: expect.stringContaining('booking confirmed') });
  // Reported, not acted on: no order workflow for the orphan.
  await expect(client.workflow.getHandle(orderWorkflowId(direct)).describe()).rejects.toThrow(/not found/i);
  await runningHandle.terminate('end of test');
});

test('with cancelOrphans, an orphan found Confirmed is cancelled through its own order workflow', async () => {
  expectWorkerWarnings(/^ERROR Reconciliation (orphan|mismatch): /);
  await rig.endOrderWorkflows();
  rig.sandbox.reset();
  // A Cancel settles at once, so the order workflow's first poll finds it Cancelled.
  rig.sandbox.configure({ confirmAfterMs: 0 });
  const direct = await orderWithoutBooking();
  const result = await runSweep(true);
  expect(result.orphans).toEqual([
    expect.objectContaining({ customerReferenceNo: direct, cancelling: orderWorkflowId(direct) }),
  ]);
  const outcome = await settled(client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(direct)));
  expect(outcome).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'reconciliation' } });
  expect(rig.sandbox.orders().find((o) => o.customerReferenceNo === direct)?.status).toBe(3);
  // The next sweep finds nothing: the cancelled orphan is accounted for by its order workflow.
  const again = await runSweep(false);
  expect(again).toMatchObject({ ordersSeen: 1, orphans: [], mismatches: [] });
});
