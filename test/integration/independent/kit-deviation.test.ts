/**
 * Independent check of #47 (the conformance kit tells the truth), written without reading the product's code or its
 * tests: the kit run against a supplier it never saw (./supplier.ts, from the spec's text) whose QueryOrders ignores
 * every time window, the deviation chosen here. docs/supplier-onboarding.md: "the same window moved a year earlier
 * must not list the order: a supplier that answers every order whatever the window fails here (a blocker where the
 * sweep lists so)"; byBookingTime, byCheckInTime and byCancelledTime are the sweep's; exit code 1 "a clause differs or
 * is a blocker"; `--write-profile` writes "only when the run finished with no blocker"; no page size is proposed from
 * an answer whose window was not applied.
 */
import { existsSync } from 'node:fs';
import { runKit, resultOf, type KitRun } from './kit';
import { OWN_VALUES, startIndependentSupplier, type SpecSupplier } from './supplier';

jest.setTimeout(60_000);

let supplier: SpecSupplier;
let kit: KitRun;

beforeAll(async () => {
  supplier = await startIndependentSupplier(OWN_VALUES);
  supplier.deviations.queryOrdersIgnoresWindows = true;
  kit = await runKit(supplier);
});

afterAll(async () => {
  await supplier?.close();
});

test('a QueryOrders that ignores its time windows is reported: a blocker for the windows the sweep lists by, exit 1, no profile written', () => {
  expect(kit.run.code).toBe(1);
  for (const id of ['queryOrders.byBookingTime', 'queryOrders.byCheckInTime', 'queryOrders.byCancelledTime'])
    expect([id, resultOf(kit, id)]).toEqual([id, 'blocker']);
  for (const id of ['queryOrders.byCheckOutTime', 'queryOrders.byFreeCancelTime'])
    expect([id, resultOf(kit, id)]).toEqual([id, 'differs']);
  expect(resultOf(kit, 'queryOrders.pageSize')).not.toBe('pass');
  expect(existsSync(kit.profileFile)).toBe(false);
});

test('what the run left at the supplier is listed, nothing left standing unflagged', () => {
  const made = (kit.report as { ordersMade?: { customerReferenceNo: string; state: string }[] }).ordersMade ?? [];
  const booked = new Set(
    supplier.requests
      .filter((r) => r.path === '/api/trade/book' && r.answered === 200)
      .map((r) => String(r.body.customerReferenceNo)),
  );
  expect(new Set(made.map((o) => o.customerReferenceNo))).toEqual(booked);
  for (const order of made)
    if (supplier.ordersFor(order.customerReferenceNo)[0]?.status === OWN_VALUES.orderStatus.confirmed)
      expect(order.state).toBe('left');
});
