/**
 * The order after confirmation, on demand (orderWorkflow), on the Java time-skipping server against the sandbox
 * over real HTTP: no workflow per confirmed booking; a cancelBooking request starts `order:<ref>` with
 * Update-With-Start, which reads the order fresh, quotes, and cancels by the Cancel rule; automatic cancellation
 * after a cancelled booking; an operator stopping a run. Cancel faults come from the Book's Test header (the
 * sandbox reads them there when the Cancel carries none).
 *
 * Results are awaited with a plain client and time moved on by env.sleep only: the time-skipping client's
 * result() lets the server jump to the next timer of any workflow. The sandbox's clock is aligned with the
 * server's at the start (earlier files skip time); it does not follow later skips.
 */
import {
  Client,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping, workflowBundle } from '../harness/temporal';
import {
  alignedClock,
  bookingRequest,
  createBookingRig,
  eventually,
  expectAtMostOneOrderPerReference,
  settledBySkipping,
  testProfile,
  type BookingRig,
} from '../harness/booking';
import {
  BookingStageKey,
  bookingWorkflowId,
  bookingStateQuery,
  cancelBookingUpdate,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  queryOrdersTaskQueue,
  type BookingRequest,
  type CancelBookingRequest,
  type OrderOutcome,
  type OrderWorkflowInput,
} from '../../src/api/contract/index';
import { cancelFeeAt } from '../../src/runtime/rules/cancel-fee';
import { CallbackDeferredError, temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/booking';
import { createOrderActivities } from '../../src/activities/order';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;

/** The sandbox's clock is the server's, aligned again before each test (the tests before may have skipped time). */
let clockOffsetMs = 0;

beforeAll(async () => {
  env = await connectTimeSkipping();
  const aligned = await alignedClock(env);
  clockOffsetMs = aligned() - Date.now();
  rig = await createBookingRig(env, 'order-wf', { sandboxNow: () => Date.now() + clockOffsetMs });
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
beforeEach(async () => {
  clockOffsetMs = (await env.currentTimeMs()) - Date.now();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

const orderHandle = (ref: string) => client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(ref));

/** The cancelBooking request as callers send it: Update-With-Start on `order:<ref>`. */
function cancelRequest(ref: string, request: CancelBookingRequest) {
  const input: OrderWorkflowInput = { customerReferenceNo: ref };
  return client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue: rig.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    }),
  });
}

/** The workflow's result, moving the server's clock on `step` at a time while it waits on a timer. */
const settled = <T>(handle: WorkflowHandle<() => Promise<T>>, step: Duration = '2 seconds') =>
  settledBySkipping(env, handle, { step });

async function startBooking(request: BookingRequest) {
  return client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
  });
}

const sandboxOrder = (ref: string) => rig.sandbox.orders().find((o) => o.customerReferenceNo === ref);
const cancelCalls = (ref: string) => rig.sandbox.calls('cancel').filter((c) => c.customerReferenceNos?.includes(ref));

/** Books and returns the reference once confirmed. */
async function confirmed(overrides: Partial<BookingRequest> & { test?: string }): Promise<string> {
  const request = bookingRequest(overrides);
  const outcome = await settled(await startBooking(request));
  expect(outcome.kind).toBe('confirmed');
  return request.customerReferenceNo;
}

describe('on demand', () => {
  test('a confirmed booking ends without an order workflow', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    await expect(orderHandle(ref).describe()).rejects.toThrow(/not found/i);
  });

  test('a quote starts a run that reads the order fresh, answers in the order currency, and ends `quoted`', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    const answer = await cancelRequest(ref, { confirm: false });
    const price = sandboxOrder(ref)!.price;
    expect(answer).toMatchObject({
      kind: 'quote',
      quote: { basis: 'free', fee: { amount: 0, currency: price.currency } },
    });
    const outcome: OrderOutcome = await settled(orderHandle(ref));
    expect(outcome).toMatchObject({ kind: 'quoted', order: { status: 2 } });
    expect(cancelCalls(ref)).toHaveLength(0);
  });
});

