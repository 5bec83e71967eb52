/**
 * How the activities read what a supplier sends, against a supplier written from the spec's text
 * (test/fixtures/spec-supplier.ts), over real HTTP:
 *  - only what decides is strict: the envelope `code`, an order's `status` and `customerReferenceNo`,
 *    CheckAvail's `status` (and its price, which the price rule reads, must be a readable amount);
 *  - every other field of another JSON type is read when its value is plain (a whole number as text, a
 *    decimal string as a number), else left out; each is drift, reported once per path, never the value;
 *  - several orders under one reference: a Confirmed one is read, else one still pending, and the
 *    conflict is an ERROR line (references and statuses only) and a counter.
 */
import { randomUUID } from 'node:crypto';
import type { MetricCounter, MetricMeter, MetricTags } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities/booking';
import type { BookInput } from '../../src/activities/types';
import { createOrderActivities } from '../../src/activities/order';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { createDriftReporter } from '../../src/runtime/supplier/drift';
import { staticToken } from '../../src/runtime/supplier/token';
import {
  bookAnswer,
  ORDER_CONFIRMED,
  ORDER_CONFIRMING,
  ORDER_FAILED,
  ordersAnswer,
  specCheckAvail,
  specOrder,
  startSpecSupplier,
  success,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { expectWorkerWarnings, workerLogger, workerLogLines } from '../harness/quiet-worker-logs';
import { bookRequest, fastProfile, Resources } from './helpers';

const res = new Resources();
afterEach(() => res.closeAll());

let spec: SpecSupplier;
let driftLines: string[];
let driftPaths: string[];
let activities: ReturnType<typeof createActivities>;
let orderActivities: ReturnType<typeof createOrderActivities>;
let reference: string;

beforeEach(async () => {
  spec = await startSpecSupplier();
  res.add(() => spec.close());
  driftLines = [];
  driftPaths = [];
  const drift = createDriftReporter((message, meta) => {
    driftLines.push(message);
    driftPaths.push(`${meta.operation} ${meta.path}`);
  });
  const client = res.client({ baseUrl: spec.url, tokens: staticToken('spec-token'), drift });
  activities = createActivities({ supplier: client, profile: fastProfile });
  // Cancel makes no Temporal call: the order activities' client is never reached here.
  orderActivities = createOrderActivities({ supplier: client, profile: fastProfile, client: undefined as never });
  reference = randomUUID();
});

/** A counter meter that keeps what was added, by metric name. */
function recordingMeter(): { meter: MetricMeter; added: Array<{ name: string; value: number; tags: MetricTags }> } {
  const added: Array<{ name: string; value: number; tags: MetricTags }> = [];
  const counter = (name: string, base: MetricTags = {}): MetricCounter => ({
    name,
    unit: undefined,
    description: undefined,
    kind: 'counter',
    valueType: 'int',
    add: (value, tags = {}) => void added.push({ name, value, tags: { ...base, ...tags } }),
    withTags: (tags) => counter(name, { ...base, ...tags }),
  });
  const meter: MetricMeter = {
    createCounter: (name) => counter(name),
    createHistogram: () => {
      throw new Error('not used');
    },
    createGauge: () => {
      throw new Error('not used');
    },
    withTags: () => meter,
  };
  return { meter, added };
}

/** Runs an activity the way a worker does, with the worker's logger and the given meter. */
function inActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>, meter?: MetricMeter) {
  return (...args: A): Promise<R> =>
    new MockActivityEnvironment(undefined, { logger: workerLogger(), ...(meter ? { metricMeter: meter } : {}) }).run(
      fn,
      ...args,
    );
}

/**
 * This test's worker log lines matching `pattern` (they name its reference), once one arrives: the runtime
 * logger may deliver a line later, and a line of an earlier test after this one started.
 */
