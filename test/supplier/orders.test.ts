/** Book and QueryOrders on the sandbox: idempotency by customerReferenceNo, order status over time, filters combined with AND, the 429. */
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import type { HotelOrder } from '../../src/runtime/supplier/schemas';
import type { Sandbox } from '../../dev/sandbox/server';
import { bookRequest, bookRule, fastProfile, flow, Resources, supplierErrorOf } from './helpers';

const status = fastProfile.orderStatus;
const res = new Resources();
let sandbox: Sandbox;
let client: SupplierClient;

beforeEach(async () => {
  sandbox = await res.sandbox({ confirmAfterMs: 300 });
  ({ client } = res.ticketClient(sandbox));
});
afterEach(() => res.closeAll());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const refs = (orders: HotelOrder[]) => orders.map((o) => o.customerReferenceNo).sort();
/** The orders of a QueryOrders answer; the sandbox's orders are always readable. */
async function listed(c: SupplierClient, ...args: Parameters<SupplierClient['queryOrders']>): Promise<HotelOrder[]> {
  const { orders, unreadable } = await c.queryOrders(...args);
  expect(unreadable).toEqual([]);
  return orders;
}

describe('Book idempotency', () => {
  test('two Books with one customerReferenceNo make one order and return the same platformReferenceNo', async () => {
    const req = bookRequest();
    const first = await client.book(req, flow());
    // A second session, as after a crash and restart of the caller: still the same order.
    const second = await client.book(req, flow());
    expect(first.customerReferenceNo).toBe(req.customerReferenceNo);
    expect(first.platformReferenceNo).toMatch(/^PRN\d+$/);
    expect(second.platformReferenceNo).toBe(first.platformReferenceNo);
    expect(second.supplierReferenceNo).toBe(first.supplierReferenceNo);
    expect(sandbox.orders()).toHaveLength(1);
    expect(sandbox.calls('book').map((c) => c.httpStatus)).toEqual([200, 200]);
  });

  test('a Book repeated after a 504 that had created the order returns that order, not a second one', async () => {
    const req = bookRequest();
    const err = await supplierErrorOf(client.book(req, flow({ test: 'book=504AfterCreate&bookTimes=1' })));
    expect(err.type).toBe('SupplierGatewayTimeout');
    const again = await client.book(req, flow({ test: 'book=504AfterCreate&bookTimes=1' }));
    expect(again.customerReferenceNo).toBe(req.customerReferenceNo);
    expect(sandbox.orders()).toHaveLength(1);
    expect(again.platformReferenceNo).toBe(sandbox.orders()[0]!.platformReferenceNo);
  });

  test('different references make different orders', async () => {
    const a = await client.book(bookRequest(), flow());
    const b = await client.book(bookRequest(), flow());
    expect(a.platformReferenceNo).not.toBe(b.platformReferenceNo);
    expect(sandbox.orders()).toHaveLength(2);
  });
});

describe('order status', () => {
  test('Confirming (1) at Book, Confirmed (2) after confirmAfterMs', async () => {
    const order = await client.book(bookRequest(), flow());
    expect(order.status).toBe(status.confirming);
    expect(order.hotelConfirmNo).toBeUndefined();
    const confirmAt = Date.parse(order.bookingTime!) + 300;
    // Poll and keep when each query was sent and answered, so the check holds however slow the machine is:
    // answered before confirmAt ⇒ still Confirming; sent at or after confirmAt ⇒ Confirmed.
    const seen: Array<{ sent: number; answered: number; order: HotelOrder }> = [];
    while (!seen.some((s) => s.order.status === status.confirmed)) {
      const sent = Date.now();
      const [found] = await listed(client, { customerReferenceNos: [order.customerReferenceNo] }, {});
      seen.push({ sent, answered: Date.now(), order: found! });
      await sleep(40);
    }
    expect(seen.filter((s) => s.answered < confirmAt).every((s) => s.order.status === status.confirming)).toBe(true);
    expect(seen.filter((s) => s.sent >= confirmAt).every((s) => s.order.status === status.confirmed)).toBe(true);
    expect(seen[0]!.order.status).toBe(status.confirming);
    const confirmed = seen.at(-1)!.order;
    expect(confirmed.hotelConfirmNo).toEqual(expect.any(String));
    expect(confirmed.platformReferenceNo).toBe(order.platformReferenceNo);
  });

  test('outcome=failed ends in Failed (4) with a remark', async () => {
    const order = await client.book(bookRequest(), flow({ test: 'outcome=failed&confirmAfterMs=0' }));
    const [found] = await listed(client, { customerReferenceNos: [order.customerReferenceNo] }, {});
    expect(found!.status).toBe(status.failed);
    expect(found!.statusRemark).toBe('supplier rejected');
  });

  test('a Test-header confirmAfterMs wins over the sandbox default', async () => {
    const order = await client.book(bookRequest(), flow({ test: 'confirmAfterMs=0' }));
    const [found] = await listed(client, { customerReferenceNos: [order.customerReferenceNo] }, {});
    expect(found!.status).toBe(status.confirmed);
  });
});

