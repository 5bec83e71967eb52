/**
 * The sweep's listing stays small: every listing's result is recorded in the sweep's history, where Temporal warns
 * from 1 MB and refuses a payload over 2 MB. Orders as the sandbox reports them (full HotelOrders: holder, rooms,
 * rates, cancel fees), listed by the real activity through a supplier that answers from memory.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createReconciliationActivities } from '../../src/activities/sweep';
import type { ListOrdersResult } from '../../src/activities/types';
import { viewOf } from '../../src/activities/shared';
import {
  checkInHalves,
  halves,
  MIN_SLICE_MS,
  SWEEP_SLICE_CEILING,
  SWEEP_SLICE_TOO_LARGE,
} from '../../src/runtime/rules/sweep-listing';
import { SupplierError } from '../../src/runtime/supplier/errors';
import { defaultSupplierProfile, SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import type { HotelOrder } from '../../src/runtime/supplier/schemas';
import { OrderStore } from '../../dev/sandbox/store';
import { guests, holder } from '../harness/booking';

const profile = defaultSupplierProfile;
/** A supplier whose answers hold more than the ceiling: the tests of the ceiling and of the listing's size. */
const bigPages = SupplierProfile.parse({ queryOrders: { pageSize: 10_000 } });

/** `n` confirmed orders as the sandbox reports them, with a reference as long as a UUID. */
function sandboxOrders(n: number): HotelOrder[] {
  const store = new OrderStore(profile, () => Date.now() - 60_000);
  return Array.from({ length: n }, () =>
    store.toHotelOrder(
      store.create({
        customerReferenceNo: randomUUID(),
        ratePkgId: 'pkg-sweep',
        sessionId: 's-sweep',
        clientKey: 'sandbox-app',
        outcome: 'confirmed',
        confirmAfterMs: 0,
        price: { currency: 'USD', amount: 241.5 },
        holder,
        guests,
        test: '',
      }),
    ),
  );
}

/** What the listing activity makes of one answer (orders, or a thrown error) under a profile. */
function listing(
  answer: HotelOrder[] | { orders: HotelOrder[]; unreadable: number } | Error,
  { sliceCeiling, profile: listed = bigPages }: { sliceCeiling?: number; profile?: SupplierProfile } = {},
): Promise<ListOrdersResult> {
  const supplier: Pick<SupplierClient, 'queryOrders'> = {
    queryOrders: async () => {
      if (answer instanceof Error) throw answer;
      if (Array.isArray(answer)) return { orders: answer, unreadable: [] };
      return {
        orders: answer.orders,
        unreadable: Array.from({ length: answer.unreadable }, () => ({ issues: ['x'] })),
      };
    },
  };
  const { listOrdersBooked } = createReconciliationActivities({
    supplier,
    profile: listed,
    temporal: { services: {} as never, namespace: 'default' },
    ...(sliceCeiling !== undefined ? { sliceCeiling } : {}),
  });
  const input = { start: '2026-11-24T10:00:00.000Z', end: '2026-11-24T11:00:00.000Z', traceId: 'sweep-test' };
  // The activity's failure is the expected outcome of some tests: its WARN line is left out.
  const logger = new DefaultLogger('ERROR', () => undefined);
  return new MockActivityEnvironment(undefined, { logger }).run(listOrdersBooked, input);
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

test('3,000 orders list in well under 1 MB: only what the sweep reads of each', async () => {
  const orders = sandboxOrders(3_000);
  const result = await listing(orders);
  expect(result.orders).toHaveLength(3_000);
  expect(Object.keys(result.orders[0]!).sort()).toEqual(
    ['customerReferenceNo', 'platformReferenceNo', 'state', 'status', 'supplierReferenceNo'].sort(),
  );
  expect(result.orders[0]).toMatchObject({ status: profile.orderStatus.confirmed, state: 'confirmed' });
  const perOrder = bytes(result) / 3_000;
  // 166 bytes an order here, where the full order views listed before took 485.
  expect(perOrder).toBeLessThan(200);
  expect(perOrder * 2.5).toBeLessThan(bytes(orders.map((o) => viewOf(o, profile))) / 3_000);
  expect(bytes(result)).toBeLessThan(600_000);
  // The ceiling's worth stays well under the SDK's 1 MB warning, with room for a supplier's longer references.
  expect(perOrder * SWEEP_SLICE_CEILING).toBeLessThan(600_000);
});

test('a listing over the ceiling fails for good with SweepSliceTooLarge, instead of an oversized result', async () => {
  const error = await listing(sandboxOrders(11), { sliceCeiling: 10 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect(error).toMatchObject({ type: SWEEP_SLICE_TOO_LARGE, nonRetryable: true });
  expect((await listing(sandboxOrders(10), { sliceCeiling: 10 })).orders).toHaveLength(10);
});

describe("an answer cut short at the supplier's page is never read as the whole window", () => {
  const PAGE = 20;
  const paged = SupplierProfile.parse({ queryOrders: { pageSize: PAGE } });

  test('an answer holding as many orders as the page size fails with SweepSliceTooLarge, so the window is listed in halves', async () => {
    const error = await listing(sandboxOrders(PAGE), { profile: paged }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: SWEEP_SLICE_TOO_LARGE, nonRetryable: true });
    expect((error as ApplicationFailure).details).toEqual([{ orders: PAGE, pageSize: PAGE }]);
    // Far under the ceiling: the page, not the history's size, is what it is over.
    expect(PAGE).toBeLessThan(SWEEP_SLICE_CEILING);
    // One order fewer cannot have been cut: it is the whole window.
    expect((await listing(sandboxOrders(PAGE - 1), { profile: paged })).orders).toHaveLength(PAGE - 1);
  });

  test('orders that could not be read count towards the page', async () => {
    const error = await listing({ orders: sandboxOrders(PAGE - 1), unreadable: 1 }, { profile: paged }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ type: SWEEP_SLICE_TOO_LARGE, nonRetryable: true });
  });

  test('a "page size exceeded" answer (100001005) fails with SweepSliceTooLarge, with HTTP 400 or 200', async () => {
    const at400 = new SupplierError('SupplierBadRequest', 'queryOrders: HTTP 400 (code 100001005)', {
      operation: 'queryOrders',
      httpStatus: 400,
      code: 100001005,
    });
    const at200 = new SupplierError('SupplierBusinessError', 'queryOrders: supplier code 100001005', {
      operation: 'queryOrders',
      httpStatus: 200,
      code: 100001005,
    });
    for (const refused of [at400, at200]) {
      const error = await listing(refused, { profile: paged }).catch((e: unknown) => e);
      expect(error).toMatchObject({ type: SWEEP_SLICE_TOO_LARGE, nonRetryable: true });
    }
    // Another 400 is still a listing refused for good, not a window to cut.
    const badRequest = new SupplierError('SupplierBadRequest', 'queryOrders: HTTP 400 (code 100000400)', {
      operation: 'queryOrders',
      httpStatus: 400,
      code: 100000400,
    });
    const error = await listing(badRequest, { profile: paged }).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'SupplierBadRequest', nonRetryable: true });
  });
});