describe('cancelBooking', () => {
  test('free cancellation: quote 0, cancel with that fee in a new run, followed to Cancelled', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancelAfterQueries=1' });
    const quote = await cancelRequest(ref, { confirm: false });
    if (quote.kind !== 'quote') throw new Error('expected a quote');
    await settled(orderHandle(ref));
    // A caller echoing the free quote in another currency means the same: nothing.
    const answer = await cancelRequest(ref, {
      confirm: true,
      acceptedFee: { currency: 'EUR', amount: 0 },
      reason: 'guest changed plans',
    });
    expect(answer).toMatchObject({ kind: 'cancel-requested', ambiguous: false, serviceFee: { amount: 0 } });
    const outcome: OrderOutcome = await settled(orderHandle(ref));
    expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
    if (outcome.kind !== 'cancelled') return;
    expect(outcome.cancellation).toMatchObject({ origin: 'caller', reason: 'guest changed plans' });
    expect(sandboxOrder(ref)?.status).toBe(3);
    expect(cancelCalls(ref)).toHaveLength(1);
  });

  test('past free cancellation the policy fee applies; a confirm with another fee is refused, nothing sent', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&freeCancel=0&cancelAfterQueries=1' });
    const quote = await cancelRequest(ref, { confirm: false });
    if (quote.kind !== 'quote') throw new Error('expected a quote');
    expect(quote.quote.basis).toBe('policy');
    const order = sandboxOrder(ref)!;
    expect(quote.quote.fee!.amount).toBeCloseTo(order.price.amount / 2, 1);
    await expect(
      cancelRequest(ref, { confirm: true, acceptedFee: { currency: quote.quote.fee!.currency, amount: 1 } }),
    ).rejects.toThrow(WorkflowUpdateFailedError);
    await expect(cancelRequest(ref, { confirm: true })).rejects.toThrow(WorkflowUpdateFailedError);
    expect(cancelCalls(ref)).toHaveLength(0);
    const answer = await cancelRequest(ref, { confirm: true, acceptedFee: quote.quote.fee });
    expect(answer).toMatchObject({ kind: 'cancel-requested', serviceFee: quote.quote.fee });
    expect((await settled(orderHandle(ref))).kind).toBe('cancelled');
  });

  test('a cancellation of an order that is not confirmed is refused with the reason', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    rig.sandbox.setOrderStatus(ref, 3);
    await expect(cancelRequest(ref, { confirm: false })).rejects.toThrow(WorkflowUpdateFailedError);
    expect(await settled(orderHandle(ref))).toMatchObject({
      kind: 'not-cancellable',
      reason: /cancelled \(status 3\)/,
    });
  });

  test('the supplier ends the cancellation CancelFailed: cancel-failed, and a person is told', async () => {
    expectWorkerWarnings(/^ERROR Order cancel-failed: needs manual follow-up/);
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=failed&cancelAfterQueries=1' });
    await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'cancel-failed', order: { status: 5 } });
  });

  test('a first Cancel refused in words that prove nothing was done: cancel-refused; asked again, a new run cancels', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=refuse&cancelTimes=1&cancelAfterQueries=1' });
    const refused = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(refused).toMatchObject({ kind: 'cancel-refused', errorType: 'SupplierBadRequest' });
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'cancel-refused' });
    const again = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(again.kind).toBe('cancel-requested');
    expect((await settled(orderHandle(ref))).kind).toBe('cancelled');
  });
});

