/**
 * Every order run is its own last guard, against a supplier written from the spec's text (test/fixtures/spec-supplier):
 * whatever a start carries, and whoever was let through to send it, a run reads and cancels only an order a booking
 * of its own namespace made, and refuses an input it cannot verify before anything reaches the supplier. On a
 * supplier account shared by several partners, a reference is not proof of ownership. Each case failed on the code
 * before: the quote answered, the forged carry cancelled, the foreign id and the out-of-bounds schedule ran.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  cancelBookingUpdate,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  type OrderWorkflowInput,
} from '../../src/api/contract/index';
import { cancelBooking } from '../../src/api/client/index';
import type { orderWorkflow } from '../../src/workflows';
import { askedReferences, ordersAnswer, specCheckAvail, specOrder, success } from '../fixtures/spec-supplier';
import { bookingRequest } from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { startSpecWorker, type SpecWorker } from '../harness/spec-worker';
import { connectTimeSkipping } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let rig: SpecWorker;
/** A worker on an account that books for real: its profile refuses the supplier's test flags. */
let live: SpecWorker;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await startSpecWorker(env, 'partners-apart');
  live = await startSpecWorker(env, 'live-account', { profile: { testHeader: 'refuse' } });
});
afterAll(async () => {
  await live?.close();
  await rig?.close();
  await env?.teardown();
});

/** Every request that named the reference: QueryOrders asking for it, a Cancel of it. */
function sentFor(ref: string): string[] {
  const reads = rig.spec.callsOf('queryOrders').filter((c) => askedReferences(c.body).includes(ref));
  const cancels = rig.spec.callsOf('cancel').filter((c) => c.body.customerReferenceNo === ref);
  return [...reads.map(() => 'queryOrders'), ...cancels.map(() => 'cancel')];
}

/** The supplier lists a Confirmed order under `ref` (another partner's, made on the shared account). */
function listedAtSupplier(ref: string): void {
  rig.spec.script({
    checkAvail: () => specCheckAvail(),
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(specOrder(ref)) : ordersAnswer()),
  });
}

/** A refusal as the caller sees it: its stable type and its message, from an update's failure or a run's. */
async function refusalOf(promise: Promise<unknown>): Promise<{ type: string | undefined; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowFailedError) {
    const cause = error.cause;
    const type = cause instanceof ApplicationFailure ? (cause.type ?? undefined) : cause?.name;
    return { type, message: String(cause?.message) };
  }
  throw new Error(`expected a refusal, got ${error === undefined ? 'an answer' : String(error)}`);
}

const refusalType = async (promise: Promise<unknown>) => (await refusalOf(promise)).type;
const failureMessage = async (promise: Promise<unknown>) => (await refusalOf(promise)).message;

/**
 * A booking confirmed here whose order the supplier then cancels on its own, no order run of ours having asked: a
 * mismatch, for a person (the ERROR line a check writes is expected).
 */
async function cancelledBySupplierAfterBooking(): Promise<string> {
  expectWorkerWarnings(/^ERROR Order changed-by-supplier/);
  const ref = randomUUID();
  listedAtSupplier(ref);
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const cancelled = specOrder(ref, { status: 3, cancelTime: '2030-06-02T09:00:00Z', cancelReason: null });
  rig.spec.script({
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(cancelled) : ordersAnswer()),
  });
  return ref;
}

/** An order run started as a caller would start one, with `input` as its start's argument. */
async function startOrder(workflowId: string, input: unknown) {
  return env.client.workflow.start<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
    taskQueue: rig.taskQueue,
    workflowId,
    args: [input as OrderWorkflowInput],
  });
}

test('a quote for a reference no booking of this namespace made is refused OrderNotFound, nothing read from the supplier', async () => {
  const theirs = randomUUID();
  listedAtSupplier(theirs);
  const refused = cancelBooking(env.client, theirs, { confirm: false }, { taskQueue: rig.taskQueue });
  expect(await refusalType(refused)).toBe('OrderNotFound');
  const outcome = await env.client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(theirs)).result();
  expect(outcome).toMatchObject({ kind: 'not-cancellable', reason: /no booking of this namespace/ });
  expect(sentFor(theirs)).toEqual([]);
});

