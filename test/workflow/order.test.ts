/**
 * A confirmed booking's order (orderWorkflow) on the Java time-skipping server, against the sandbox over
 * real HTTP: the hand-off, cancellation with the fee that applies now, Cancel's endings, automatic
 * cancellation after a cancelled booking, and supplier hints verified with QueryOrders.
 *
 * Results are awaited with a plain client and time moved on by env.sleep only: the time-skipping client's
 * result() lets the server jump to the next timer of any workflow, and an order's next timer is its
 * check-in, weeks away. The sandbox's clock is aligned with the server's (earlier files skip time).
 */
import { Client, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import {
  alignedClock,
  bookingRequest,
  createBookingRig,
  eventually,
  expectAtMostOneOrderPerReference,
  type BookingRig,
} from '../harness/booking';
import {
  bookingWorkflowId,
  bookingStateQuery,
  cancelBookingUpdate,
  orderStateQuery,
  orderWorkflowId,
  supplierOrderUpdateSignal,
  type BookingRequest,
  type OrderOutcome,
} from '../../src/contract';
import { cancelFeeAt } from '../../src/workflows/cancel-fee';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await createBookingRig(env, 'order-wf', { sandboxNow: await alignedClock(env) });
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

const orderHandle = (ref: string) => client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(ref));

/** The workflow's result, moving the server's clock on 2 s at a time while it waits on a timer. */
async function settled<T>(handle: WorkflowHandle<() => Promise<T>>): Promise<T> {
  for (let step = 0; step < 40; step++) {
    const done = await eventually(
      async () => ((await handle.describe()).status.name !== 'RUNNING' ? true : undefined),
      1_500,
    ).catch(() => false);
    if (done) return handle.result();
    await env.sleep('2 seconds');
  }
  throw new Error(`${handle.workflowId} did not end`);
}

async function startBooking(request: BookingRequest) {
  return client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
  });
}

async function book(request: BookingRequest) {
  return settled(await startBooking(request));
}
const sandboxOrder = (ref: string) => rig.sandbox.orders().find((o) => o.customerReferenceNo === ref);
const cancelCalls = (ref: string) => rig.sandbox.calls('cancel').filter((c) => c.customerReferenceNos?.includes(ref));

/** Books and returns the reference once confirmed (the order workflow exists by then). */
async function confirmed(overrides: Partial<BookingRequest> & { test?: string }): Promise<string> {
  const request = bookingRequest(overrides);
  const outcome = await book(request);
  expect(outcome.kind).toBe('confirmed');
  return request.customerReferenceNo;
}

describe('hand-off', () => {
  test('a confirmed booking ends with its outcome and hands its order to order:<ref>, open until check-in', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    const state = await orderHandle(ref).query(orderStateQuery);
    expect(state).toMatchObject({ stage: 'confirmed', customerReferenceNo: ref, order: { status: 2 } });
    expect(state.order!.cancelPolicy?.[0]?.fees.length).toBeGreaterThan(0);
    const checkIn = Date.parse(state.order!.checkIn!);
    expect(Date.parse(state.openUntil!)).toBe(checkIn + 24 * 3600 * 1000);
    const description = await orderHandle(ref).describe();
    expect(description.status.name).toBe('RUNNING');
  });

  test('a booking that is not confirmed hands nothing over', async () => {
    const request = bookingRequest({ test: 'book=creditLimit' });
    expect((await book(request)).kind).toBe('failed');
    await expect(orderHandle(request.customerReferenceNo).describe()).rejects.toThrow(/not found/i);
  });
});

