/**
 * The conformance kit against suppliers the project did not build: the spec-text supplier of the test fixtures as it
 * answers by default, and a stateful one written from the spec's text that chose its own numbers where the spec says
 * "not shown" (test/fixtures/conformance-supplier.ts). The report names each difference from the default profile,
 * and the proposed profile is one the worker's configuration accepts.
 */
import { loadConfig } from '../../src/runtime/config/index';
import { runConformance, type ConformanceOptions, type ConformanceReport } from '../../src/operators/conformance/run';
import type { ClauseReport } from '../../src/operators/conformance/types';
import { OWN_PROFILE, kitOptions, startConformanceSupplier } from '../fixtures/conformance-supplier';
import {
  askedReferences,
  bookAnswer,
  ordersAnswer,
  specOrder,
  startSpecSupplier,
  type SpecSupplier,
} from '../fixtures/spec-supplier';

let supplier: SpecSupplier | undefined;
afterEach(async () => {
  await supplier?.close();
  supplier = undefined;
});

const options = (baseUrl: string): ConformanceOptions => kitOptions(baseUrl);

/** Each clause as `id: result`. */
const results = (report: ConformanceReport) => Object.fromEntries(report.clauses.map((c) => [c.id, c.result]));
const clause = (report: ConformanceReport, id: string): ClauseReport => report.clauses.find((c) => c.id === id)!;