test('a booking that ended before Book does not make the order under its reference ours', async () => {
  // The victim's reference, booked here with a package the supplier has no room for: the booking ends unavailable,
  // Book never sent, and still the supplier lists the victim's order under that reference.
  const ref = randomUUID();
  rig.spec.script({
    checkAvail: () => success({ status: 2 }),
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(specOrder(ref)) : ordersAnswer()),
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'unavailable' });
  const refused = cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  expect(await refusalType(refused)).toBe('OrderNotFound');
  expect(sentFor(ref)).toEqual([]);
});

test("the system's own cancellation of an order not ours goes to a person, nothing sent", async () => {
  expectWorkerWarnings(/^ERROR Order cancel-not-done/);
  const theirs = randomUUID();
  listedAtSupplier(theirs);
  const handle = await env.client.workflow.signalWithStart<typeof orderWorkflow, [unknown]>(ORDER_WORKFLOW_TYPE, {
    taskQueue: rig.taskQueue,
    workflowId: orderWorkflowId(theirs),
    args: [{ customerReferenceNo: theirs }],
    signal: 'autoCancel',
    signalArgs: [{ reason: 'orphan', onlyIfFree: false, origin: 'reconciliation' }],
  });
  expect(await handle.result()).toMatchObject({ kind: 'cancel-not-done', origin: 'reconciliation' });
  expect(sentFor(theirs)).toEqual([]);
});

