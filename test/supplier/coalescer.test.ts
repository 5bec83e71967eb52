/**
 * The QueryOrders coalescer: many lookups share few requests, each caller gets exactly its own
 * orders, a lone lookup is not held back, and a failed request reaches every caller it carried.
 * Over real HTTP against the sandbox supplier, plus in-process cases that need exact control.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../../src/activities/booking';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { SupplierError } from '../../src/runtime/supplier/errors';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { BookRequest, HotelOrder, OrderListing, QueryOrdersRequest } from '../../src/runtime/supplier/schemas';
import { createSupplierStack } from '../../src/runtime/supplier/stack';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';

const profile = SupplierProfile.parse({
  timeoutsMs: { ticket: 2_000, checkAvail: 2_000, book: 2_000, queryOrders: 2_000 },
  // The sandbox lists every order asked for: its page is larger than any batch here (capped pages:
  // coalescer-paging.test.ts).
  queryOrders: { pageSize: 100 },
});
const noLimits = { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: 10_000 };

let sandbox: Sandbox;
let supplier: SupplierClient;
let ticketAgent: Agent;

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, rateLimits: noLimits });
  ticketAgent = new Agent({ connections: 2 });
  const tokens = ticketTokens({
    baseUrl: sandbox.url,
    profile,
    appKey: 'sandbox-app',
    appSecret: 'sandbox-secret',
    dispatcher: ticketAgent,
  });
  supplier = createHttpSupplierClient({ baseUrl: sandbox.url, profile, tokens });
});
afterEach(async () => {
  await supplier.close();
  await ticketAgent.close();
  await sandbox.close();
});

function bookRequest(customerReferenceNo: string): BookRequest {
  return {
    customerReferenceNo,
    ratePkgId: 'PKG-SANDBOX-1',
    holder: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' },
    },
    guests: [{ roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false }],
  };
}

/** Books an order per reference, settled at once, so a lookup finds it confirmed. */
async function bookAll(refs: string[]): Promise<void> {
  await Promise.all(
    refs.map((ref) => supplier.book(bookRequest(ref), { sessionId: `sess-${ref}`, test: 'confirmAfterMs=0' })),
  );
}

const uuids = (n: number) => Array.from({ length: n }, () => randomUUID());
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('over HTTP against the sandbox', () => {
  test('200 concurrent lookups of distinct references take ceil(200/50) requests, and each caller gets its own order', async () => {
    const booked = uuids(150);
    const unknown = uuids(50);
    await bookAll(booked);
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });
    const refs = [...booked, ...unknown].sort();

    const results = await Promise.all(refs.map((ref) => orders.lookup(ref)));

    const requests = sandbox.calls('queryOrders');
    expect(requests.length).toBeLessThanOrEqual(Math.ceil(200 / 50) + 1);
    expect(requests.every((c) => c.httpStatus === 200 && (c.customerReferenceNos?.length ?? 0) <= 50)).toBe(true);
    expect(requests.flatMap((c) => c.customerReferenceNos ?? []).sort()).toEqual(refs);
    const bookedSet = new Set(booked);
    refs.forEach((ref, i) => {
      const mine = results[i]!;
      if (bookedSet.has(ref)) {
        expect(mine).toHaveLength(1);
        expect(mine[0]!.customerReferenceNo).toBe(ref);
        expect(mine[0]!.status).toBe(profile.orderStatus.confirmed);
      } else {
        expect(mine).toEqual([]);
      }
    });
  });

  test('lookups arriving while a request is in flight wait for the window and go together', async () => {
    const refs = uuids(100);
    await bookAll(refs);
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });

    const first = orders.lookup(refs[0]!);
    await nextTurn(); // the lone first lookup is on the wire now
    const rest = refs.slice(1).map((ref) => orders.lookup(ref));
    const results = await Promise.all([first, ...rest]);

    const sizes = sandbox.calls('queryOrders').map((c) => c.customerReferenceNos?.length);
    expect(sizes).toEqual([1, 50, 49]);
    results.forEach((mine, i) => expect(mine.map((o) => o.customerReferenceNo)).toEqual([refs[i]]));
  });

  test('a lone lookup is sent at once, not after the window', async () => {
    const [ref] = uuids(1);
    await bookAll([ref!]);
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });
    // Warm the connection and the ticket so both paths measure one request on a live connection.
    await supplier.queryOrders({ customerReferenceNos: [ref!] }, {});

    const direct: number[] = [];
    const coalesced: number[] = [];
    for (let i = 0; i < 25; i++) {
      let t = performance.now();
      await supplier.queryOrders({ customerReferenceNos: [ref!] }, {});
      direct.push(performance.now() - t);
      t = performance.now();
      const mine = await orders.lookup(ref!);
      coalesced.push(performance.now() - t);
      expect(mine.map((o) => o.customerReferenceNo)).toEqual([ref]);
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stderr.write(
      `lone lookup latency (median of 25): direct ${median(direct).toFixed(2)} ms, coalesced ${median(coalesced).toFixed(2)} ms, ` +
        `extra ${(median(coalesced) - median(direct)).toFixed(2)} ms (window is 20 ms)\n`,
    );
    // Each lookup was its own request: nothing was waiting to share it.
    expect(sandbox.calls('queryOrders').every((c) => c.customerReferenceNos?.length === 1)).toBe(true);
  });

  test('with a minimum interval, a trickle of polls shares requests, and a poll after a quiet spell goes at once', async () => {
    const refs = uuids(40);
    await bookAll(refs);
    const orders = createQueryOrdersCoalescer({
      profile,
      supplier,
      windowMs: 20,
      maxReferences: 50,
      minIntervalMs: 200,
    });

    // A storm as a busy worker runs it: one poll every 5 ms for 200 ms. Without the interval each
    // would find nothing in flight and go alone.
    const results: Array<Promise<unknown>> = [];
    for (const ref of refs) {
      results.push(orders.lookup(ref));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const found = (await Promise.all(results)) as Array<Array<{ customerReferenceNo: string }>>;
    found.forEach((mine, i) => expect(mine.map((o) => o.customerReferenceNo)).toEqual([refs[i]]));
    const stormSizes = sandbox.calls('queryOrders').map((c) => c.customerReferenceNos?.length ?? 0);
    expect(stormSizes[0]).toBe(1); // the first poll did not wait
    expect(stormSizes.reduce((a, b) => a + b, 0)).toBe(40);
    expect(stormSizes.length).toBeLessThanOrEqual(4); // ~200 ms of polls at least 200 ms apart

    // After a quiet spell longer than the interval, a lone poll is sent at once again.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const t = performance.now();
    await orders.lookup(refs[0]!);
    const lone = performance.now() - t;
    expect(sandbox.calls('queryOrders').length).toBe(stormSizes.length + 1);
    expect(lone).toBeLessThan(200); // not held for the interval
  });

  test('a failed merged request rejects every caller with the same SupplierServerError', async () => {
    const refs = uuids(30);
    await bookAll(refs);
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });
    sandbox.configure({ queryOrders: { fault: '500', times: 1 } });

    const settled = await Promise.allSettled(refs.map((ref) => orders.lookup(ref)));

    expect(sandbox.calls('queryOrders')).toHaveLength(1);
    const errors = settled.map((s) => (s.status === 'rejected' ? (s.reason as unknown) : s.value));
    expect(errors[0]).toBeInstanceOf(SupplierError);
    expect((errors[0] as SupplierError).type).toBe('SupplierServerError');
    expect((errors[0] as SupplierError).details.httpStatus).toBe(500);
    expect(errors.every((e) => e === errors[0])).toBe(true);

    // The fault was for one request only: the next lookups are answered.
    const again = await Promise.all(refs.slice(0, 3).map((ref) => orders.lookup(ref)));
    again.forEach((mine, i) => expect(mine.map((o) => o.customerReferenceNo)).toEqual([refs[i]]));
  });
});

