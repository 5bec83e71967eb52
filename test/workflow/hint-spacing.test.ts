/**
 * Supplier hints bring a QueryOrders forward at most once a minute per reference (src/workflows/follow.ts, spacedHint),
 * on the Java time-skipping server against the sandbox: a flood of callbacks, a replayed one or a supplier
 * retrying, costs one poll a minute in a recovering booking and in an order run following its Cancel; hints
 * meanwhile are not lost (the spaced poll comes), and an operator's cancellation still ends the wait at once.
 */
import { Client, WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import {
  alignedClock,
  bookingRequest,
  createBookingRig,
  eventually,
  settledBySkipping,
  type BookingRig,
} from '../harness/booking';
import {
  bookingStateQuery,
  bookingWorkflowId,
  cancelBookingUpdate,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  supplierOrderUpdateSignal,
  type OrderOutcome,
  type OrderWorkflowInput,
} from '../../src/api/contract/index';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;
let clockOffsetMs = 0;

beforeAll(async () => {
  env = await connectTimeSkipping();
  clockOffsetMs = (await alignedClock(env))() - Date.now();
  rig = await createBookingRig(env, 'hint-spacing', { sandboxNow: () => Date.now() + clockOffsetMs });
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
beforeEach(async () => {
  clockOffsetMs = (await env.currentTimeMs()) - Date.now();
});

const pollsOf = (ref: string) =>
  rig.sandbox.calls('queryOrders').filter((c) => c.customerReferenceNos?.includes(ref)).length;

/** Waits (real time) until the sandbox has seen `n` QueryOrders for the reference, then a little more. */
async function pollsReach(ref: string, n: number): Promise<number> {
  await eventually(async () => (pollsOf(ref) >= n ? true : undefined), 10_000);
  await new Promise((r) => setTimeout(r, 1_000));
  return pollsOf(ref);
}

async function flood(handle: WorkflowHandle, ref: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await handle.signal(supplierOrderUpdateSignal, { customerReferenceNo: ref, status: 2 });
  }
}

const settled = <T>(handle: WorkflowHandle<() => Promise<T>>) => settledBySkipping(env, handle, { steps: 90 });

test('a recovering booking flooded with hints polls once for them now and once a minute later, then settles', async () => {
  // Book's answer lost; the order stays Confirming until the test confirms it. Scheduled polls are 30 min apart.
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { testing: true, delaysSeconds: [1800], repeatEverySeconds: 1800 },
  });
  const ref = request.customerReferenceNo;
  const handle = await client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(ref),
    args: [request],
  });
  await eventually(async () => ((await handle.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));
  const scheduled = pollsOf(ref);

  await flood(handle, ref, 20);
  expect(await pollsReach(ref, scheduled + 1)).toBe(scheduled + 1);
  // The other 19 hints wait for the minute to pass: one poll for all of them.
  await flood(handle, ref, 20);
  await env.sleep('61 seconds');
  expect(await pollsReach(ref, scheduled + 2)).toBe(scheduled + 2);

  rig.sandbox.setOrderStatus(ref, 2);
  await flood(handle, ref, 1);
  const outcome = await settled(handle);
  expect(outcome).toMatchObject({ kind: 'confirmed' });
  const hintPolls = (await handle.query(bookingStateQuery)).polls.filter((p) => p.trigger === 'supplier-hint');
  expect(hintPolls).toHaveLength(3);
  for (let i = 1; i < hintPolls.length; i++) {
    expect(Date.parse(hintPolls[i]!.at) - Date.parse(hintPolls[i - 1]!.at)).toBeGreaterThanOrEqual(60_000);
  }
});

test('an order run following its Cancel polls once for a flood of hints, and an operator still stops it at once', async () => {
  expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
  const request = bookingRequest({ test: 'confirmAfterMs=0&cancelAfterQueries=500' });
  const ref = request.customerReferenceNo;
  const booking = await client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(ref),
    args: [request],
  });
  expect((await settled(booking)).kind).toBe('confirmed');
  const input: OrderWorkflowInput = { customerReferenceNo: ref };
  await client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
    args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue: rig.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    }),
  });
  const order = client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(ref));
  // The request's read and the follow-up's first poll, at once.
  const before = await pollsReach(ref, 2);
  await flood(order, ref, 20);
  expect(await pollsReach(ref, before + 1)).toBe(before + 1);
  await flood(order, ref, 20);
  // Waiting out the minute for those hints, the run is cancelled by an operator: it ends now, not in a minute.
  await order.cancel();
  const outcome: OrderOutcome = await settled(order);
  expect(outcome).toMatchObject({ kind: 'cancel-unresolved', interrupted: true });
  expect(pollsOf(ref)).toBeLessThanOrEqual(before + 2);
});
