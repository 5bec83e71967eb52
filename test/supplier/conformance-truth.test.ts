/**
 * The conformance kit tells the truth where it matters most: each test runs it against a supplier written from the
 * spec's text (test/fixtures/conformance-supplier.ts, test/fixtures/spec-supplier.ts) with one deviation, and checks
 * the report names it instead of passing over it.
 */
import { runConformance, type ConformanceOptions, type ConformanceReport } from '../../src/conformance/run';
import type { ClauseReport } from '../../src/conformance/types';
import { SupplierProfile } from '../../src/supplier/profile';
import { OWN_PROFILE, startConformanceSupplier } from '../fixtures/conformance-supplier';
import type { SpecSupplier } from '../fixtures/spec-supplier';

let supplier: SpecSupplier | undefined;
afterEach(async () => {
  await supplier?.close();
  supplier = undefined;
});

/** The own-numbers supplier's profile, so its clauses pass and only the deviation under test shows. */
const ownProfile = SupplierProfile.parse(OWN_PROFILE);

function options(baseUrl: string, more: Partial<ConformanceOptions> = {}): ConformanceOptions {
  return {
    baseUrl,
    credentials: { kind: 'token', token: 'conformance-test-token' },
    profile: ownProfile,
    ratePkgIds: ['pkg-standard-double'],
    budget: 200,
    ratePerSecond: 200,
    polling: { firstIntervalMs: 10, maxIntervalMs: 50, settleTimeoutMs: 1_000, stableAfterMs: 100 },
    ...more,
  };
}

const clause = (report: ConformanceReport, id: string): ClauseReport => report.clauses.find((c) => c.id === id)!;
const WINDOWS = [
  'queryOrders.byBookingTime',
  'queryOrders.byCheckInTime',
  'queryOrders.byCheckOutTime',
  'queryOrders.byFreeCancelTime',
  'queryOrders.byCancelledTime',
];

describe('window filters are checked against the orders returned', () => {
  test('a supplier that answers every order whatever the window fails each window clause, and no page size is proposed', async () => {
    supplier = await startConformanceSupplier({ ignoreWindows: true });
    const report = await runConformance(options(supplier.url));
    for (const id of WINDOWS) {
      expect([id, clause(report, id).result]).toEqual([id, expect.stringMatching(/^(blocker|differs)$/)]);
      expect(clause(report, id).observed).toMatch(/window a year earlier .*the window is not applied/);
    }
    expect(clause(report, 'queryOrders.byBookingTime').result).toBe('blocker');
    expect(clause(report, 'queryOrders.pageSize')).toMatchObject({ result: 'differs' });
    expect(clause(report, 'queryOrders.pageSize').proposal).toBeUndefined();
    expect(clause(report, 'queryOrders.pageSize').observed).toMatch(/not filtered.*none is proposed/);
    expect(report.proposedProfile).not.toHaveProperty('queryOrders');
  });

  test('the same supplier applying its windows passes them', async () => {
    supplier = await startConformanceSupplier();
    const report = await runConformance(options(supplier.url));
    for (const id of WINDOWS) expect([id, clause(report, id).result]).toEqual([id, 'pass']);
    expect(clause(report, 'queryOrders.pageSize').result).toBe('pass');
  });
});
