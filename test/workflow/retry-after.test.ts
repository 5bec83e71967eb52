/**
 * A supplier's Retry-After is honoured up to the profile's ceiling (retryAfterCeilingSeconds, 600 s by default),
 * against the supplier written from the spec's text: a 429 asking for a day, or for a date centuries away, on Book
 * or on a free Cancel, is not a day's wait (before, the booking's history showed its re-send timer at 86,400 s).
 * Read from each run's own history: the longest timer it started.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitOrderOutcome, cancelBooking } from '../../src/client';
import { WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import {
  bookingWorkflowId,
  cancelBookingUpdate,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  type OrderWorkflow,
} from '../../src/contract';
import { askedReferences, bookAnswer, ordersAnswer, specOrder, success } from '../fixtures/spec-supplier';
import { bookingRequest } from '../harness/booking';
import { startSpecWorker, type SpecWorker } from '../harness/spec-worker';
import { connectTimeSkipping } from '../harness/temporal';

const CEILING_S = 600;
const tooManyRequests = (retryAfter: string) => ({
  status: 429,
  body: { code: 100000429, msg: 'quota limit exceed' },
  headers: { 'retry-after': retryAfter },
});

let env: TestWorkflowEnvironment;
let rig: SpecWorker;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await startSpecWorker(env, 'retry-after');
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** The longest timer a workflow's latest run started, in seconds. */
async function longestTimerSeconds(workflowId: string): Promise<number> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const timers = (history.events ?? []).flatMap((e) => {
    const t = e.timerStartedEventAttributes?.startToFireTimeout;
    return t ? [Number(t.seconds ?? 0) + (t.nanos ?? 0) / 1e9] : [];
  });
  return Math.max(0, ...timers);
}

test.each([
  ['a day in seconds', '86400'],
  ['a date centuries away', 'Fri, 31 Dec 9999 23:59:59 GMT'],
])('Book refused 429 with Retry-After %s: sent again within the ceiling, and confirmed', async (_what, retryAfter) => {
  const ref = randomUUID();
  let books = 0;
  rig.spec.script({
    book: (body) =>
      body.customerReferenceNo === ref && ++books === 1
        ? tooManyRequests(retryAfter)
        : bookAnswer(specOrder(String(body.customerReferenceNo))),
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  expect(rig.spec.callsOf('book').filter((c) => c.body.customerReferenceNo === ref)).toHaveLength(2);
  const longest = await longestTimerSeconds(bookingWorkflowId(ref));
  expect(longest).toBeGreaterThan(0);
  expect(longest).toBeLessThanOrEqual(CEILING_S);
});

test('a free Cancel refused 429 with Retry-After of an hour is sent again within the ceiling, and the order cancelled', async () => {
  const ref = randomUUID();
  let cancelled = false;
  let cancels = 0;
  rig.spec.script({
    book: (body) => bookAnswer(specOrder(String(body.customerReferenceNo))),
    queryOrders: (body) =>
      askedReferences(body).includes(ref)
        ? ordersAnswer(specOrder(ref, cancelled ? { status: 3, cancelTime: '2030-06-02T09:00:00Z' } : {}))
        : ordersAnswer(),
    cancel: (body) => {
      if (body.customerReferenceNo !== ref) return success({ serviceFee: { currency: 'USD', amount: 0 }, status: 3 });
      if (++cancels === 1) return tooManyRequests('3600');
      cancelled = true;
      return success({ serviceFee: { currency: 'USD', amount: 0 }, status: 3 });
    },
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  // Accepted, then followed by the run's result: waiting on a result is what lets the test server skip time.
  const confirm = await env.client.workflow.startUpdateWithStart(cancelBookingUpdate, {
    args: [{ confirm: true, acceptedFee: quote.quote.fee }],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
    startWorkflowOperation: new WithStartWorkflowOperation<OrderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue: rig.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ customerReferenceNo: ref }],
    }),
  });
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancelled' });
  expect((await confirm.result()).kind).toBe('cancel-requested');
  expect(cancels).toBe(2);
  expect(await longestTimerSeconds(orderWorkflowId(ref))).toBeLessThanOrEqual(CEILING_S);
});
