/**
 * The system's own cancellations (a booking's onCancelAfterBook, the sweep's orphans) against a supplier written from
 * the spec's text (test/fixtures/spec-supplier.ts). Nobody waits on these: the cancellation must follow the order
 * until it can act, and whatever it cannot do must reach a person; it must never be lost to a run already open.
 * supplier-facts.md: order status 1 Confirming, 2 Confirmed, 3 Cancelled; Cancel is asynchronous.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  autoCancelSignal,
  bookingStateQuery,
  bookingWorkflowId,
  checkOrderSignal,
  orderStateQuery,
  orderWorkflowId,
  type AutoCancel,
  type OrderOutcome,
} from '../../src/api/contract/index';
import { awaitOrderOutcome, cancelBooking } from '../../src/api/client/index';
import type { bookingWorkflow, orderWorkflow } from '../../src/workflows';
import {
  askedReferences,
  bookAnswer,
  ORDER_CONFIRMED,
  ORDER_CONFIRMING,
  ordersAnswer,
  specOrder,
  success,
  type SpecReply,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { bookingRequest, eventually } from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import type { SpecWorker } from '../harness/spec-worker';
import { ORDER_CANCELLED, specSupplierFile } from '../harness/spec-supplier-file';

let env: TestWorkflowEnvironment;
let spec: SpecSupplier;
let rig: SpecWorker;

specSupplierFile('spec-auto-cancel', (f) => ({ env, spec, rig } = f));

const cancelsOf = (ref: string) => spec.callsOf('cancel').filter((c) => c.body.customerReferenceNo === ref);

/**
 * One reference's order as the hotel has it: `listing(n)` says what the n-th QueryOrders for it lists (undefined:
 * nothing), until a Cancel the hotel took; then Cancelled. Book is answered 504 (the booking recovers its order),
 * every Cancel by `cancel(n)`.
 */
function hotel(
  ref: string,
  listing: (n: number) => number | undefined,
  cancel: (n: number) => SpecReply | Promise<SpecReply>,
) {
  let queries = 0;
  let cancels = 0;
  let cancelled = false;
  const order = (status: number) =>
    specOrder(ref, {
      status,
      ...(status === ORDER_CANCELLED ? { cancelTime: '2030-06-02T09:00:00Z', cancelReason: null } : {}),
    });
  spec.script({
    book: (body) =>
      body.customerReferenceNo === ref
        ? { status: 504, body: { code: 100000504, msg: 'gateway timeout' } }
        : bookAnswer(specOrder(String(body.customerReferenceNo))),
    queryOrders: (body) => {
      if (!askedReferences(body).includes(ref)) return ordersAnswer();
      if (cancelled) return ordersAnswer(order(ORDER_CANCELLED));
      const status = listing(++queries);
      return status === undefined ? ordersAnswer() : ordersAnswer(order(status));
    },
    cancel: async (body) => {
      if (body.customerReferenceNo !== ref) return success({ serviceFee: { currency: 'USD', amount: 0 }, status: 3 });
      const answer = await cancel(++cancels);
      if (!isRefusal(answer)) cancelled = true;
      return answer;
    },
  });
}

const isRefusal = (answer: SpecReply) =>
  typeof answer === 'object' && answer !== null && 'status' in answer && (answer as { status: number }).status >= 400;

/** A booking whose caller cancels it while Book is being resolved, with onCancelAfterBook 'cancel'. */
async function bookThenCancelDuringRecovery(ref: string): Promise<void> {
  const request = bookingRequest({ customerReferenceNo: ref, onCancelAfterBook: 'cancel' });
  const handle = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(ref),
    args: [request],
  });
  await eventually(async () => ((await handle.query(bookingStateQuery)).stage === 'recovering' ? true : undefined));
  await handle.cancel();
  expect(await handle.result()).toMatchObject({ kind: 'confirmed', cancelRequested: true });
}

test("onCancelAfterBook's cancellation follows an order the listing shows late (not listed, then Confirming) until it reads Confirmed, and cancels it", async () => {
  const ref = randomUUID();
  // The booking's first poll finds nothing and its second Confirmed; the order run's reads lag behind (a replica):
  // nothing, then Confirming, then Confirmed.
  hotel(
    ref,
    (n) => (n === 1 ? undefined : n === 2 ? ORDER_CONFIRMED : n === 3 ? undefined : n === 4 ? ORDER_CONFIRMING : 2),
    () => success({ serviceFee: { currency: 'USD', amount: 0 }, status: 1 }),
  );
  await bookThenCancelDuringRecovery(ref);
  const outcome = await awaitOrderOutcome(env.client, ref);
  expect(outcome).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'auto' } });
  expect(cancelsOf(ref)).toHaveLength(1);
});

