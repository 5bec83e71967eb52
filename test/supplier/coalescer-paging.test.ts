/**
 * The QueryOrders coalescer against a supplier whose answers are capped (supplier-facts: code 100001005 "page
 * size exceeded"; how many orders one answer lists is not documented): a reference an answer did not list is "not
 * found" only when that answer could not have been cut short, since "not found" lets a booking send Book again.
 * Over real HTTP against a supplier written from the spec's text, plus in-process cases that need exact control.
 */
import { randomUUID } from 'node:crypto';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { SupplierError } from '../../src/runtime/supplier/errors';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { HotelOrder, OrderListing, QueryOrdersRequest } from '../../src/runtime/supplier/schemas';
import { staticToken } from '../../src/runtime/supplier/token';
import {
  askedReferences,
  ordersAnswer,
  ORDER_CONFIRMED,
  ORDER_FAILED,
  specOrder,
  startSpecSupplier,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { Resources } from './helpers';

/** The most orders the supplier of these tests lists in one answer, and the page size the profile is told. */
const PAGE = 10;
const profile = SupplierProfile.parse({
  timeoutsMs: { ticket: 2_000, checkAvail: 2_000, book: 2_000, queryOrders: 2_000 },
  queryOrders: { pageSize: PAGE },
});

const res = new Resources();
afterEach(() => res.closeAll());

/**
 * A supplier holding `orders` (by reference) that lists at most PAGE of the orders asked for, in the order asked,
 * and quietly leaves the rest out; each answer's size is recorded beside the references it was asked for.
 */
async function cappedSupplier(orders: Map<string, Array<Record<string, unknown>>>) {
  const answers: Array<{ asked: string[]; listed: number }> = [];
  const spec: SpecSupplier = await startSpecSupplier({
    queryOrders: (body) => {
      const asked = askedReferences(body);
      const listed = asked.flatMap((ref) => orders.get(ref) ?? []).slice(0, PAGE);
      answers.push({ asked, listed: listed.length });
      return ordersAnswer(...listed);
    },
  });
  res.add(() => spec.close());
  const client = res.client({ baseUrl: spec.url, tokens: staticToken('spec-token'), profile });
  // As production builds it (SUPPLIER_QUERY_BATCH_MAX_REFERENCES defaults to 50): more references than the page.
  const coalescer = createQueryOrdersCoalescer({ supplier: client, profile, windowMs: 20, maxReferences: 50 });
  res.add(async () => coalescer.close());
  return { spec, answers, coalescer };
}

const uuids = (n: number) => Array.from({ length: n }, () => randomUUID());

describe('over HTTP, a supplier listing at most a page of orders per answer', () => {
  test('every reference that exists is found, and only references the supplier has none of are not found', async () => {
    const booked = uuids(35);
    const unknown = uuids(10);
    const orders = new Map(booked.map((ref) => [ref, [specOrder(ref)]]));
    const { coalescer, answers } = await cappedSupplier(orders);
    const refs = [...booked, ...unknown].sort();

    const results = await Promise.all(refs.map((ref) => coalescer.lookup(ref)));

    const bookedSet = new Set(booked);
    const notFound = refs.filter((ref, i) => results[i]!.length === 0);
    expect(notFound.sort()).toEqual([...unknown].sort());
    refs.forEach((ref, i) => {
      if (bookedSet.has(ref)) expect(results[i]!.map((o) => [o.customerReferenceNo, o.status])).toEqual([[ref, 2]]);
    });
    // No request asked for a page's worth of references: a full answer is one that may have been cut.
    expect(answers.every((a) => a.asked.length < PAGE)).toBe(true);
  });

  test('an answer that fills the page is asked again in smaller batches; "not found" only from an answer under the page', async () => {
    // Some references carry two orders (a Failed one, then the Confirmed one): a batch under the page in references
    // still fills the page in orders, and the order left out may be the Confirmed one.
    const booked = uuids(24);
    const unknown = uuids(6);
    const orders = new Map(
      booked.map((ref, i) => [
        ref,
        i % 2 === 0
          ? [specOrder(ref, { status: ORDER_FAILED, platformReferenceNo: `PRN-${i}-a` }), specOrder(ref)]
          : [specOrder(ref)],
      ]),
    );
    const { coalescer, answers } = await cappedSupplier(orders);
    const refs = [...booked, ...unknown].sort();

    const results = await Promise.all(refs.map((ref) => coalescer.lookup(ref)));

    refs.forEach((ref, i) => {
      const statuses = results[i]!.map((o) => o.status).sort();
      const expected = (orders.get(ref) ?? []).map((o) => o.status as number).sort();
      expect({ ref, statuses }).toEqual({ ref, statuses: expected });
      expect(statuses.includes(ORDER_CONFIRMED)).toBe(orders.has(ref));
    });
    // Some answers were full and were asked again; every unknown reference was in an answer under the page.
    expect(answers.some((a) => a.listed >= PAGE)).toBe(true);
    for (const ref of unknown) {
      expect({ ref, provenBy: answers.some((a) => a.asked.includes(ref) && a.listed < PAGE) }).toEqual({
        ref,
        provenBy: true,
      });
    }
  });

  test('a "page size exceeded" answer (100001005, HTTP 400) is asked again in smaller batches, not failed', async () => {
    const refs = uuids(20);
    const spec = await startSpecSupplier({
      // This supplier refuses more than 4 references in one request.
      queryOrders: (body) => {
        const asked = askedReferences(body);
        if (asked.length > 4) return { status: 400, body: { code: 100001005, msg: 'page size exceeded' } };
        return ordersAnswer(...asked.map((ref) => specOrder(ref)));
      },
    });
    res.add(() => spec.close());
    const client = res.client({ baseUrl: spec.url, tokens: staticToken('spec-token'), profile });
    const coalescer = createQueryOrdersCoalescer({ supplier: client, profile, windowMs: 20, maxReferences: 50 });
    res.add(async () => coalescer.close());

    const results = await Promise.all(refs.map((ref) => coalescer.lookup(ref)));

    results.forEach((mine, i) => expect(mine.map((o) => o.customerReferenceNo)).toEqual([refs[i]]));
    const sizes = spec.callsOf('queryOrders').map((c) => askedReferences(c.body).length);
    expect(sizes.filter((n) => n > 4).length).toBeGreaterThan(0); // refused, then split
    expect(sizes.filter((n) => n <= 4).reduce((a, b) => a + b, 0)).toBe(20); // each reference answered once
  });
});

/** A supplier whose answers the test releases by hand, recording each request. */
function manualSupplier() {
  const requests: Array<{ refs: string[]; answer(orders: HotelOrder[]): void; fail(err: unknown): void }> = [];
  const client: Pick<SupplierClient, 'queryOrders'> = {
    queryOrders: (request: QueryOrdersRequest) =>
      new Promise<OrderListing>((resolve, reject) => {
        requests.push({
          refs: request.customerReferenceNos ?? [],
          answer: (orders) => resolve({ orders, unreadable: [] }),
          fail: reject,
        });
      }),
  };
  return { client, requests };
}

const order = (customerReferenceNo: string, status = 2): HotelOrder => ({ customerReferenceNo, status });
/** Waits until `done` holds (the coalescer sends from timers, late on a loaded machine); fails after 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (const started = Date.now(); !done();) {
    if (Date.now() - started > 5_000) throw new Error('timed out waiting for the coalescer');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('in process', () => {
  const paged = (pageSize: number) => SupplierProfile.parse({ queryOrders: { pageSize } });

  test('the batch stays under the page size whatever maxReferences says', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile: paged(4), supplier: client, windowMs: 0, maxReferences: 50 });

    const lookups = ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((ref) => orders.lookup(ref));
    await until(() => requests.length === 3);
    expect(requests.map((r) => r.refs)).toEqual([['A', 'B', 'C'], ['D', 'E', 'F'], ['G']]);
    for (const r of requests) r.answer([]);
    await expect(Promise.all(lookups)).resolves.toEqual([[], [], [], [], [], [], []]);
  });

  test('a full answer answers nobody: its references are asked again in halves, and each answer under the page decides', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile: paged(4), supplier: client, windowMs: 0, maxReferences: 50 });

    const lookups = ['A', 'B', 'C'].map((ref) => orders.lookup(ref));
    await until(() => requests.length === 1);
    // Four orders for three references: a page's worth, so C's order may be the one left out.
    requests[0]!.answer([order('A', 4), order('A'), order('B'), order('Z')]);
    await until(() => requests.length === 3);
    expect(requests.map((r) => r.refs)).toEqual([['A', 'B', 'C'], ['A', 'B'], ['C']]);
    requests[1]!.answer([order('A', 4), order('A'), order('B')]);
    requests[2]!.answer([]);

    const [a, b, c] = await Promise.all(lookups);
    expect(a).toEqual([order('A', 4), order('A')]);
    expect(b).toEqual([order('B')]);
    expect(c).toEqual([]);
  });

  test('one reference whose own answer fills the page is not read: it stays unknown (a retryable error), never "not found"', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile: paged(2), supplier: client, windowMs: 0, maxReferences: 50 });

    const lookup = orders.lookup('A');
    await until(() => requests.length === 1);
    requests[0]!.answer([order('A', 4), order('A', 4)]);
    const err = await lookup.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupplierError);
    expect(err).toMatchObject({ type: 'SupplierInvalidResponse', details: { operation: 'queryOrders' } });
    expect(requests).toHaveLength(1);
  });

  test('"page size exceeded" for one reference rejects its caller with the supplier\'s error', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile: paged(4), supplier: client, windowMs: 0, maxReferences: 50 });

    const lookup = orders.lookup('A');
    await until(() => requests.length === 1);
    const refused = new SupplierError('SupplierBadRequest', 'queryOrders: HTTP 400 (code 100001005)', {
      operation: 'queryOrders',
      httpStatus: 400,
      code: 100001005,
    });
    requests[0]!.fail(refused);
    await expect(lookup).rejects.toBe(refused);
    expect(requests).toHaveLength(1);
  });

  test('another failure of a batch still rejects every caller at once, without asking again', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile: paged(4), supplier: client, windowMs: 0, maxReferences: 50 });

    const lookups = ['A', 'B'].map((ref) => orders.lookup(ref));
    await until(() => requests.length === 1);
    const failure = new SupplierError('SupplierServerError', 'queryOrders: HTTP 500', {
      operation: 'queryOrders',
      httpStatus: 500,
    });
    requests[0]!.fail(failure);
    const settled = await Promise.allSettled(lookups);
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason : s.value))).toEqual([failure, failure]);
    expect(requests).toHaveLength(1);
  });
});
