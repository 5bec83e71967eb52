/**
 * A re-sent Book never ends a booking `failed` while an order may exist. The first Book may have made the
 * order although QueryOrders did not list it for the first 15 minutes (the spec: Book takes 3 to 10 minutes;
 * an order index can lag), so a re-send that is refused (429) or rejected (400) shows only that the re-send
 * made nothing: recovery polls on until QueryOrders settles it or the deadline tells a person.
 *
 * The sandbox's faults for this follow the spec's text: Book answers 429 or 400 with the supplier's error
 * envelope (`{"code":100000429,"msg":"quota limit exceed"}`), and the order made by the first Book is listed
 * only from the Nth QueryOrders naming it (`listAfterQueries`). Bookings run on the time-skipping server with
 * the production schedule (polls at 0, 30, 90, 210, 450, 930 s; Book re-sent at 930 s).
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import {
  book,
  bookingRequest,
  createBookingRig,
  expectAtMostOneOrderPerReference,
  type BookingRig,
} from '../harness/booking';
import { bookingStateQuery, type BookingState } from '../../src/api/contract/index';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await createBookingRig(env, 'resend-wf');
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

const bookCallsFor = (ref: string) => rig.sandbox.calls('book').filter((c) => c.customerReferenceNos?.includes(ref));
const ordersFor = (ref: string) => rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref);
const stateOf = (ref: string): Promise<BookingState> =>
  env.client.workflow.getHandle(`booking:${ref}`).query(bookingStateQuery);

/** The six polls of the first 15 minutes, none of which sees the order. */
const NOT_LISTED_BEFORE_RESEND = [0, 30, 90, 210, 450, 930].map((s) => [s, 'not-found']);

describe('a re-sent Book that makes nothing: recovery polls on', () => {
  // 429: refused before any work (not counted, not retried in place: the next poll may settle it);
  // 400: rejected by the supplier; a code nobody listed: may have acted. Either way the first Book may have.
  test.each([
    ['429', 429, 'refused', 'SupplierRateLimited'],
    ['400', 400, 'rejected', 'SupplierBadRequest'],
    ['unknownCode', 200, 'ambiguous', 'SupplierBusinessError'],
  ])(
    'Book 504 (order made, listed late), re-send answered %s → confirmed, not failed; one order, two Books',
    async (fault, httpStatus, result, errorType) => {
      if (result !== 'ambiguous')
        expectWorkerWarnings(/^WARN Re-sent Book made nothing; the first Book may still have/);
      const request = bookingRequest({
        test: `book=504AfterCreate&bookTimes=1&resend=${fault}&listAfterQueries=7&confirmAfterMs=0`,
      });
      const ref = request.customerReferenceNo;
      const outcome = await book(env, rig, request);
      expect(outcome.kind).toBe('confirmed');
      const state = await stateOf(ref);
      expect(state.polls.map((p) => [p.sinceBookSeconds, p.result])).toEqual([
        ...NOT_LISTED_BEFORE_RESEND,
        // Measured from the re-send: at once, and the order is there.
        [0, 'found'],
      ]);
      expect(state.bookAttempts.map((a) => [a.result, a.error])).toEqual([
        ['ambiguous', 'SupplierGatewayTimeout'],
        [result, errorType],
      ]);
      expect(bookCallsFor(ref).map((c) => c.httpStatus)).toEqual([504, httpStatus]);
      expect(ordersFor(ref)).toHaveLength(1);
    },
  );

  test('re-sends answered 429 and no order ever listed → unresolved at the deadline (a person told), never failed', async () => {
    expectWorkerWarnings(
      /^WARN Re-sent Book made nothing; the first Book may still have/,
      /^ERROR Booking unresolved at the recovery deadline: needs manual follow-up /,
    );
    // Two hours: time for several rounds of 15 minutes of polls and a re-send.
    const request = bookingRequest({
      test: 'book=504BeforeCreate&bookTimes=1&resend=429',
      recovery: { deadlineSeconds: 7200 },
    });
    const ref = request.customerReferenceNo;
    const outcome = await book(env, rig, request);
    expect(outcome.kind).toBe('unresolved');
    if (outcome.kind !== 'unresolved') return;
    // Refused sends made nothing and do not use up maxBookAttempts: Book is tried again every round.
    const results = outcome.bookAttempts.map((a) => a.result);
    expect(results[0]).toBe('ambiguous');
    expect(results.slice(1).every((r) => r === 'refused')).toBe(true);
    expect(results.length).toBeGreaterThanOrEqual(5);
    expect(bookCallsFor(ref)).toHaveLength(results.length);
    // Every re-send is at least 10 minutes after the Book before it.
    const times = outcome.bookAttempts.map((a) => Date.parse(a.at));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(600_000);
    expect(ordersFor(ref)).toHaveLength(0);
  });

  test('a re-send rejected with 400 uses up maxBookAttempts: no third Book, polling to the deadline', async () => {
    expectWorkerWarnings(
      /^WARN Re-sent Book made nothing; the first Book may still have/,
      /^ERROR Booking unresolved at the recovery deadline: needs manual follow-up /,
    );
    const request = bookingRequest({
      test: 'book=504BeforeCreate&bookTimes=1&resend=400',
      recovery: { deadlineSeconds: 7200 },
    });
    const outcome = await book(env, rig, request);
    expect(outcome.kind).toBe('unresolved');
    if (outcome.kind !== 'unresolved') return;
    expect(outcome.bookAttempts.map((a) => a.result)).toEqual(['ambiguous', 'rejected']);
    expect(bookCallsFor(request.customerReferenceNo)).toHaveLength(2);
  });
});

describe('Book answered with an order', () => {
  test('pending order not listed for 15 minutes: never re-sent, confirmed when QueryOrders lists it', async () => {
    // Book answers Confirming; QueryOrders lists the order only from its 8th query (at 2130 s), Confirmed.
    const request = bookingRequest({ test: 'confirmAfterQueries=8&listAfterQueries=8' });
    const ref = request.customerReferenceNo;
    const outcome = await book(env, rig, request);
    expect(outcome.kind).toBe('confirmed');
    const state = await stateOf(ref);
    expect(state.bookAttempts.map((a) => [a.result, a.status])).toEqual([['order', 1]]);
    expect(state.polls.map((p) => [p.sinceBookSeconds, p.result])).toEqual([
      ...NOT_LISTED_BEFORE_RESEND,
      [1530, 'not-found'],
      [2130, 'found'],
    ]);
    expect(bookCallsFor(ref)).toHaveLength(1);
  });
});
