/**
 * Supplier callbacks end to end on the dev server: the sandbox books with the worker's callback URL and sends
 * signed order-status callbacks to the real receiver (src/servers/callbacks), which signals the running booking.
 * A callback speeds recovery up (a poll at once instead of at the next scheduled time) but never decides it:
 * the booking's outcome always comes from a QueryOrders poll, so a callback that lies is only an early poll,
 * and one that is not signed never reaches the workflow.
 *
 * Bookings here answer Book 504 (made, outcome unknown), so they recover on the production schedule: a poll
 * at once, then one 30 s after Book. Assertions are on poll triggers and counts, never on wall time.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  accountCallbackPath,
  CALLBACK_PATH,
  startCallbackReceiver,
  type CallbackReceiver,
} from '../../src/servers/callbacks/server';
import { accountCallbackUrl } from '../../src/runtime/config/accounts';
import { temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import { bookingStateQuery, bookingWorkflowId, type BookingState } from '../../src/api/contract/index';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import {
  bookingRequest,
  createBookingRig,
  eventually,
  expectAtMostOneOrderPerReference,
  startBooking,
  type BookingRig,
} from '../harness/booking';
import { connectDevServer } from '../harness/temporal';
import { parseScrape, sampleValue } from '../fixtures/prometheus';

const SECRET = `callbacks-e2e-${randomUUID()}`;
/** The secret of the supplier account `acme`, whose callbacks arrive on its own path. */
const ACME_SECRET = `callbacks-e2e-acme-${randomUUID()}`;
const { confirming, confirmed, failed } = defaultSupplierProfile.orderStatus;

let env: TestWorkflowEnvironment;
let receiver: CallbackReceiver;
/** Its worker sends the receiver's URL with Book; its sandbox signs callbacks with SECRET. */
let rig: BookingRig;
/** The same without callbacks: how a booking recovers on polling alone. */
let plain: BookingRig;
/** A supplier account's: its Books carry the account's callback URL, its sandbox signs with ACME_SECRET. */
let acme: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  receiver = await startCallbackReceiver({
    port: 0,
    profile: defaultSupplierProfile,
    secret: SECRET,
    accounts: [{ id: 'acme', profile: defaultSupplierProfile, secret: ACME_SECRET }],
    // Order checks start on the rig's queue, made below with this receiver's URL.
    target: temporalCallbackTarget(env.client, {
      get taskQueue() {
        return rig.taskQueue;
      },
    }),
  });
  rig = await createBookingRig(env, 'callbacks-e2e', {
    callbacks: { url: `${receiver.url}${CALLBACK_PATH}`, secret: SECRET },
  });
  plain = await createBookingRig(env, 'callbacks-e2e-plain');
  acme = await createBookingRig(env, 'callbacks-e2e-acme', {
    callbacks: { url: accountCallbackUrl(`${receiver.url}${CALLBACK_PATH}`, 'acme'), secret: ACME_SECRET },
  });
});

afterAll(async () => {
  await rig?.close();
  await plain?.close();
  await acme?.close();
  await receiver?.close();
  await env?.teardown();
});

const statesOf = (r: BookingRig, ref: string) =>
  r.sandbox.calls('queryOrders').filter((c) => c.customerReferenceNos?.includes(ref) && c.httpStatus === 200);

async function pollsAtLeast(handle: { query: (q: typeof bookingStateQuery) => Promise<BookingState> }, n: number) {
  return eventually(async () => {
    const state = await handle.query(bookingStateQuery);
    return state.polls.length >= n ? state : undefined;
  }, 30_000);
}