describe('wired into the activities and the stack', () => {
  test('queryOrder through the coalescer keeps its outcomes and its failure mapping', async () => {
    const [known, unknown] = uuids(2);
    await bookAll([known!]);
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });
    const activities = createActivities({ supplier, profile, orders });

    const [found, notFound] = await Promise.all([
      activities.queryOrder({ customerReferenceNo: known!, traceId: 'wf-1' }),
      activities.queryOrder({ customerReferenceNo: unknown!, traceId: 'wf-2' }),
    ]);
    expect(found).toMatchObject({ kind: 'found', order: { customerReferenceNo: known, state: 'confirmed' } });
    expect(notFound).toEqual({ kind: 'not-found' });
    expect(sandbox.calls('queryOrders')).toHaveLength(1);

    // A 429 that still happens keeps its type and its Retry-After as the next retry delay.
    sandbox.configure({ queryOrders: { fault: '429', times: 1 }, rateLimitRetryAfterSeconds: 2 });
    const failure = await activities
      .queryOrder({ customerReferenceNo: known!, traceId: 'wf-1' })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'SupplierRateLimited', nonRetryable: false, nextRetryDelay: 2000 });
  });

  test('createSupplierStack: a rate-limited client, a coalescer, and one close', async () => {
    const stack = createSupplierStack({
      baseUrl: sandbox.url,
      credentials: { kind: 'ticket', appKey: 'sandbox-app', appSecret: 'sandbox-secret' },
      profile,
      maxConnections: 4,
      queryBatch: { windowMs: 20, maxReferences: 50 },
      rateLimit: true,
    });
    const [ref] = uuids(1);
    await stack.supplier.book(bookRequest(ref!), { sessionId: 'sess-stack', test: 'confirmAfterMs=0' });
    const [mine, other] = await Promise.all([stack.orders.lookup(ref!), stack.orders.lookup(randomUUID())]);
    expect(mine.map((o) => o.customerReferenceNo)).toEqual([ref]);
    expect(other).toEqual([]);
    await stack.close();
    await expect(stack.orders.lookup(ref!)).rejects.toThrow('QueryOrders coalescer closed');
  });
});