describe('the Cancel rule: only answers that prove nothing was done are refusals', () => {
  test("Cancel's answer lost (504 after it was taken), a repeat refused 400: cancelled, as QueryOrders says", async () => {
    const ref = await confirmed({
      test: 'confirmAfterMs=0&cancel=504AfterAccept&cancelTimes=1&cancelRepeat=refuse&cancelAfterQueries=1',
    });
    const answer = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(answer.kind).not.toBe('cancel-refused');
    const outcome: OrderOutcome = await settled(orderHandle(ref));
    expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
    expect(sandboxOrder(ref)?.status).toBe(3);
  });

  test('a Cancel answered with an envelope code nobody listed is not a refusal: the order is followed to Cancelled', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=unknownCode&cancelAfterQueries=1' });
    const answer = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(answer).toMatchObject({ kind: 'cancel-requested', ambiguous: true });
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
  });

  test('a confirm within 2 minutes of a change of fee is refused (FeeChangesSoon), nothing sent: the Cancel could land after the change', async () => {
    // Free for one more minute: the caller's free quote is right, but a Cancel sent now may be processed past it.
    const ref = await confirmed({ test: 'confirmAfterMs=0&freeCancelForMs=60000' });
    await expect(
      cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }),
    ).rejects.toMatchObject({ cause: { type: 'FeeChangesSoon', message: expect.stringMatching(/within 120 s/) } });
    expect(cancelCalls(ref)).toHaveLength(0);
    expect(sandboxOrder(ref)?.status).toBe(2);
  });

  test('a fee deadline passing between a lost Cancel and its re-send: re-quoted, stopped, not charged', async () => {
    expectWorkerWarnings(/^ERROR Order cancel-stopped: needs manual follow-up/);
    // Free for 4 minutes after booking (beyond the 2-minute margin before a change of fee); the Cancels of the first
    // 5 minutes never reach the hotel (504, nothing taken): a first send whose answer is lost, however it is retried.
    const ref = await confirmed({ test: 'confirmAfterMs=0&freeCancelForMs=240000&cancel=lost&cancelTimes=12' });
    const answer = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect(answer).toMatchObject({ kind: 'cancel-requested', ambiguous: true });
    // The re-send point is the first poll ≥ 10 minutes after the send: past the free window.
    const outcome: OrderOutcome = await settled(orderHandle(ref), '1 minute');
    expect(outcome).toMatchObject({ kind: 'cancel-stopped', feeNow: { amount: expect.any(Number) } });
    if (outcome.kind !== 'cancel-stopped') return;
    expect(outcome.feeNow!.amount).toBeGreaterThan(0);
    expect(outcome.cancellation.accepted).toEqual({ kind: 'fee', fee: { currency: 'USD', amount: 0 } });
    expect(cancelCalls(ref)).toHaveLength(1);
    expect(sandboxOrder(ref)?.status).toBe(2);
  });
});

/**
 * Order runs on a task queue of their own, with the activities a test shapes: `queryOrder` on the QueryOrders queue
 * (the rig's, unless given), `sendCancel` on the main one (none polled with `noActivities`: a backlog no worker takes).
 */
async function withOrderWorkers<T>(
  shape: { queryOrder?: BookingActivityFns['queryOrder']; noActivities?: boolean },
  work: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `order-shaped-${Date.now()}`;
  const booking = createActivities({ supplier: rig.supplier, profile: testProfile });
  const order = createOrderActivities({ supplier: rig.supplier, profile: testProfile, client, recoveryTesting: true });
  const main = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: workflowBundle(),
    activities: {
      sendCancel: order.sendCancel,
      bookingInProgress: order.bookingInProgress,
      checkOrderStart: order.checkOrderStart,
      earlierCancelSends: order.earlierCancelSends,
      clockForFees: order.clockForFees,
    },
    ...(shape.noActivities ? { enableNonLocalActivities: false } : {}),
  });
  const queries = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: queryOrdersTaskQueue(taskQueue),
    activities: { queryOrder: shape.queryOrder ?? booking.queryOrder },
  });
  return main.runUntil(queries.runUntil(() => work(taskQueue)));
}
type BookingActivityFns = ReturnType<typeof createActivities>;

/** A caller's confirm at the free fee, on `taskQueue`, with the order run's recovery schedule; its update accepted. */
async function confirmFreeOn(taskQueue: string, ref: string, recovery: OrderWorkflowInput['recovery']) {
  const input: OrderWorkflowInput = { customerReferenceNo: ref, recovery };
  await client.workflow.startUpdateWithStart(cancelBookingUpdate, {
    args: [{ confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
    startWorkflowOperation: new WithStartWorkflowOperation<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    }),
  });
}

