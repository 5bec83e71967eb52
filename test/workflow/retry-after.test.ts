/**
 * A supplier's Retry-After is honoured up to the profile's ceiling (retryAfterCeilingSeconds, 600 s by default),
 * against the supplier written from the spec's text: a 429 asking for a day, or for a date centuries away, on Book
 * or on a free Cancel, is not a day's wait (before, the booking's history showed its re-send timer at 86,400 s).
 * Read from each run's own history: the longest timer it started.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitOrderOutcome, cancelBooking } from '../../src/api/client/index';
import {
  autoCancelSignal,
  bookingWorkflowId,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  type AutoCancel,
  type OrderWorkflow,
} from '../../src/api/contract/index';
import {
  askedReferences,
  bookAnswer,
  ordersAnswer,
  specCheckAvail,
  specOrder,
  success,
} from '../fixtures/spec-supplier';
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

test("a caller's free Cancel refused 429 with Retry-After of an hour is answered at once: refused with the wait, nothing sent, nobody held", async () => {
  const ref = randomUUID();
  let cancels = 0;
  rig.spec.script({
    book: (body) => bookAnswer(specOrder(String(body.customerReferenceNo))),
    queryOrders: (body) => (askedReferences(body).includes(ref) ? ordersAnswer(specOrder(ref)) : ordersAnswer()),
    cancel: (body) => {
      if (body.customerReferenceNo !== ref) return success({ serviceFee: { currency: 'USD', amount: 0 }, status: 3 });
      cancels++;
      return tooManyRequests('3600');
    },
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref }))).toMatchObject({ kind: 'confirmed' });
  const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
  await awaitOrderOutcome(env.client, ref);
  // Before, the caller's update was held while the run waited out the hint (up to the 10-minute window): the free
  // window could close meanwhile. Now the update answers with the first refusal, and no time is skipped for it.
  const answer = await cancelBooking(
    env.client,
    ref,
    { confirm: true, acceptedFee: quote.quote.fee },
    { taskQueue: rig.taskQueue },
  );
  expect(answer).toMatchObject({
    kind: 'cancel-refused',
    reason: expect.stringMatching(/asks to wait 600 s; nothing was sent/),
  });
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancel-refused' });
  expect(cancels).toBe(1);
  expect(await longestTimerSeconds(orderWorkflowId(ref))).toBeLessThanOrEqual(CEILING_S);
});

test("the system's own cancellation refused 429 with Retry-After of an hour is sent again within the ceiling, and the order cancelled", async () => {
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
  // Nobody waits on it: the run keeps sending within the window, each wait cut to the ceiling.
  await env.client.workflow.signalWithStart<OrderWorkflow, [AutoCancel]>(ORDER_WORKFLOW_TYPE, {
    workflowId: orderWorkflowId(ref),
    taskQueue: rig.taskQueue,
    args: [{ customerReferenceNo: ref }],
    signal: autoCancelSignal,
    signalArgs: [{ reason: 'onCancelAfterBook', onlyIfFree: false, origin: 'auto' }],
  });
  expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancelled' });
  expect(cancels).toBe(2);
  expect(await longestTimerSeconds(orderWorkflowId(ref))).toBeLessThanOrEqual(CEILING_S);
});

/**
 * A supplier that answers CheckAvail 429 for about four minutes (an account down or throttled): the booking waits in
 * `checking-availability` (nothing booked, the caller may cancel) and goes on once it answers, confirmed with one
 * order. Before, CheckAvail's 8 attempts (about 2 minutes) ended it `failed`. Refusals are retried for about 10 minutes,
 * as a first Book's are.
 */
test('CheckAvail refused 429 for minutes: the booking waits and is confirmed once the supplier answers', async () => {
  const ref = randomUUID();
  const ratePkgId = `pkg-throttled-${ref.slice(0, 8)}`;
  let checks = 0;
  rig.spec.script({
    checkAvail: (body) =>
      body.ratePkgId === ratePkgId && ++checks <= 10 ? tooManyRequests('1') : specCheckAvail(String(body.ratePkgId)),
    book: (body) => bookAnswer(specOrder(String(body.customerReferenceNo))),
  });
  expect(await rig.book(bookingRequest({ customerReferenceNo: ref, ratePkgId }))).toMatchObject({ kind: 'confirmed' });
  expect(checks).toBe(11);
  expect(rig.spec.callsOf('book').filter((c) => c.body.customerReferenceNo === ref)).toHaveLength(1);
});
