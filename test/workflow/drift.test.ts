/**
 * A supplier whose answers drift from the spec's shapes in every field no decision reads (the sandbox's
 * drift mode: nulls, omitted fields, numbers as strings, unknown fields): bookings end exactly as against
 * clean answers, on the exact poll schedule, and each drifting path is logged once.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDriftReporter } from '../../src/runtime/supplier/drift';
import { connectTimeSkipping } from '../harness/temporal';
import {
  book,
  bookingRequest,
  createBookingRig,
  expectAtMostOneOrderPerReference,
  pollOffsetsFromHistory,
  type BookingRig,
} from '../harness/booking';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
const logged: string[] = [];
const drift = createDriftReporter((_message, meta) => logged.push(`${meta.operation} ${meta.path}`));

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await createBookingRig(env, 'drift-wf', { drift });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

test('a drifting confirmed answer to Book confirms at once, with the order’s references and price', async () => {
  const request = bookingRequest({ test: 'confirmAfterMs=0&drift=1' });
  const outcome = await book(env, rig, request);
  const [order] = rig.sandbox.orders().filter((o) => o.customerReferenceNo === request.customerReferenceNo);
  expect(outcome).toMatchObject({
    kind: 'confirmed',
    order: {
      customerReferenceNo: request.customerReferenceNo,
      status: 2,
      platformReferenceNo: order!.platformReferenceNo,
      // Sent as a number and an amount as text: read, not refused.
      hotelConfirmNo: expect.stringMatching(/^\d+$/),
      price: order!.price,
    },
  });
  expect(logged).toEqual(
    expect.arrayContaining([
      'checkAvail data.roomRatePkg.rateComment',
      'book data.hotelOrder.nightCount',
      'book data.hotelOrder.hotelConfirmNo',
      'book data.hotelOrder.grossRate.amount',
    ]),
  );
});

test('504 after the order was made, drifting QueryOrders answers: confirmed at poll 4, polls at 0, 30, 90, 210 s', async () => {
  const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=4&drift=1' });
  expect((await book(env, rig, request)).kind).toBe('confirmed');
  expect(await pollOffsetsFromHistory(env, `booking:${request.customerReferenceNo}`)).toEqual([0, 30, 90, 210]);
  expect(logged).toEqual(expect.arrayContaining(['queryOrders data.orders[].nightCount']));
});

test('a drifting pending answer is still pending: recovery runs its schedule and confirms', async () => {
  const request = bookingRequest({ test: 'confirmAfterQueries=3&drift=1' });
  expect((await book(env, rig, request)).kind).toBe('confirmed');
  expect(await pollOffsetsFromHistory(env, `booking:${request.customerReferenceNo}`)).toEqual([0, 30, 90]);
});

afterAll(() => {
  // Once per path however many bookings and polls drifted the same way.
  expect(new Set(logged).size).toBe(logged.length);
  expect(drift.counts().get('queryOrders data.orders[].nightCount')).toBeGreaterThanOrEqual(7);
});