test('a window halves at a whole second, and not below the minimal slice', () => {
  expect(halves({ start: '2026-11-24T10:00:00.000Z', end: '2026-11-24T11:00:00.000Z' })).toEqual([
    { start: '2026-11-24T10:00:00.000Z', end: '2026-11-24T10:30:00.000Z' },
    { start: '2026-11-24T10:30:00.000Z', end: '2026-11-24T11:00:00.000Z' },
  ]);
  expect(halves({ start: '2026-11-24T10:00:00.000Z', end: '2026-11-24T10:03:45.000Z' })?.[0].end).toBe(
    '2026-11-24T10:01:52.000Z',
  );
  const shortest = new Date(Date.parse('2026-11-24T10:00:00.000Z') + 2 * MIN_SLICE_MS - 1000).toISOString();
  expect(halves({ start: '2026-11-24T10:00:00.000Z', end: shortest })).toBeUndefined();
});

test('a check-in window is cut only between two days: a window with one midnight or none is not cut', () => {
  const window = (start: string, end: string) => ({ start: `${start}:00.000Z`, end: `${end}:00.000Z` });
  // Check-ins are dates: one midnight inside means one day, which no cut can divide.
  expect(checkInHalves(window('2026-11-24T18:00', '2026-11-25T00:00'))).toBeUndefined();
  expect(checkInHalves(window('2026-11-24T03:00', '2026-11-24T09:00'))).toBeUndefined();
  // Two days: cut at noon between them, each half holding one.
  expect(checkInHalves(window('2026-11-24T12:00', '2026-11-26T12:00'))).toEqual([
    window('2026-11-24T12:00', '2026-11-25T12:00'),
    window('2026-11-25T12:00', '2026-11-26T12:00'),
  ]);
  // Three days (25, 26, 27): two in the first half, one in the second.
  expect(checkInHalves(window('2026-11-24T06:00', '2026-11-27T06:00'))).toEqual([
    window('2026-11-24T06:00', '2026-11-26T12:00'),
    window('2026-11-26T12:00', '2026-11-27T06:00'),
  ]);
});