function postCallback(body: object, signature?: string): Promise<Response> {
  return fetch(`${receiver.url}${CALLBACK_PATH}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(signature ? { 'x-signature': signature } : {}) },
  });
}
const sign = (body: object, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(JSON.stringify(body)).digest('hex')}`;

test('a callback brings the deciding poll forward: confirmed by a QueryOrders poll the hint triggered', async () => {
  const request = bookingRequest({ test: 'book=504AfterCreate&outcome=pending' });
  const ref = request.customerReferenceNo;
  const handle = await startBooking(env, rig, request);
  const first = await pollsAtLeast(handle, 1);
  expect(first.polls[0]).toMatchObject({ trigger: 'schedule', result: 'found', status: confirming });
  // The next scheduled poll is 30 s after Book; the hotel confirms now, and the sandbox calls back.
  expect(Date.parse(first.nextPollAt!) - Date.parse(first.polls[0]!.at)).toBeGreaterThanOrEqual(29_000);
  expect(rig.sandbox.setOrderStatus(ref, confirmed)).toBe(true);

  const outcome = await handle.result();
  expect(outcome).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: confirmed } });
  const state = await handle.query(bookingStateQuery);
  expect(state.polls.map((p) => [p.trigger, p.result, p.status])).toEqual([
    ['schedule', 'found', confirming],
    ['supplier-hint', 'found', confirmed],
  ]);
  // Decided by QueryOrders: one request per poll, the second after the callback was delivered.
  expect(statesOf(rig, ref)).toHaveLength(2);
  // The receiver signals before it answers, so the sandbox may record the 200 after the booking has ended.
  const delivered = await eventually(async () => {
    const attempts = rig.sandbox.callbacks().filter((c) => c.customerReferenceNo === ref);
    return attempts.length > 0 ? attempts : undefined;
  });
  expect(delivered).toEqual([expect.objectContaining({ status: confirmed, httpStatus: 200, attempt: 1 })]);
  expect(receiver.stats().signalled.booking).toBeGreaterThanOrEqual(1);
  expectAtMostOneOrderPerReference(rig.sandbox);
});

test('without callbacks the same booking waits for its scheduled poll', async () => {
  // A test schedule of a poll every 5 s instead of the spec's 30 s: what is checked is that only the schedule
  // polls (no callback, no hint), and that the deciding poll came no sooner than its time.
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { testing: true, delaysSeconds: [5], repeatEverySeconds: 5 },
  });
  const ref = request.customerReferenceNo;
  const handle = await startBooking(env, plain, request);
  await pollsAtLeast(handle, 1);
  expect(plain.sandbox.setOrderStatus(ref, confirmed)).toBe(true);

  const outcome = await handle.result();
  expect(outcome.kind).toBe('confirmed');
  const state = await handle.query(bookingStateQuery);
  // On a slow machine the status may change after the 5 s poll: more polls, all scheduled, the last one deciding.
  expect(state.polls.map((p) => p.trigger)).toEqual(state.polls.map(() => 'schedule'));
  expect(state.polls[0]!.status).toBe(confirming);
  expect(state.polls.at(-1)!.status).toBe(confirmed);
  expect(state.polls.at(-1)!.sinceBookSeconds).toBeGreaterThanOrEqual(5);
  expect(plain.sandbox.callbacks()).toEqual([]);
});

