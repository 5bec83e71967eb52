/**
 * Independent check of #45 (long Retry-After answers), written without reading the product's code or its tests.
 * The booking worker runs as `npm run worker` does (a process configured by its documented environment) against a
 * supplier written from the spec's text (../../integration/independent/supplier.ts) on a time-skipping server of
 * this file's own, so a day can pass in seconds.
 *
 * What the docs promise (docs/booking-lifecycle.md, "The Book rule" and "The Cancel rule"; docs/configuration.md,
 * "The supplier profile"):
 * - a first Book refused with 429 is sent again "after the Retry-After hint (cut to the profile's
 *   `retryAfterCeilingSeconds`, 600 s, and to what is left of the window) ... for up to 10 minutes, then ends
 *   `failed`"; "a 429 asking for a day waits 10 minutes";
 * - a caller's Cancel refused with 429: "at most 10 s of pauses, then `cancel-refused` with the supplier's wait".
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ownTimeSkipping } from '../../harness/temporal';
import { startWorkerProcess, type WorkerProcess } from '../../harness/worker-process';
import {
  approvePriceChange,
  awaitOrderOutcome,
  awaitOutcome,
  cancelBooking,
  getBookingState,
  startBooking,
} from '../../../src/api/client/index';
import { rateLimited, startIndependentSupplier, type SpecSupplier } from '../../integration/independent/supplier';

jest.setTimeout(25_000);

let env: TestWorkflowEnvironment;
let supplier: SpecSupplier;
let worker: WorkerProcess;
const taskQueue = `indep-retry-after-${randomUUID().slice(0, 8)}`;
// The client helper starts bookings on BOOKING_TASK_QUEUE (clients/typescript/README.md); Jest gives this file its own env.
process.env.BOOKING_TASK_QUEUE = taskQueue;

beforeAll(async () => {
  env = await ownTimeSkipping();
  supplier = await startIndependentSupplier();
  worker = await startWorkerProcess(
    { temporalAddress: env.address, supplierUrl: supplier.url },
    {
      BOOKING_TASK_QUEUE: taskQueue,
      // The profile's documented defaults, nothing of the sandbox's: this supplier follows supplier-facts.md.
      SUPPLIER_PROFILE: '{}',
      RECONCILIATION_SCHEDULE: 'off',
    },
    'Worker polling task queue',
  );
});

afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await supplier?.close();
  await env?.teardown();
});

afterEach(() => {
  supplier.always.book = undefined;
  supplier.always.cancel = undefined;
  supplier.script.book = [];
});

function request(): Parameters<typeof startBooking>[1] {
  return {
    customerReferenceNo: randomUUID(),
    ratePkgId: 'pkg-indep-1',
    holder: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: { countryCode: 'GB', number: '2079460000' },
    },
    guests: [{ roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false }],
  };
}

/** When each Book activity was scheduled, in seconds of the server's clock (the skipped one), from the history. */
async function bookSendsAt(workflowId: string): Promise<number[]> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .filter((e) => /book/i.test(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
    .map((e) => Number(e.eventTime!.seconds) + (e.eventTime!.nanos ?? 0) / 1e9);
}

const bookRequests = (ref: string): number =>
  supplier.requests.filter((r) => r.path === '/api/trade/book' && r.body.customerReferenceNo === ref).length;

const waitFor = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
};

// First: its free window is read by the workflow's clock, which the later tests move by skipping time.
test("a caller's free Cancel answered 429 with Retry-After: 3600: answered without the hour's wait, cancel-refused, nothing charged", async () => {
  const req = request();
  const ref = req.customerReferenceNo;
  await startBooking(env.client, req);
  // Read by query, not by awaiting the result: awaiting lets the server skip time, and it moved the workflow clock
  // ten years past this booking's free window while the result came back (seen in this file's first runs).
  let state = await getBookingState(env.client, ref);
  while (state.stage !== 'completed') state = await getBookingState(env.client, ref);
  expect(supplier.ordersFor(ref)[0]?.status).toBe(2);

  const quoted = await cancelBooking(env.client, ref, { confirm: false });
  expect(quoted.kind).toBe('quote');
  expect(quoted.quote.basis).toBe('free');
  supplier.always.cancel = rateLimited('3600');
  // The update is answered while time stands still (only awaiting a result lets the server skip time): a Cancel
  // that held it for the hour would never answer here.
  const answer = await cancelBooking(env.client, ref, { confirm: true, acceptedFee: quoted.quote.fee });
  expect(answer.kind).toBe('cancel-refused');
  const ended = await awaitOrderOutcome(env.client, ref);
  expect(ended.kind).toBe('cancel-refused');
  const cancels = supplier.requests.filter((r) => r.path === '/api/trade/cancel' && r.body.customerReferenceNo === ref);
  expect(cancels.length).toBeGreaterThanOrEqual(1);
  // Only 429s were answered: the order stands, uncharged, and a person or the caller decides what next.
  expect(supplier.ordersFor(ref)[0]!.status).toBe(2);
});

test('Book answered 429 with Retry-After: 86400 every time: no wait past 600 s, a caller answered during it, ends failed within 10 minutes, no order', async () => {
  supplier.always.book = rateLimited('86400');
  const req = request();
  const ref = req.customerReferenceNo;
  await startBooking(env.client, req);
  await waitFor(() => bookRequests(ref) >= 1);

  // During the wait (time does not move while nobody awaits a result): the state shows it, and a caller's request
  // is answered now, not after the wait.
  let waiting = await getBookingState(env.client, ref);
  while (!waiting.nextBookAt) waiting = await getBookingState(env.client, ref);
  const firstSend = (await bookSendsAt(`booking:${ref}`))[0]!;
  expect(Date.parse(waiting.nextBookAt) / 1000 - firstSend).toBeLessThanOrEqual(600 + 5);
  await expect(
    approvePriceChange(env.client, ref, { approved: true, price: { currency: 'USD', amount: 180 } }),
  ).rejects.toThrow();

  const outcome = await awaitOutcome(env.client, ref);
  expect(outcome.kind).toBe('failed');
  const sends = await bookSendsAt(`booking:${ref}`);
  expect(sends.length).toBeGreaterThanOrEqual(1);
  for (let i = 1; i < sends.length; i++) expect(sends[i]! - sends[i - 1]!).toBeLessThanOrEqual(600 + 5);
  // "for up to 10 minutes": no Book goes out later than 10 minutes after the first.
  expect(sends.at(-1)! - sends[0]!).toBeLessThanOrEqual(600 + 5);
  expect(supplier.ordersFor(ref)).toHaveLength(0);
});

test('Book answered once 429 with a far-future HTTP date: sent again within 600 s, confirmed, one order', async () => {
  supplier.script.book = [rateLimited(new Date(Date.now() + 365 * 86_400_000).toUTCString())];
  const req = request();
  const ref = req.customerReferenceNo;
  await startBooking(env.client, req);
  const outcome = await awaitOutcome(env.client, ref);
  expect(outcome.kind).toBe('confirmed');
  const sends = await bookSendsAt(`booking:${ref}`);
  expect(sends).toHaveLength(2);
  expect(sends[1]! - sends[0]!).toBeLessThanOrEqual(600 + 5);
  expect(supplier.ordersFor(ref)).toHaveLength(1);
});
