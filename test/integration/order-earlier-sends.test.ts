/**
 * A new order run knows what the last one did, from Temporal, not from what it was sent. A check the receiver starts
 * after our own cancellation judges the Cancelled order by the last run's end, which it reads itself.
 *
 * A new order run knows what the last one sent. A run's Cancel answer was lost (504), the hotel took it but shows it
 * only much later, and the run ended `cancel-unresolved` at its deadline; the caller asks again, and the new run's
 * Cancel is refused 400 ("cannot be cancelled": it already is being cancelled). That refusal proves nothing: the new
 * run finds the earlier run's send (listed by workflow id, read from its result) and follows the order to Cancelled
 * instead of telling the caller "refused" over an order about to be cancelled.
 *
 * On the dev server (the run list needs visibility, which the time-skipping test server lacks), against the supplier
 * written from the spec's text; the runs use a short recovery schedule so the first ends within seconds.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  cancelBookingUpdate,
  orderWorkflowId,
  type CancelBookingAnswer,
  type CancelBookingRequest,
  type OrderOutcome,
  ORDER_WORKFLOW_TYPE,
  type OrderWorkflow,
} from '../../src/api/contract/index';
import { awaitOrderOutcome, cancelBooking } from '../../src/api/client/index';
import {
  askedReferences,
  ORDER_CONFIRMED,
  specCheckAvail,
  ordersAnswer,
  specOrder,
  success,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { bookingRequest, eventually } from '../harness/booking';
import { startSpecWorker, type SpecWorker } from '../harness/spec-worker';
import { connectDevServer } from '../harness/temporal';

const ORDER_CANCELLED = 3;
/** Polls 2 s apart, a 12 s deadline, and no re-send (that waits 10 minutes): the first run ends unresolved soon. */
const SHORT = { delaysSeconds: [2, 2], repeatEverySeconds: 2, deadlineSeconds: 12, rebookAfterSeconds: 600 };

let env: TestWorkflowEnvironment;
let spec: SpecSupplier;
let rig: SpecWorker;

beforeAll(async () => {
  env = await connectDevServer();
  // The order run's short schedule (SHORT) is a test's: a worker that books for real refuses it.
  rig = await startSpecWorker(env, 'earlier-sends', { recoveryTesting: true });
  spec = rig.spec;
});

afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** A caller's cancelBooking by Update-With-Start, as documented, with the short schedule in the start input. */
function ask(ref: string, request: CancelBookingRequest): Promise<CancelBookingAnswer> {
  return env.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<OrderWorkflow>('orderWorkflow', {
      workflowId: orderWorkflowId(ref),
      taskQueue: rig.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ customerReferenceNo: ref, recovery: SHORT }],
    }),
  });
}

/**
 * The hotel takes the first Cancel (its answer lost: 504) but lists the order Cancelled only once a second one has
 * come in, which it refuses 400 ("cannot be cancelled": it already is being cancelled).
 */
function hotelShowingTheFirstCancelLate(ref: string): { cancels: () => number } {
  let cancels = 0;
  let listedCancelled = false;
  spec.script({
    queryOrders: (body) =>
      askedReferences(body).includes(ref)
        ? ordersAnswer(
            specOrder(ref, {
              status: listedCancelled ? ORDER_CANCELLED : ORDER_CONFIRMED,
              ...(listedCancelled ? { cancelTime: '2030-06-02T09:00:00Z', cancelReason: null } : {}),
            }),
          )
        : ordersAnswer(),
    cancel: (body) => {
      if (body.customerReferenceNo !== ref) return success({ status: 3 });
      cancels++;
      if (cancels === 1) return { status: 504, body: { code: 100000504, msg: 'gateway timeout' } };
      listedCancelled = true;
      return { status: 400, body: { code: 100000400, msg: 'order status does not allow cancellation' } };
    },
  });
  return { cancels: () => cancels };
}

/** A booked order whose first cancellation's run sent a Cancel that may have acted and ended unresolved. */
async function bookedThenCancelUnresolved(ref: string): Promise<CancelBookingRequest['acceptedFee']> {
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const quote = await ask(ref, { confirm: false });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  const first = await ask(ref, { confirm: true, acceptedFee: quote.quote.fee });
  expect(first).toMatchObject({ kind: 'cancel-requested', ambiguous: true });
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancel-unresolved' });
  return quote.quote.fee;
}

test("a new run's first Cancel refused after an earlier run's Cancel may have acted: not read as a refusal; the order is followed to Cancelled", async () => {
  expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
  const ref = randomUUID();
  const hotel = hotelShowingTheFirstCancelLate(ref);
  const fee = await bookedThenCancelUnresolved(ref);

  const second = await ask(ref, { confirm: true, acceptedFee: fee });
  expect(second.kind).toBe('cancel-requested');
  const outcome: OrderOutcome = await awaitOrderOutcome(env.client, ref);
  expect(outcome).toMatchObject({
    kind: 'cancelled',
    cancellation: { earlierSends: 'may-have-acted', cancelAttempts: [{ result: 'rejected' }] },
  });
  expect(hotel.cancels()).toBe(2);
});

test('the run that sent is found behind many later runs: every earlier run is read, not the newest 20', async () => {
  expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
  const ref = randomUUID();
  const hotel = hotelShowingTheFirstCancelLate(ref);
  const fee = await bookedThenCancelUnresolved(ref);
  // 24 quotes afterwards, one run each: the run that sent is now the 25th newest.
  for (let i = 0; i < 24; i++) {
    await ask(ref, { confirm: false });
    await awaitOrderOutcome(env.client, ref);
  }
  const second = await ask(ref, { confirm: true, acceptedFee: fee });
  expect(second.kind).toBe('cancel-requested');
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({
    kind: 'cancelled',
    cancellation: { earlierSends: 'may-have-acted' },
  });
  expect(hotel.cancels()).toBe(2);
});

test("a check after our own cancellation reads the last run's end from Temporal: the Cancelled order is as reported", async () => {
  const ref = randomUUID();
  let cancelled = false;
  const order = () =>
    specOrder(ref, cancelled ? { status: 3, cancelTime: '2030-06-02T09:00:00Z', cancelReason: null } : {});
  spec.script({
    checkAvail: () => specCheckAvail(),
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(order()) : ordersAnswer()),
    cancel: (body) => {
      if (body.customerReferenceNo === ref) cancelled = true;
      return success({ serviceFee: { amount: 0, currency: 'USD' }, status: 3 });
    },
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  await cancelBooking(env.client, ref, { confirm: true, acceptedFee: quote.quote.fee }, { taskQueue: rig.taskQueue });
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancelled' });
  // The receiver starts a check only a minute after a run closed: by then visibility lists the run as ended.
  await eventually(async () => {
    for await (const run of env.client.workflow.list({ query: `WorkflowId = '${orderWorkflowId(ref)}'` })) {
      if (run.status.name === 'COMPLETED') return true;
    }
    return undefined;
  }, 10_000);
  // A supplier callback afterwards: the check carries the reference only, and the run finds its predecessor's end.
  const handle = await env.client.workflow.signalWithStart<OrderWorkflow, [unknown]>(ORDER_WORKFLOW_TYPE, {
    taskQueue: rig.taskQueue,
    workflowId: orderWorkflowId(ref),
    args: [{ customerReferenceNo: ref }],
    signal: 'checkOrder',
    signalArgs: [{ reason: 'supplier order-status callback' }],
  });
  expect(await handle.result()).toMatchObject({ kind: 'checked' });
});