describe('the conformance kit against a supplier written from the spec text', () => {
  test('its own numbers, local times and ignored test flags: each named, and a profile proposed for them', async () => {
    supplier = await startConformanceSupplier();
    const report = await runConformance(options(supplier.url));
    expect(results(report)).toMatchObject({
      'checkAvail.available': 'differs',
      'checkAvail.unavailable': 'manual',
      'checkAvail.priceChanged': 'manual',
      'auth.invalidToken': 'differs',
      'book.answered': 'pass',
      'book.idempotent': 'pass',
      'queryOrders.listed': 'pass',
      'queryOrders.consistent': 'pass',
      'queryOrders.byPlatformReference': 'pass',
      'queryOrders.bySupplierReference': 'pass',
      'queryOrders.byBookingTime': 'pass',
      'queryOrders.byCheckInTime': 'pass',
      'queryOrders.unknownReference': 'pass',
      'book.refused': 'pass',
      'book.rejected': 'manual',
      'cancel.wrongSupplierReference': 'pass',
      'cancel.confirmed': 'differs',
      'cancel.fee': 'pass',
      'cancel.repeat': 'pass',
      'queryOrders.byCancelledTime': 'pass',
      'queryOrders.pageSize': 'pass',
      'fields.types': 'pass',
      'fields.timestamps': 'differs',
      'orders.statuses': 'differs',
      'limits.rate': 'pass',
    });
    expect(report.summary.blocker).toBe(0);
    expect(clause(report, 'queryOrders.listed').observed).toMatch(/statuses 3 → 6/);
    expect(clause(report, 'fields.timestamps').observed).toMatch(/bookingTime "[^"]+" has no offset/);
    expect(clause(report, 'fields.timestamps').observed).toMatch(/8\.0 h from the time of the Book/);
    expect(clause(report, 'auth.invalidToken').observed).toMatch(/success to an invalid token/);
    expect(report.proposedProfile).toEqual(OWN_PROFILE);
    // The worker's own configuration takes it.
    const profile = loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(report.proposedProfile) })
      .supplier.profile;
    expect(profile.orderStatus).toMatchObject({ confirming: 3, confirmed: 6, cancelled: 7, failed: 4 });
    // Book twice under one reference, one order: the refused Book made none, the repeat returned the first.
    expect(supplier.callsOf('book')).toHaveLength(4);
  });

  test('the fixture as it answers by default: never lists an order, so the kit names the blocker and skips what needs one', async () => {
    supplier = await startSpecSupplier();
    const report = await runConformance(options(supplier.url));
    const listed = clause(report, 'queryOrders.listed');
    expect(listed.result).toBe('blocker');
    expect(listed.observed).toMatch(/never listed/);
    expect(results(report)).toMatchObject({
      'book.answered': 'pass',
      'book.idempotent': 'pass',
      'book.refused': 'differs',
      'cancel.confirmed': 'skipped',
      'fields.timestamps': 'differs',
    });
    expect(clause(report, 'book.refused').observed).toMatch(/^accepted/);
    // Nothing settled, so nothing is inferred about the statuses: the profile stays as it was.
    expect(clause(report, 'orders.statuses').result).toBe('skipped');
    expect(report.proposedProfile).toEqual({});
    expect(() =>
      loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(report.proposedProfile) }),
    ).not.toThrow();
  });

  test('a second order for a repeated reference is a blocker, named in both clauses that see it', async () => {
    // Each Book makes an order of its own, and QueryOrders lists every one under the reference.
    const made = new Map<string, Record<string, unknown>[]>();
    supplier = await startSpecSupplier({
      book: (body, n) => {
        const ref = String(body.customerReferenceNo);
        const order = specOrder(ref, { platformReferenceNo: `P-${n}`, supplierReferenceNo: `S-${n}` });
        made.set(ref, [...(made.get(ref) ?? []), order]);
        return bookAnswer(order);
      },
      queryOrders: (body) => ordersAnswer(...askedReferences(body).flatMap((ref) => made.get(ref) ?? [])),
    });
    const report = await runConformance(options(supplier.url));
    expect(clause(report, 'book.idempotent')).toMatchObject({
      result: 'blocker',
      observed: expect.stringMatching(/a second order P-2 \/ S-2 beside P-1 \/ S-1: Book is not idempotent/),
    });
    expect(clause(report, 'queryOrders.listed')).toMatchObject({
      result: 'blocker',
      observed: expect.stringMatching(/2 orders listed under one reference/),
    });
  });

  test('an order status sent as text is a blocker: a decision field the product cannot read', async () => {
    supplier = await startSpecSupplier({
      book: (body) => bookAnswer(specOrder(String(body.customerReferenceNo), { status: '1' })),
    });
    const book = clause(await runConformance(options(supplier.url)), 'book.answered');
    expect(book.result).toBe('blocker');
    expect(book.observed).toMatch(/unreadable: data\.hotelOrder\.status.*no profile changes how it is read/);
  });

  test('a reference never booked answered 404: a blocker, since a lost Book could never be known to have made nothing', async () => {
    supplier = await startSpecSupplier({
      queryOrders: () => ({ status: 404, body: { code: 100000404, msg: 'not found' } }),
    });
    const unknown = clause(await runConformance(options(supplier.url)), 'queryOrders.unknownReference');
    expect(unknown.result).toBe('blocker');
    expect(unknown.observed).toMatch(/^SupplierNotFound \(HTTP 404, code 100000404\)/);
  });

  test("a listing longer than the profile's page: the page proposed is the one seen", async () => {
    const many = Array.from({ length: 25 }, (_, i) =>
      specOrder(`listed-${i}`, { bookingTime: new Date().toISOString() }),
    );
    supplier = await startSpecSupplier({
      queryOrders: (body) => (askedReferences(body).length === 0 ? ordersAnswer(...many) : ordersAnswer()),
    });
    const report = await runConformance(options(supplier.url));
    expect(clause(report, 'queryOrders.pageSize')).toMatchObject({
      result: 'differs',
      proposal: { queryOrders: { pageSize: 25 } },
    });
    expect(report.proposedProfile).toMatchObject({ queryOrders: { pageSize: 25 } });
  });

  test('a number the supplier uses for pending that the profile uses for Cancelled, with no Cancel seen: Cancelled is moved off it', async () => {
    supplier = await startConformanceSupplier();
    // Every Cancel refused: the run sees pending 3 and confirmed 6, never the supplier's own Cancelled.
    supplier.script({ cancel: () => ({ status: 400, body: { code: 100000400, msg: 'not allowed in test' } }) });
    const report = await runConformance(options(supplier.url));
    const statuses = clause(report, 'orders.statuses');
    expect(statuses.result).toBe('differs');
    expect(statuses.observed).toMatch(/cancelled not seen, and its number means another status here/);
    expect(report.proposedProfile).toMatchObject({ orderStatus: { confirming: 3, confirmed: 6, cancelled: -1 } });
    const profile = loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(report.proposedProfile) })
      .supplier.profile;
    expect(new Set(Object.values(profile.orderStatus)).size).toBe(6);
  });
});