test("onCancelAfterBook's Cancel refused by the supplier is not left as a plain refusal: cancel-not-done, an ERROR line for a person", async () => {
  expectWorkerWarnings(/^ERROR Order cancel-not-done: needs manual follow-up/);
  const ref = randomUUID();
  hotel(
    ref,
    (n) => (n === 1 ? undefined : ORDER_CONFIRMED),
    () => ({ status: 400, body: { code: 100000400, msg: 'order status does not allow cancellation' } }),
  );
  await bookThenCancelDuringRecovery(ref);
  const outcome: OrderOutcome = await awaitOrderOutcome(env.client, ref);
  expect(outcome).toMatchObject({ kind: 'cancel-not-done', origin: 'auto', order: { status: ORDER_CONFIRMED } });
  expect(cancelsOf(ref)).toHaveLength(1);
});

test("the sweep's cancellation of an orphan reaches a run already open for the reference (a caller's cancellation being refused): it is not lost, and the refusal goes to a person", async () => {
  expectWorkerWarnings(/^ERROR Order cancel-not-done: needs manual follow-up/);
  const ref = randomUUID();
  const orphan: AutoCancel = {
    reason: 'orphan order: no booking stands for it',
    onlyIfFree: false,
    origin: 'reconciliation',
  };
  // The first Cancel is refused before any work (429) and, while the run waits to send it again, the sweep's
  // cancellation arrives as a worker delivers it (signal-with-start: in the run's history before the 429 is read);
  // the second Cancel is refused outright.
  hotel(
    ref,
    () => ORDER_CONFIRMED,
    async (n) => {
      if (n === 1) {
        await env.client.workflow.signalWithStart<typeof orderWorkflow, [AutoCancel]>('orderWorkflow', {
          workflowId: orderWorkflowId(ref),
          taskQueue: rig.taskQueue,
          args: [{ customerReferenceNo: ref }],
          signal: autoCancelSignal,
          signalArgs: [orphan],
        });
        return { status: 429, body: { code: 100000429, msg: 'too many requests' } };
      }
      return { status: 400, body: { code: 100000400, msg: 'order status does not allow cancellation' } };
    },
  );
  // The order is this namespace's: its booking sent Book (answered 504) and found it confirmed.
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  const answer = await cancelBooking(
    env.client,
    ref,
    { confirm: true, acceptedFee: quote.quote.fee },
    { taskQueue: rig.taskQueue },
  );
  // The caller is told its own answer; the run's outcome carries the system's request to a person.
  expect(answer.kind).toBe('cancel-refused');
  const outcome = await awaitOrderOutcome(env.client, ref);
  expect(outcome).toMatchObject({ kind: 'cancel-not-done', origin: 'reconciliation' });
  expect(cancelsOf(ref)).toHaveLength(2);
});

test("onCancelAfterBook's wait for an order that never becomes cancellable ends for a person, and a check that comes meanwhile never replaces that ending with a plain 'checked'", async () => {
  expectWorkerWarnings(/^ERROR Order cancel-not-done: needs manual follow-up/);
  const ref = randomUUID();
  // The booking reads the order Confirmed; the order run's reads find it Confirming to the end (a hotel that never
  // settles it again): nothing the automatic cancellation can act on.
  hotel(
    ref,
    (n) => (n === 1 ? undefined : n === 2 ? ORDER_CONFIRMED : ORDER_CONFIRMING),
    () => success({ serviceFee: { currency: 'USD', amount: 0 }, status: 1 }),
  );
  await bookThenCancelDuringRecovery(ref);
  const order = env.client.workflow.getHandle<typeof orderWorkflow>(orderWorkflowId(ref));
  await eventually(async () => ((await order.query(orderStateQuery)).stage === 'cancel-waiting' ? true : undefined));
  // A supplier callback (or an operator's "check again") while the cancellation waits.
  await order.signal(checkOrderSignal, { reason: 'supplier callback', reportedStatus: ORDER_CONFIRMING });
  const outcome: OrderOutcome = await awaitOrderOutcome(env.client, ref);
  expect(outcome).toMatchObject({ kind: 'cancel-not-done', origin: 'auto', order: { status: ORDER_CONFIRMING } });
  expect(cancelsOf(ref)).toHaveLength(0);
});