test('a read made before the re-send point is not evidence from after it: a Cancel taken is never sent again because the answer of an older read was acted on late', async () => {
  // The hotel takes the first Cancel (its answer lost: 504) and shows it Cancelled a second later. The poll right
  // after the send still reads Confirmed, and its answer reaches the workflow only 3 s later (a slow activity here;
  // in the chaos run, a workflow task whose worker was killed): past the re-send point of 2 s. Acting on that old
  // read as a fresh one sent a second Cancel over the first, which a live supplier may charge.
  const ref = await confirmed({ test: 'confirmAfterMs=0&cancel=504AfterAccept&cancelTimes=1&cancelAfterMs=1000' });
  const booking = createActivities({ supplier: rig.supplier, profile: testProfile });
  const slowAnswer: BookingActivityFns['queryOrder'] = async (input) => {
    const read = await booking.queryOrder(input);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return read;
  };
  const outcome = await withOrderWorkers({ queryOrder: slowAnswer }, async (taskQueue) => {
    await confirmFreeOn(taskQueue, ref, {
      delaysSeconds: [0.5],
      repeatEverySeconds: 1,
      rebookAfterSeconds: 2,
      deadlineSeconds: 120,
    });
    return orderHandle(ref).result();
  });
  expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
  expect(cancelCalls(ref)).toHaveLength(1);
});

test('a Cancel no worker starts within a minute (a backlog) is never sent late: re-quoted, and once cancellation is no longer free, stopped with nothing sent', async () => {
  expectWorkerWarnings(/^ERROR Order cancel-stopped: needs manual follow-up/);
  // Free for 30 s after booking; the caller confirms at once, at the free fee; no worker takes Cancel tasks. (The
  // time-skipping server does not skip time while an activity task waits: this test takes the minute it waits.)
  // No margin before the change of fee: this is the schedule-to-start bound's test, not the margin's.
  const ref = await confirmed({ test: 'confirmAfterMs=0&freeCancelForMs=30000' });
  const outcome: OrderOutcome = await withOrderWorkers({ noActivities: true }, async (taskQueue) => {
    await confirmFreeOn(taskQueue, ref, { feeChangeMarginSeconds: 0 });
    return settled(orderHandle(ref), '20 seconds');
  });
  expect(outcome).toMatchObject({ kind: 'cancel-stopped' });
  if (outcome.kind !== 'cancel-stopped') return;
  expect(outcome.cancellation.cancelAttempts.map((a) => a.error)).toEqual(['CancelNotStarted', 'FeeAboveAccepted']);
  expect(cancelCalls(ref)).toHaveLength(0);
}, 240_000);

test("a caller's cancelBooking while the booking still recovers its order is refused, naming the booking's own cancel: nothing sent, and the booking ends confirmed, never failed over an order that was made", async () => {
  // Book's answer is lost (504 after the order was made); the booking's first poll reads it pending, its next is
  // 10 minutes away; meanwhile the hotel confirms it, and the caller asks to cancel.
  const request = bookingRequest({
    test: 'book=504AfterCreate&confirmAfterQueries=2&cancelAfterQueries=1',
    recovery: { testing: true, delaysSeconds: [600], repeatEverySeconds: 600 },
  });
  const ref = request.customerReferenceNo;
  const booking = await startBooking(request);
  await eventually(async () => ((await booking.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));
  const refused = await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } }).catch(
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((refused as WorkflowUpdateFailedError).cause?.message)).toMatch(
    /still finding out its order: cancel the booking itself/,
  );
  expect(await settled(booking, '1 minute')).toMatchObject({ kind: 'confirmed' });
  expect(cancelCalls(ref)).toHaveLength(0);
  expect(sandboxOrder(ref)?.status).toBe(2);
});