describe('cancelBooking', () => {
  test('free cancellation: quote 0, cancel with that fee, followed by QueryOrders to Cancelled', async () => {
    const ref = await confirmed({
      test: 'confirmAfterMs=0&cancelAfterQueries=2',
      recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1 },
    });
    const handle = orderHandle(ref);
    const quote = await handle.executeUpdate(cancelBookingUpdate, { args: [{ confirm: false }] });
    expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'free', fee: { amount: 0 } } });
    if (quote.kind !== 'quote') return;
    const answer = await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: quote.quote.fee, reason: 'guest changed plans' }],
    });
    expect(answer).toMatchObject({ kind: 'cancel-requested', ambiguous: false, serviceFee: { amount: 0 } });
    const outcome: OrderOutcome = await settled(handle);
    expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
    if (outcome.kind !== 'cancelled') return;
    expect(outcome.cancellation).toMatchObject({ origin: 'caller', reason: 'guest changed plans' });
    expect(outcome.cancellation!.polls.map((p) => p.status)).toEqual([2, 3]);
    expect(sandboxOrder(ref)?.status).toBe(3);
    expect(cancelCalls(ref)).toHaveLength(1);
  });

  test('past free cancellation the fee of the policy applies; a confirm with another fee is refused', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&freeCancel=0&cancelAfterQueries=1' });
    const handle = orderHandle(ref);
    const state = await handle.query(orderStateQuery);
    const quote = await handle.executeUpdate(cancelBookingUpdate, { args: [{ confirm: false }] });
    if (quote.kind !== 'quote') throw new Error('expected a quote');
    expect(quote.quote.basis).toBe('policy');
    // The sandbox's policy: half the price until check-in, at the server's time (ahead of real time).
    expect(quote.quote.fee).toEqual(cancelFeeAt(state.order!.cancelPolicy, await env.currentTimeMs()).fee);
    expect(quote.quote.fee!.amount).toBeCloseTo(state.order!.price!.amount / 2, 1);

    await expect(
      handle.executeUpdate(cancelBookingUpdate, {
        args: [{ confirm: true, acceptedFee: { currency: quote.quote.fee!.currency, amount: 0 } }],
      }),
    ).rejects.toThrow(WorkflowUpdateFailedError);
    await expect(handle.executeUpdate(cancelBookingUpdate, { args: [{ confirm: true }] })).rejects.toThrow(
      WorkflowUpdateFailedError,
    );
    expect(cancelCalls(ref)).toHaveLength(0);

    const answer = await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: quote.quote.fee }],
    });
    expect(answer).toMatchObject({ kind: 'cancel-requested', serviceFee: quote.quote.fee });
    expect((await settled(handle)).kind).toBe('cancelled');
  });

  test('the supplier ends the cancellation CancelFailed: cancel-failed, and a person is told', async () => {
    expectWorkerWarnings(/^ERROR Order cancellation cancel-failed: needs manual follow-up/);
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=failed&cancelAfterQueries=1' });
    const handle = orderHandle(ref);
    await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    });
    expect(await settled(handle)).toMatchObject({ kind: 'cancel-failed', order: { status: 5 } });
  });

  test('the supplier refuses the Cancel: the answer says so and the order stays open, confirmed', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=refuse&cancelTimes=1&cancelAfterQueries=1' });
    const handle = orderHandle(ref);
    const refused = await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    });
    expect(refused).toMatchObject({ kind: 'cancel-refused', errorType: 'SupplierBadRequest' });
    expect((await handle.query(orderStateQuery)).stage).toBe('confirmed');
    // A second try is taken (the fault was for the first Cancel only).
    const again = await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    });
    expect(again.kind).toBe('cancel-requested');
    expect((await settled(handle)).kind).toBe('cancelled');
  });

  test('a Cancel answered 504 after the supplier took it is retried, and the order is followed to Cancelled', async () => {
    expectWorkerWarnings(/^WARN Activity failed .*"activityType":"cancelOrder".*"httpStatus":504/);
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=504AfterAccept&cancelTimes=1&cancelAfterQueries=1' });
    const handle = orderHandle(ref);
    const answer = await handle.executeUpdate(cancelBookingUpdate, {
      args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    });
    expect(answer).toMatchObject({ kind: 'cancel-requested', ambiguous: false });
    expect((await settled(handle)).kind).toBe('cancelled');
    expect(cancelCalls(ref)).toHaveLength(2);
  });
});

describe('a booking cancelled by its caller after Book', () => {
  async function cancelledDuringRecovery(onCancelAfterBook: BookingRequest['onCancelAfterBook'], test: string) {
    // A short schedule (the second poll 1 s after the first): the server's clock moves on in real time here.
    const request = bookingRequest({
      onCancelAfterBook,
      test,
      recovery: { testing: true, delaysSeconds: [1, 1], repeatEverySeconds: 1 },
    });
    const handle = await startBooking(request);
    await eventually(async () => ((await handle.query(bookingStateQuery)).stage === 'recovering' ? true : undefined));
    await handle.cancel();
    expect(await settled(handle)).toMatchObject({ kind: 'confirmed', cancelRequested: true });
    return request.customerReferenceNo;
  }

  test("onCancelAfterBook 'cancel': the order is cancelled automatically once confirmed", async () => {
    const ref = await cancelledDuringRecovery(
      'cancel',
      'book=504AfterCreate&confirmAfterQueries=2&cancelAfterQueries=1',
    );
    const outcome = await settled(orderHandle(ref));
    expect(outcome).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'auto' } });
    expect(sandboxOrder(ref)?.status).toBe(3);
  });

  test("onCancelAfterBook 'cancel-if-free' past free cancellation: the order is kept for the caller to decide", async () => {
    const ref = await cancelledDuringRecovery(
      'cancel-if-free',
      'book=504AfterCreate&confirmAfterQueries=2&freeCancel=0',
    );
    const state = await orderHandle(ref).query(orderStateQuery);
    expect(state.stage).toBe('confirmed');
    expect(cancelCalls(ref)).toHaveLength(0);
  });

  test("without onCancelAfterBook ('report') the order is kept", async () => {
    const ref = await cancelledDuringRecovery(undefined, 'book=504AfterCreate&confirmAfterQueries=2');
    expect((await orderHandle(ref).query(orderStateQuery)).stage).toBe('confirmed');
    expect(cancelCalls(ref)).toHaveLength(0);
  });
});

describe('supplier hints', () => {
  test('a hint is verified with QueryOrders: an order the supplier cancelled ends the order workflow', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    const handle = orderHandle(ref);
    // A hint that the order changed, when it did not: verified, nothing changes.
    await handle.signal(supplierOrderUpdateSignal, { customerReferenceNo: ref, status: 3 });
    await eventually(async () =>
      rig.sandbox.orders().find((o) => o.customerReferenceNo === ref)!.queriesSeen >= 1 ? true : undefined,
    );
    expect((await handle.query(orderStateQuery)).stage).toBe('confirmed');
    rig.sandbox.setOrderStatus(ref, 3);
    await handle.signal(supplierOrderUpdateSignal, { customerReferenceNo: ref, status: 3 });
    expect(await settled(handle)).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
  });
});