describe('QueryOrders filters', () => {
  /** Three settled orders: a confirmed, a failed, and one still pending. */
  async function threeOrders() {
    const confirmed = await client.book(bookRequest(), flow({ test: 'confirmAfterMs=0' }));
    const failed = await client.book(bookRequest(), flow({ test: 'outcome=failed&confirmAfterMs=0' }));
    const pending = await client.book(bookRequest(), flow({ test: 'outcome=pending' }));
    return { confirmed, failed, pending };
  }

  test('unknown reference: code 0 and an empty list', async () => {
    await threeOrders();
    await expect(
      listed(client, { customerReferenceNos: ['00000000-0000-4000-8000-000000000000'] }, {}),
    ).resolves.toEqual([]);
    await expect(listed(client, { platformReferenceNos: ['PRN99999999'] }, {})).resolves.toEqual([]);
  });

  test('no filter returns every order', async () => {
    const { confirmed, failed, pending } = await threeOrders();
    expect(refs(await listed(client, {}, {}))).toEqual(
      [confirmed, failed, pending].map((o) => o.customerReferenceNo).sort(),
    );
  });

  test('each filter alone', async () => {
    const { confirmed, failed, pending } = await threeOrders();
    expect(refs(await listed(client, { customerReferenceNos: [failed.customerReferenceNo] }, {}))).toEqual([
      failed.customerReferenceNo,
    ]);
    expect(refs(await listed(client, { platformReferenceNos: [pending.platformReferenceNo!] }, {}))).toEqual([
      pending.customerReferenceNo,
    ]);
    expect(refs(await listed(client, { statusList: [status.confirmed, status.failed] }, {}))).toEqual(
      [confirmed.customerReferenceNo, failed.customerReferenceNo].sort(),
    );
  });

  test('filters combine with AND', async () => {
    const { confirmed, failed, pending } = await threeOrders();
    const all = [confirmed, failed, pending].map((o) => o.customerReferenceNo);

    // References ∧ status: only the confirmed one of the three.
    expect(refs(await listed(client, { customerReferenceNos: all, statusList: [status.confirmed] }, {}))).toEqual([
      confirmed.customerReferenceNo,
    ]);
    // Customer ref of one order ∧ platform ref of another: nothing, not the union.
    await expect(
      listed(
        client,
        { customerReferenceNos: [confirmed.customerReferenceNo], platformReferenceNos: [failed.platformReferenceNo!] },
        {},
      ),
    ).resolves.toEqual([]);
    // A reference ∧ a status it does not have: nothing.
    await expect(
      listed(client, { customerReferenceNos: [pending.customerReferenceNo], statusList: [status.confirmed] }, {}),
    ).resolves.toEqual([]);
  });

  test('bookingTimeWindow, alone and with the other filters', async () => {
    const { confirmed, failed, pending } = await threeOrders();
    const now = Date.now();
    const around = { start: new Date(now - 60_000).toISOString(), end: new Date(now + 60_000).toISOString() };
    const lastYear = {
      start: new Date(now - 400 * 86_400_000).toISOString(),
      end: new Date(now - 300 * 86_400_000).toISOString(),
    };

    expect(refs(await listed(client, { bookingTimeWindow: around }, {}))).toEqual(
      [confirmed, failed, pending].map((o) => o.customerReferenceNo).sort(),
    );
    await expect(listed(client, { bookingTimeWindow: lastYear }, {})).resolves.toEqual([]);
    expect(refs(await listed(client, { bookingTimeWindow: around, statusList: [status.failed] }, {}))).toEqual([
      failed.customerReferenceNo,
    ]);
    await expect(
      listed(client, { bookingTimeWindow: lastYear, customerReferenceNos: [confirmed.customerReferenceNo] }, {}),
    ).resolves.toEqual([]);
  });

  test('returned orders are complete enough to act on', async () => {
    const req = bookRequest();
    await client.book(req, flow({ test: 'confirmAfterMs=0' }));
    const [order] = await listed(client, { customerReferenceNos: [req.customerReferenceNo] }, {});
    expect(order).toMatchObject({
      customerReferenceNo: req.customerReferenceNo,
      status: status.confirmed,
      holder: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: { countryCode: 'GB' } },
      rooms: [{ ratePkgId: req.ratePkgId, guests: req.guests }],
    });
  });
});

describe('QueryOrders rate limit', () => {
  test('429 once over its limit, and again allowed after the bucket refills', async () => {
    sandbox.configure({ rateLimits: { queryOrders: 1 } });
    await listed(client, {}, {});
    const err = await supplierErrorOf(listed(client, {}, {}));
    expect(err.type).toBe('SupplierRateLimited');
    expect(bookRule(err)).toBe('refused');
    expect(err.details).toMatchObject({
      operation: 'queryOrders',
      httpStatus: 429,
      code: fastProfile.codes.rateLimited,
    });
    expect(sandbox.stats().rateLimited).toBe(1);
    // One request per second refills one token in a second.
    await sleep(1_050);
    await expect(listed(client, {}, {})).resolves.toEqual([]);
  });
});