describe('a booking cancelled by its caller after Book', () => {
  async function cancelledDuringRecovery(onCancelAfterBook: BookingRequest['onCancelAfterBook'], test: string) {
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
    expect(outcome).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'auto', accepted: { kind: 'any' } } });
    expect(sandboxOrder(ref)?.status).toBe(3);
  });

  test("onCancelAfterBook 'cancel-if-free' past free cancellation: stopped for a person, nothing sent", async () => {
    expectWorkerWarnings(/^ERROR Order cancel-stopped: needs manual follow-up/);
    const ref = await cancelledDuringRecovery(
      'cancel-if-free',
      'book=504AfterCreate&confirmAfterQueries=2&freeCancel=0',
    );
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'cancel-stopped', reason: /no longer free/ });
    expect(cancelCalls(ref)).toHaveLength(0);
  });

  test("without onCancelAfterBook ('report') no order workflow starts", async () => {
    const ref = await cancelledDuringRecovery(undefined, 'book=504AfterCreate&confirmAfterQueries=2');
    await expect(orderHandle(ref).describe()).rejects.toThrow(/not found/i);
    expect(cancelCalls(ref)).toHaveLength(0);
  });
});

describe('an operator cancels an order run', () => {
  test('the Cancel in flight finishes, nothing more is sent, and the run ends with an outcome', async () => {
    expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
    // The Cancel is taken but settles only after many polls: the run is following it when the operator steps in.
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancelAfterQueries=50' });
    await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    const handle = orderHandle(ref);
    await handle.cancel();
    const outcome: OrderOutcome = await settled(handle);
    expect(outcome).toMatchObject({ kind: 'cancel-unresolved', interrupted: true });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(cancelCalls(ref)).toHaveLength(1);
  });
});

describe('a supplier callback for a booking no workflow follows', () => {
  /** What the callback receiver does with a verified callback (src/servers/callbacks/temporal-target.ts). */
  const target = () => temporalCallbackTarget(client, { taskQueue: rig.taskQueue, now: () => env.currentTimeMs() });
  const callback = (ref: string, status: number) => target().signal({ customerReferenceNo: ref, status });

  test('the supplier cancelled a confirmed booking: the check verifies it and reports it to a person', async () => {
    expectWorkerWarnings(/^ERROR Order changed-by-supplier: needs manual follow-up/);
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    rig.sandbox.setOrderStatus(ref, 3);
    expect(await callback(ref, 3)).toBe('order');
    const outcome: OrderOutcome = await settled(orderHandle(ref));
    expect(outcome).toMatchObject({ kind: 'changed-by-supplier', order: { status: 3 }, reason: /mismatch/ });
  });

  test('a callback that agrees with the booking is verified and ends `checked`, nobody paged', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0' });
    expect(await callback(ref, 2)).toBe('order');
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'checked', order: { status: 2 } });
  });

  test('after our own cancellation a callback is verified as known: `checked`, the stage stays order-cancelled', async () => {
    const ref = await confirmed({ test: 'confirmAfterMs=0&cancelAfterQueries=1' });
    await cancelRequest(ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 0 } });
    expect((await settled(orderHandle(ref))).kind).toBe('cancelled');
    // The run read the order as it ended: a callback within the minute is deferred (the supplier sends it again).
    await expect(callback(ref, 3)).rejects.toThrow(CallbackDeferredError);
    await env.sleep('61 seconds');
    expect(await callback(ref, 3)).toBe('order');
    expect(await settled(orderHandle(ref))).toMatchObject({ kind: 'checked', order: { status: 3 } });
    const stage = (await orderHandle(ref).describe()).typedSearchAttributes.get(BookingStageKey);
    expect(stage).toBe('order-cancelled');
  });
});

test('the free quote is in the order currency', () => {
  const policy = [{ refundableUntil: '2099-01-01T00:00:00Z', fees: [] }];
  expect(cancelFeeAt(policy, Date.parse('2030-01-01T00:00:00Z'), 'EUR')).toMatchObject({
    basis: 'free',
    fee: { currency: 'EUR', amount: 0 },
  });
});
