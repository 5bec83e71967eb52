/**
 * Cancellation on demand (orderWorkflow, started by the client helper's Update-With-Start) against a supplier
 * written from the spec's text (test/fixtures/spec-supplier.ts), not from our schemas or our sandbox. The spec does
 * not show Cancel; supplier-facts.md says: `POST /api/trade/cancel`, `{customerReferenceNo, supplierReferenceNo,
 * reason}` → `{serviceFee: Money, status}`, asynchronous, so poll QueryOrders; status 3 is Cancelled. Each answer
 * below is one a supplier may send for a Cancel it took: the booking must find out with QueryOrders, never believe
 * a refusal it cannot trust, and never send Cancel again once the order reads Cancelled.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bookingWorkflowId,
  orderWorkflowId,
  type BookingOutcome,
  type OrderOutcome,
} from '../../src/api/contract/index';
import { awaitOrderOutcome, cancelBooking } from '../../src/api/client/index';
import type { bookingWorkflow } from '../../src/workflows';
import {
  askedReferences,
  bookAnswer,
  ORDER_CONFIRMED,
  ordersAnswer,
  specOrder,
  success,
  type SpecReply,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { bookingRequest } from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { ORDER_CANCELLED, specSupplierFile } from '../harness/spec-supplier-file';

let env: TestWorkflowEnvironment;
let spec: SpecSupplier;
let taskQueue: string;

specSupplierFile('spec-cancel', (f) => ({ env, spec, taskQueue } = f));

/**
 * A confirmed booking whose order the hotel cancels only once `takenAt(n)` says the n-th Cancel took it; every
 * Cancel is answered by `answer(n)`. QueryOrders lists the order as the hotel has it, with `fields` over the spec's.
 */
async function confirmedOrder(
  answer: (n: number) => SpecReply,
  takenAt: (n: number) => boolean = () => true,
  fields: Record<string, unknown> = {},
) {
  const ref = randomUUID();
  let cancelled = false;
  let cancels = 0;
  const order = () =>
    specOrder(ref, {
      ...fields,
      status: cancelled ? ORDER_CANCELLED : ORDER_CONFIRMED,
      ...(cancelled ? { cancelTime: '2030-06-02T09:00:00Z', cancelReason: null } : {}),
    });
  spec.script({
    book: (body) =>
      body.customerReferenceNo === ref ? bookAnswer(order()) : bookAnswer(specOrder(String(body.customerReferenceNo))),
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(order()) : ordersAnswer()),
    // n counts this reference's Cancels (the fixture's own count is per operation, across tests).
    cancel: (body) => {
      if (body.customerReferenceNo !== ref) return answer(1);
      const n = ++cancels;
      if (takenAt(n)) cancelled = true;
      return answer(n);
    },
  });
  const request = bookingRequest({ customerReferenceNo: ref });
  const handle = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue,
    workflowId: bookingWorkflowId(ref),
    args: [request],
  });
  const outcome: BookingOutcome = await handle.result();
  expect(outcome.kind).toBe('confirmed');
  return ref;
}

/** Quotes, then cancels at the quoted fee, as a caller does; the run's end. */
async function cancelAtQuote(ref: string): Promise<{ answer: string; outcome: OrderOutcome }> {
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  const answer = await cancelBooking(env.client, ref, { confirm: true, acceptedFee: quote.quote.fee }, { taskQueue });
  return { answer: answer.kind, outcome: await awaitOrderOutcome(env.client, ref) };
}

/** The first Cancel's answer lost (504), every later one refused 400 (the hotel's words for "being cancelled"). */
const lostThenRefused = (n: number): SpecReply =>
  n === 1
    ? { status: 504, body: { code: 100000504, msg: 'gateway timeout' } }
    : { status: 400, body: { code: 100000400, msg: 'order status does not allow cancellation' } };

const cancelsOf = (ref: string) => spec.callsOf('cancel').filter((c) => c.body.customerReferenceNo === ref);

test('Cancel answered as supplier-facts shows it, the fee as text, the status still Confirming and a field we never heard of: followed to Cancelled', async () => {
  const ref = await confirmedOrder(() =>
    success({ serviceFee: { currency: 'USD', amount: '0.00' }, status: 1, statusRemark: null, refundId: 'R-77' }),
  );
  const { answer, outcome } = await cancelAtQuote(ref);
  expect(answer).toBe('cancel-requested');
  expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: ORDER_CANCELLED } });
  expect(cancelsOf(ref)).toHaveLength(1);
  // The request carries what supplier-facts.md names.
  expect(cancelsOf(ref)[0]!.body).toMatchObject({ customerReferenceNo: ref, supplierReferenceNo: 'SRN-20300601-1' });
});