/** A supplier whose answers the test releases by hand, recording each request. */
function manualSupplier() {
  const requests: Array<{
    refs: string[];
    signal?: AbortSignal;
    traceId?: string;
    answer(orders: HotelOrder[]): void;
    fail(err: unknown): void;
  }> = [];
  const client: Pick<SupplierClient, 'queryOrders'> = {
    queryOrders: (request: QueryOrdersRequest, context) =>
      new Promise<OrderListing>((resolve, reject) => {
        requests.push({
          refs: request.customerReferenceNos ?? [],
          signal: context.signal,
          traceId: context.traceId,
          answer: (orders) => resolve({ orders, unreadable: [] }),
          fail: reject,
        });
      }),
  };
  return { client, requests };
}

const order = (customerReferenceNo: string, status = 2): HotelOrder => ({ customerReferenceNo, status });

describe('in process', () => {
  test('a reference asked for by several callers is sent once, and each of them gets its orders', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50 });

    const lookups = ['A', 'B', 'A', 'C', 'A'].map((ref) => orders.lookup(ref));
    await nextTurn();
    expect(requests.map((r) => r.refs)).toEqual([['A', 'B', 'C']]);
    // The supplier may answer in any order and with orders of other references.
    requests[0]!.answer([order('C'), order('A'), order('Z')]);

    const results = await Promise.all(lookups);
    expect(results.map((mine) => mine.map((o) => o.customerReferenceNo))).toEqual([['A'], [], ['A'], ['C'], ['A']]);
  });

  test("one caller's abort rejects that caller only; the request goes on for the others", async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50 });
    const controller = new AbortController();

    const leaving = orders.lookup('A', controller.signal);
    const staying = orders.lookup('B');
    await nextTurn();
    controller.abort();

    await expect(leaving).rejects.toMatchObject({ type: 'SupplierClientTimeout' });
    expect(requests[0]!.signal?.aborted).toBe(false);
    requests[0]!.answer([order('A'), order('B')]);
    await expect(staying).resolves.toEqual([order('B')]);
  });

  test('a caller aborting before the request is sent takes its reference out of it', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50 });
    const controller = new AbortController();

    const leaving = orders.lookup('A', controller.signal);
    const staying = orders.lookup('B');
    controller.abort();
    await expect(leaving).rejects.toBeInstanceOf(SupplierError);
    await nextTurn();
    expect(requests.map((r) => r.refs)).toEqual([['B']]);
    requests[0]!.answer([]);
    await expect(staying).resolves.toEqual([]);
  });

  test('a request every caller has left is abandoned', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50 });
    const a = new AbortController();
    const b = new AbortController();

    const lookups = [orders.lookup('A', a.signal), orders.lookup('B', b.signal)];
    await nextTurn();
    a.abort();
    expect(requests[0]!.signal?.aborted).toBe(false);
    b.abort();
    expect(requests[0]!.signal?.aborted).toBe(true);
    await expect(Promise.all(lookups)).rejects.toMatchObject({ type: 'SupplierClientTimeout' });
  });

  test('a lone lookup keeps its Trace-Id; a shared request carries none', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50 });

    const lone = orders.lookup('A', undefined, 'trace-a');
    await nextTurn();
    const shared = [orders.lookup('B', undefined, 'trace-b'), orders.lookup('C', undefined, 'trace-c')];
    requests[0]!.answer([]);
    await lone;
    await new Promise((resolve) => setTimeout(resolve, 30));
    requests[1]!.answer([]);
    await Promise.all(shared);

    expect(requests.map((r) => [r.refs, r.traceId])).toEqual([
      [['A'], 'trace-a'],
      [['B', 'C'], undefined],
    ]);
  });

  test('while one request is in flight, a full batch goes without waiting for the window', async () => {
    const { client, requests } = manualSupplier();
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 60_000, maxReferences: 3 });

    const lookups = [orders.lookup('A')];
    await nextTurn();
    lookups.push(...['B', 'C', 'D', 'E'].map((ref) => orders.lookup(ref)));
    expect(requests.map((r) => r.refs)).toEqual([['A'], ['B', 'C', 'D']]);
    for (const r of requests) r.answer([]);
    orders.close();
    await expect(lookups[4]).rejects.toThrow('QueryOrders coalescer closed');
    await expect(Promise.all(lookups.slice(0, 4))).resolves.toEqual([[], [], [], []]);
  });

  test('with a limiter, the batch keeps filling until the token comes', async () => {
    const { client, requests } = manualSupplier();
    let grant: () => void = () => undefined;
    const limiter = { acquire: () => new Promise<void>((resolve) => (grant = resolve)) };
    const orders = createQueryOrdersCoalescer({ profile, supplier: client, windowMs: 20, maxReferences: 50, limiter });

    const lookups = [orders.lookup('A')];
    await nextTurn();
    lookups.push(orders.lookup('B'), orders.lookup('C'));
    expect(requests).toHaveLength(0);
    grant();
    await nextTurn();
    expect(requests.map((r) => r.refs)).toEqual([['A', 'B', 'C']]);
    requests[0]!.answer([order('B')]);
    await expect(Promise.all(lookups)).resolves.toEqual([[], [order('B')], []]);
  });
});