test('a lying callback is only an early poll, and an unsigned or wrongly signed one never reaches the booking', async () => {
  const request = bookingRequest({ test: 'book=504AfterCreate&outcome=pending' });
  const ref = request.customerReferenceNo;
  const handle = await startBooking(env, rig, request);
  await pollsAtLeast(handle, 1);
  const before = receiver.stats();

  // Forged: no signature, or signed with another secret. Refused before Temporal is asked.
  const lie = { customerReferenceNo: ref, status: confirmed };
  expect((await postCallback(lie)).status).toBe(401);
  expect((await postCallback(lie, sign(lie, 'not-the-shared-secret-at-all'))).status).toBe(401);
  // Signed, but false: the supplier still has the order Confirming.
  const answer = await postCallback(lie, sign(lie));
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ accepted: true, matched: 'booking' });

  const afterLie = await pollsAtLeast(handle, 2);
  expect(afterLie.stage).toBe('recovering');
  expect(afterLie.polls.map((p) => [p.trigger, p.result, p.status])).toEqual([
    ['schedule', 'found', confirming],
    ['supplier-hint', 'found', confirming],
  ]);
  const stats = receiver.stats();
  expect(stats.unverified - before.unverified).toBe(2);
  expect(stats.signalled.booking - before.signalled.booking).toBe(1);
  // The same counts on the receiver's Prometheus endpoint.
  const scrape = parseScrape(await (await fetch(`${receiver.adminUrl}/metrics`)).text());
  expect(sampleValue(scrape, 'booking_callbacks_total', { result: 'unverified' })).toBe(stats.unverified);
  expect(sampleValue(scrape, 'booking_callbacks_total', { result: 'signalled-booking' })).toBe(stats.signalled.booking);

  // The hotel turns it down. The sandbox's own callback comes within the minute of the lie's poll, so it waits for
  // the poll due at 30 s, which decides: hint polls are a minute apart at least.
  expect(rig.sandbox.setOrderStatus(ref, failed)).toBe(true);
  const outcome = await handle.result();
  expect(outcome).toMatchObject({ kind: 'failed', order: { status: failed } });
  const state = await handle.query(bookingStateQuery);
  expect(state.polls.map((p) => [p.trigger, p.status])).toEqual([
    ['schedule', confirming],
    ['supplier-hint', confirming],
    ['schedule', failed],
  ]);
  expect(statesOf(rig, ref)).toHaveLength(3);
});

test("an account's callback arrives on its own path, verified with its secret, and the hint names the account", async () => {
  const request = bookingRequest({ test: 'book=504AfterCreate&outcome=pending' });
  const ref = request.customerReferenceNo;
  const handle = await startBooking(env, acme, request);
  await pollsAtLeast(handle, 1);
  // Signed with the shared secret, the account's path refuses it.
  const lie = { customerReferenceNo: ref, status: confirmed };
  const forged = await fetch(`${receiver.url}${accountCallbackPath('acme')}`, {
    method: 'POST',
    body: JSON.stringify(lie),
    headers: { 'content-type': 'application/json', 'x-signature': sign(lie) },
  });
  expect(forged.status).toBe(401);
  expect(acme.sandbox.setOrderStatus(ref, confirmed)).toBe(true);

  expect(await handle.result()).toMatchObject({ kind: 'confirmed', order: { status: confirmed } });
  const state = await handle.query(bookingStateQuery);
  expect(state.polls.map((p) => [p.trigger, p.status])).toEqual([
    ['schedule', confirming],
    ['supplier-hint', confirmed],
  ]);
  const delivered = await eventually(async () => {
    const attempts = acme.sandbox.callbacks().filter((c) => c.customerReferenceNo === ref);
    return attempts.length > 0 ? attempts : undefined;
  });
  expect(delivered).toEqual([expect.objectContaining({ status: confirmed, httpStatus: 200, attempt: 1 })]);
  // The signal in the booking's history says which account the callback came by.
  const history = await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
  const signals = (history.events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes ?? []);
  const payload = signals.find((a) => a.signalName === 'supplierOrderUpdate')!.input!.payloads![0]!;
  expect(JSON.parse(Buffer.from(payload.data!).toString())).toEqual({
    customerReferenceNo: ref,
    status: confirmed,
    supplier: 'acme',
  });
  // Counted on the account's series, known from the start: the forged one refused and the sandbox's delivered.
  const scrape = parseScrape(await (await fetch(`${receiver.adminUrl}/metrics`)).text());
  const onAcme = (result: string) =>
    sampleValue(scrape, 'booking_callbacks_total', { result, supplier_account: 'acme' });
  expect(onAcme('unverified')).toBe(1);
  expect(onAcme('signalled-booking')).toBe(1);
  expect(scrape.samples).toContainEqual({
    name: 'booking_callbacks_total',
    labels: { result: 'unknown-reference', supplier_account: 'acme' },
    value: 0,
  });
});