async function linesMatching(pattern: RegExp, waitMs = 2_000): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lines = workerLogLines().filter((l) => pattern.test(l) && l.includes(reference));
    if (lines.length > 0 || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const bookInput = (): BookInput => ({
  ...bookRequest({ customerReferenceNo: reference }),
  context: { sessionId: 'sess-spec', traceId: 'trace-spec' },
});
const lookUp = () => activities.queryOrder({ customerReferenceNo: reference, traceId: 'trace-spec' });

describe('informational fields of another JSON type are read, reported as drift', () => {
  test('Book: numeric hotelConfirmNo, platformReferenceNo and supplierReferenceNo → a confirmed order, references as text', async () => {
    spec.script({
      book: () =>
        bookAnswer(
          specOrder(reference, { hotelConfirmNo: 12345678, platformReferenceNo: 2030060101, supplierReferenceNo: 987 }),
        ),
    });
    expect(await activities.book(bookInput())).toMatchObject({
      kind: 'order',
      order: {
        customerReferenceNo: reference,
        state: 'confirmed',
        status: ORDER_CONFIRMED,
        hotelConfirmNo: '12345678',
        platformReferenceNo: '2030060101',
        supplierReferenceNo: '987',
        price: { currency: 'USD', amount: 240 },
      },
    });
    expect(driftPaths.sort()).toEqual([
      'book data.hotelOrder.hotelConfirmNo',
      'book data.hotelOrder.platformReferenceNo',
      'book data.hotelOrder.supplierReferenceNo',
    ]);
    // Paths, never values.
    expect(driftLines.join('\n')).not.toMatch(/12345678|2030060101|987/);
  });

  test('QueryOrders: amounts as decimal strings are parsed; each path is reported once however often it drifts', async () => {
    const drifting = () =>
      specOrder(reference, {
        hotelConfirmNo: 12345678,
        grossRate: { currency: 'USD', amount: '120.50' },
        netRate: { currency: 'USD', amount: '100' },
        nightCount: '2',
      });
    spec.script({ queryOrders: () => ordersAnswer(drifting()) });
    const found = await lookUp();
    expect(found).toMatchObject({
      kind: 'found',
      order: { state: 'confirmed', hotelConfirmNo: '12345678', price: { currency: 'USD', amount: 120.5 } },
    });
    await lookUp();
    expect(driftPaths.sort()).toEqual([
      'queryOrders data.orders[].grossRate.amount',
      'queryOrders data.orders[].hotelConfirmNo',
      'queryOrders data.orders[].netRate.amount',
      'queryOrders data.orders[].nightCount',
    ]);
  });

  test('a cancel fee as a decimal string is read, so the order workflow can quote it', async () => {
    const room = (specOrder(reference).rooms as Array<Record<string, unknown>>)[0]!;
    const order = specOrder(reference, {
      rooms: [{ ...room, cancelFees: [{ until: '2030-06-10T12:00:00Z', fee: { currency: 'USD', amount: '60.00' } }] }],
    });
    spec.script({ queryOrders: () => ordersAnswer(order) });
    expect(await lookUp()).toMatchObject({
      kind: 'found',
      order: { cancelPolicy: [{ fees: [{ until: '2030-06-10T12:00:00Z', fee: { currency: 'USD', amount: 60 } }] }] },
    });
  });

  test('values that are not plain are left out, never guessed: a non-numeric amount, an unsafe integer, a time as a number', async () => {
    const order = specOrder(reference, {
      grossRate: { currency: 'USD', amount: 'about 240' },
      netRate: undefined,
      // Beyond 2^53 JSON.parse has already changed the digits: as text it would be another reference.
      platformReferenceNo: 12345678901234567890,
      checkIn: 20300612,
      bookingTime: 1906977600,
    });
    spec.script({ queryOrders: () => ordersAnswer(order) });
    const found = await lookUp();
    expect(found).toMatchObject({
      kind: 'found',
      order: { state: 'confirmed', supplierReferenceNo: 'SRN-20300601-1' },
    });
    if (found.kind !== 'found') return;
    expect(found.order.price).toBeUndefined();
    expect(found.order.platformReferenceNo).toBeUndefined();
    expect(found.order.checkIn).toBeUndefined();
    expect(driftPaths.sort()).toEqual([
      'queryOrders data.orders[].bookingTime',
      'queryOrders data.orders[].checkIn',
      'queryOrders data.orders[].grossRate.amount',
      'queryOrders data.orders[].platformReferenceNo',
    ]);
  });

  test('CheckAvail: a price amount as a decimal string is the price the rule compares', async () => {
    const answer = specCheckAvail() as { data: { roomRatePkg: { totalRate: Record<string, unknown> } } };
    answer.data.roomRatePkg.totalRate.grossRate = { currency: 'USD', amount: '240.00' };
    spec.script({ checkAvail: () => answer });
    const input = { ratePkgId: 'pkg-standard-double', context: { sessionId: 'sess-spec', traceId: 'trace-spec' } };
    expect(await activities.checkAvail(input)).toEqual({
      kind: 'available',
      price: { currency: 'USD', amount: 240 },
    });
    expect(driftPaths).toEqual(['checkAvail data.roomRatePkg.totalRate.grossRate.amount']);
  });

  test('Cancel: a service fee as a decimal string is read', async () => {
    spec.script({ cancel: () => success({ serviceFee: { currency: 'USD', amount: '15.00' }, status: 3 }) });
    expect(
      await orderActivities.sendCancel({
        customerReferenceNo: reference,
        supplierReferenceNo: 'SRN-1',
        reason: 'guest cancelled',
        context: { sessionId: 'sess-spec', traceId: 'trace-spec' },
      }),
    ).toEqual({ kind: 'accepted', status: 3, serviceFee: { currency: 'USD', amount: 15 } });
  });
});

describe('what decides stays strict: never coerced into deciding', () => {
  test('an order status "2": Book may have made an order, QueryOrders cannot read it', async () => {
    spec.script({
      book: () => bookAnswer(specOrder(reference, { status: '2' })),
      queryOrders: () => ordersAnswer(specOrder(reference, { status: '2' })),
    });
    expect(await activities.book(bookInput())).toMatchObject({
      kind: 'ambiguous',
      errorType: 'SupplierInvalidResponse',
    });
    await expect(lookUp()).rejects.toMatchObject({ type: 'SupplierInvalidResponse' });
  });

  test('a numeric customerReferenceNo: the order cannot be matched, so the lookup cannot say "not found"', async () => {
    spec.script({ queryOrders: () => ordersAnswer(specOrder(reference, { customerReferenceNo: 12345 })) });
    await expect(lookUp()).rejects.toMatchObject({ type: 'SupplierInvalidResponse' });
  });

  test('an envelope code "0" and a CheckAvail status "1" are unreadable answers', async () => {
    spec.script({ queryOrders: () => ({ code: '0', msg: 'Success', data: { orders: [] } }) });
    await expect(lookUp()).rejects.toMatchObject({ type: 'SupplierInvalidResponse' });
    const answer = specCheckAvail() as { data: Record<string, unknown> };
    answer.data.status = '1';
    spec.script({ checkAvail: () => answer });
    const input = { ratePkgId: 'pkg-standard-double', context: { sessionId: 'sess-spec', traceId: 'trace-spec' } };
    await expect(activities.checkAvail(input)).rejects.toMatchObject({ type: 'SupplierInvalidResponse' });
  });

  test('a CheckAvail price that is not a plain amount is unreadable, never replaced by the net rate', async () => {
    const answer = specCheckAvail() as { data: { roomRatePkg: { totalRate: Record<string, unknown> } } };
    answer.data.roomRatePkg.totalRate.grossRate = { currency: 'USD', amount: 'about 240' };
    spec.script({ checkAvail: () => answer });
    const input = { ratePkgId: 'pkg-standard-double', context: { sessionId: 'sess-spec', traceId: 'trace-spec' } };
    await expect(activities.checkAvail(input)).rejects.toMatchObject({ type: 'SupplierInvalidResponse' });
  });
});

describe('several orders under one reference', () => {
  const CONFLICT = /^ERROR Supplier lists 2 orders under one customer reference/;
  const order = (status: number, n: number) =>
    specOrder(reference, { status, platformReferenceNo: `PRN-${n}`, supplierReferenceNo: `SRN-${n}` });

  test.each([
    ['Failed, then Confirmed', [ORDER_FAILED, ORDER_CONFIRMED]],
    ['Confirmed, then Failed', [ORDER_CONFIRMED, ORDER_FAILED]],
  ])('%s → the Confirmed one; one ERROR line and the conflict counter', async (_name, statuses) => {
    expectWorkerWarnings(CONFLICT);
    spec.script({ queryOrders: () => ordersAnswer(...statuses.map((s, i) => order(s, i + 1))) });
    const { meter, added } = recordingMeter();
    const found = await inActivity(activities.queryOrder, meter)({ customerReferenceNo: reference, traceId: 't' });
    const confirmedAt = statuses.indexOf(ORDER_CONFIRMED) + 1;
    expect(found).toMatchObject({
      kind: 'found',
      order: { state: 'confirmed', platformReferenceNo: `PRN-${confirmedAt}` },
    });
    const lines = await linesMatching(CONFLICT);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('PRN-1');
    // References and statuses only: no guest's or holder's data.
    expect(lines[0]).not.toMatch(/Ada|Byron|example\.com|2079460001/);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ name: 'booking_order_conflicts', value: 1 });
    // Its labels are the SDK's activity labels: no reference (unbounded) among them.
    expect(JSON.stringify(added[0]!.tags)).not.toContain(reference);
  });

  test('Failed beside one still Confirming → pending (it may yet be confirmed), not failed', async () => {
    expectWorkerWarnings(CONFLICT);
    spec.script({ queryOrders: () => ordersAnswer(order(ORDER_FAILED, 1), order(ORDER_CONFIRMING, 2)) });
    const found = await inActivity(activities.queryOrder)({ customerReferenceNo: reference, traceId: 't' });
    expect(found).toMatchObject({ kind: 'found', order: { state: 'pending', platformReferenceNo: 'PRN-2' } });
  });

  test('through the QueryOrders coalescer as well', async () => {
    expectWorkerWarnings(CONFLICT);
    const client = res.client({ baseUrl: spec.url, tokens: staticToken('spec-token') });
    const orders = createQueryOrdersCoalescer({ supplier: client, profile: fastProfile });
    res.add(async () => orders.close());
    const coalesced = createActivities({ supplier: client, profile: fastProfile, orders });
    spec.script({ queryOrders: () => ordersAnswer(order(ORDER_FAILED, 1), order(ORDER_CONFIRMED, 2)) });
    const found = await inActivity(coalesced.queryOrder)({ customerReferenceNo: reference, traceId: 't' });
    expect(found).toMatchObject({ kind: 'found', order: { state: 'confirmed', platformReferenceNo: 'PRN-2' } });
  });

  test('one order per reference is no conflict: nothing logged', async () => {
    spec.script({ queryOrders: () => ordersAnswer(order(ORDER_FAILED, 1)) });
    const found = await inActivity(activities.queryOrder)({ customerReferenceNo: reference, traceId: 't' });
    expect(found).toMatchObject({ kind: 'found', order: { state: 'failed' } });
    expect(await linesMatching(CONFLICT, 300)).toEqual([]);
  });
});