test('Cancel answered code 0 with no data at all: not a refusal, settled by QueryOrders', async () => {
  const ref = await confirmedOrder(() => ({ code: 0, msg: 'Success' }));
  const { answer, outcome } = await cancelAtQuote(ref);
  expect(answer).not.toBe('cancel-refused');
  expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: ORDER_CANCELLED } });
  expect(cancelsOf(ref)).toHaveLength(1);
});

test('Cancel answered HTTP 200 with an envelope code nobody listed: not a refusal; the hotel took it', async () => {
  const ref = await confirmedOrder(() => ({ code: 200010077, msg: 'order cancellation accepted for processing' }));
  const { answer, outcome } = await cancelAtQuote(ref);
  expect(answer).not.toBe('cancel-refused');
  expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: ORDER_CANCELLED } });
  expect(cancelsOf(ref)).toHaveLength(1);
});

test("Cancel's first answer lost (504 after the hotel took it, listed late), the re-send refused 400: cancelled, sent no third time", async () => {
  // The hotel takes the first Cancel but QueryOrders shows it only after the re-send; the re-send is refused
  // because the order is already being cancelled. A refusal after a send that may have acted proves nothing.
  let lastCancelAt = 0;
  const ref = await confirmedOrder(
    (n) => {
      lastCancelAt = n;
      return lostThenRefused(n);
    },
    (n) => n >= 2,
  );
  const { answer, outcome } = await cancelAtQuote(ref);
  expect(answer).not.toBe('cancel-refused');
  expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: ORDER_CANCELLED } });
  expect(lastCancelAt).toBeGreaterThanOrEqual(2);
  expect(cancelsOf(ref)).toHaveLength(2);
});

test('the hotel never shows the cancellation: Cancel sent at most maxBookAttempts (2) times, and at the deadline a person is told', async () => {
  expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
  const ref = await confirmedOrder(lostThenRefused, () => false);
  const { outcome } = await cancelAtQuote(ref);
  expect(outcome.kind).toBe('cancel-unresolved');
  // Two sends that may have acted (the lost one and its re-send), then only QueryOrders until the deadline.
  expect(cancelsOf(ref)).toHaveLength(2);
  expect((await env.client.workflow.getHandle(orderWorkflowId(ref)).describe()).status.name).toBe('COMPLETED');
});

test('two confirms at once (a double click, a retried call): one cancellation, the other refused; the hotel never shows it, so a person is told, and Cancel is never sent as a first send again', async () => {
  expectWorkerWarnings(/^ERROR Order cancel-unresolved: needs manual follow-up/);
  const ref = await confirmedOrder(lostThenRefused, () => false);
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  const confirm = { confirm: true, acceptedFee: quote.quote.fee };
  const answers = await Promise.allSettled([
    cancelBooking(env.client, ref, confirm, { taskQueue }),
    cancelBooking(env.client, ref, confirm, { taskQueue }),
  ]);
  const taken = answers.filter((a) => a.status === 'fulfilled');
  const refused = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
  expect(taken).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(String(refused[0]!.reason?.cause?.message ?? refused[0]!.reason)).toMatch(/already asked for in this run/);
  // A stable type to branch on, not only words.
  expect(refused[0]!.reason?.cause?.type).toBe('CancellationAlreadyAsked');
  // The run ends for a person (cancel-unresolved), not `cancel-refused` over a second "first" send's 400.
  expect((await awaitOrderOutcome(env.client, ref)).kind).toBe('cancel-unresolved');
  expect(cancelsOf(ref)).toHaveLength(2);
});

test('a Cancel the hotel charges above the fee accepted (25 USD on a free cancellation) still ends cancelled, and a person is told with both fees', async () => {
  expectWorkerWarnings(/^ERROR Order cancelled at a service fee above the one accepted/);
  // Free for centuries: whatever the time-skipping clock says, the quote is free and the caller accepts 0.
  const room = { ...((specOrder('x').rooms as object[])[0] as object) };
  const rooms = [
    {
      ...room,
      refundableUntil: '2999-01-01T00:00:00Z',
      cancelFees: [{ until: '2999-06-01T00:00:00Z', fee: { currency: 'USD', amount: 60 } }],
    },
  ];
  const ref = await confirmedOrder(
    () => success({ serviceFee: { currency: 'USD', amount: '25.00' }, status: 1 }),
    () => true,
    { rooms },
  );
  const { answer, outcome } = await cancelAtQuote(ref);
  expect(answer).toBe('cancel-requested');
  expect(outcome).toMatchObject({
    kind: 'cancelled',
    cancellation: { accepted: { kind: 'fee', fee: { amount: 0 } }, serviceFee: { currency: 'USD', amount: 25 } },
  });
});