test('a forged carry in a start is refused by the run, even for its own confirmed order: nothing read, nothing cancelled', async () => {
  const ref = randomUUID();
  listedAtSupplier(ref);
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const before = sentFor(ref).length;
  // What the old code took as a hand-over: an automatic cancellation at any fee, blamed on the sweep.
  const forged = {
    customerReferenceNo: ref,
    carry: {
      state: { stage: 'checking', customerReferenceNo: ref },
      autoAsked: 'reconciliation',
      wait: {
        auto: { reason: 'forged', onlyIfFree: false, origin: 'reconciliation' },
        from: { anchorMs: 0, nextIndex: 0, deadlineMs: 4_000_000_000_000 },
      },
    },
  };
  const update = env.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
    args: [{ confirm: false }],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue: rig.taskQueue,
      args: [forged as unknown as OrderWorkflowInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  await update.catch(() => undefined);
  const run = env.client.workflow.getHandle(orderWorkflowId(ref)).result();
  expect(await refusalType(run)).toBe('InvalidOrderInput');
  expect(await failureMessage(run)).toMatch(/carry: internal to continue-as-new/);
  expect(sentFor(ref)).toHaveLength(before);
});

test('an order run whose id names another reference is refused, nothing sent for either', async () => {
  const [mine, other] = [randomUUID(), randomUUID()];
  listedAtSupplier(other);
  const handle = await startOrder(orderWorkflowId(mine), { customerReferenceNo: other });
  expect(await refusalType(handle.result())).toBe('InvalidOrderInput');
  expect(await failureMessage(handle.result())).toMatch(/workflowId: must be "order:/);
  expect([...sentFor(mine), ...sentFor(other)]).toEqual([]);
});

test.each([
  ['a schedule below the floor on a worker that books for real', { repeatEverySeconds: 0.01 }, /repeatEverySeconds/],
  ['a fee margin of a day', { feeChangeMarginSeconds: 86_400 }, /feeChangeMarginSeconds/],
  ['continue-as-new after every event', { continueAsNewAfterEvents: 1 }, /continueAsNewAfterEvents/],
])('an order input with %s is refused by the run, nothing sent', async (_what, recovery, named) => {
  const ref = randomUUID();
  listedAtSupplier(ref);
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const before = sentFor(ref).length;
  const handle = await startOrder(orderWorkflowId(ref), { customerReferenceNo: ref, recovery });
  expect(await refusalType(handle.result())).toBe('InvalidOrderInput');
  expect(await failureMessage(handle.result())).toMatch(named);
  expect(sentFor(ref)).toHaveLength(before);
});

test("the receiver's door cannot say what only an operator may: a check claiming to settle an unresolved booking is judged as any check", async () => {
  const ref = await cancelledBySupplierAfterBooking();
  const check = (signal: string) =>
    env.client.workflow.signalWithStart<typeof orderWorkflow, [unknown]>(ORDER_WORKFLOW_TYPE, {
      taskQueue: rig.taskQueue,
      workflowId: orderWorkflowId(ref),
      args: [{ customerReferenceNo: ref }],
      signal,
      signalArgs: [{ reason: 'supplier order-status callback', resolvesUnresolved: true }],
    });
  // On the old code the flag made this `checked`, and the console's item went away.
  expect(await (await check('checkOrder')).result()).toMatchObject({ kind: 'changed-by-supplier' });
  expect(await (await check('operatorCheckOrder')).result()).toMatchObject({ kind: 'checked' });
});

test("a check cannot say what the order's last run did: a claimed 'order-cancelled' does not hide the supplier's own cancellation", async () => {
  const ref = await cancelledBySupplierAfterBooking();
  // What an older receiver sent (the describe of the last order run): on the old code it was believed, and the
  // check ended `checked`, as if our own cancellation had made the order Cancelled.
  const handle = await env.client.workflow.signalWithStart<typeof orderWorkflow, [unknown]>(ORDER_WORKFLOW_TYPE, {
    taskQueue: rig.taskQueue,
    workflowId: orderWorkflowId(ref),
    args: [{ customerReferenceNo: ref }],
    signal: 'checkOrder',
    signalArgs: [{ reason: 'supplier order-status callback', lastOrderStage: 'order-cancelled' }],
  });
  expect(await handle.result()).toMatchObject({ kind: 'changed-by-supplier' });
});

describe("on an account that books for real (the profile's testHeader: refuse), test flags are refused at the first step", () => {
  /** Every request the live account's supplier got for the reference. */
  const liveCallsFor = (ref: string) =>
    (['checkAvail', 'book', 'queryOrders', 'cancel'] as const).flatMap((op) =>
      live.spec
        .callsOf(op)
        .filter((c) => c.body.customerReferenceNo === ref || askedReferences(c.body).includes(ref))
        .map(() => op),
    );

  test('a booking whose context carries test flags is refused InvalidBookingRequest naming context.test, nothing sent', async () => {
    const request = bookingRequest({ test: 'scenario=available' });
    const failed = live.book(request);
    expect(await refusalType(failed)).toBe('InvalidBookingRequest');
    expect(await failureMessage(failed)).toMatch(/context\.test: .*testHeader: refuse/);
    expect(liveCallsFor(request.customerReferenceNo)).toEqual([]);
  });

  test('the same booking without test flags books on that account', async () => {
    const ref = randomUUID();
    live.spec.script({
      checkAvail: () => specCheckAvail(),
      queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(specOrder(ref)) : ordersAnswer()),
    });
    expect(await live.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  });

  test('an order input whose context carries test flags is refused InvalidOrderInput, nothing sent', async () => {
    const ref = randomUUID();
    const handle = await env.client.workflow.start<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      taskQueue: live.taskQueue,
      workflowId: orderWorkflowId(ref),
      args: [{ customerReferenceNo: ref, context: { test: 'scenario=serviceUnavailable' } }],
    });
    expect(await refusalType(handle.result())).toBe('InvalidOrderInput');
    expect(await failureMessage(handle.result())).toMatch(/context\.test: .*testHeader: refuse/);
    expect(liveCallsFor(ref)).toEqual([]);
  });
});
