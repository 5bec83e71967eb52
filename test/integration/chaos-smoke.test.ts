/**
 * A small chaos run (chaos/run.ts) on its own dev server, sandbox and two worker processes: about 100
 * bookings carrying every fault class, three worker SIGKILLs and one dev-server SIGKILL and restart.
 * Proves the product's promises under fire: one order per reference, no order the outcome does not
 * account for, nothing stuck or lost, no secret or personal data in raw histories or worker logs; every
 * cancellation asked for (after confirmation, or overlapping a booking's recovery, a second confirm, a lagging
 * listing) done or in front of a person; and that the reconciliation sweep finds exactly the orphans the run makes
 * (workflows terminated after Book).
 * The full run is `npm run chaos` (1000 bookings, 10–20 minutes).
 */
import { JWT, scanHistory, scanLogLines } from '../../chaos/check';
import { DURING_RECOVERY, FAULT_CLASSES, OVERLAP_KINDS } from '../../chaos/mix';
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../../src/api/contract/definitions';
import type { ChaosReport } from '../../chaos/report';
import { CHAOS_RECOVERY } from '../../chaos/run';
import { expectEveryInvariantHeld, runChaosSmoke } from '../harness/chaos-smoke';

/**
 * Setup ~10 s, starts 25 s, drain ≤ 170 s (a Book on a killed worker times out after the workflow's 2 min). The
 * bookings whose faults keep them open longest (the 60 s deadline, late listings, cancellation windows) are started
 * first, so the drain after the last start is short: about 70 s from the first start to the last close.
 */
const SMOKE_TIMEOUT_MS = 6 * 60_000;
/** Bookings terminated on purpose once Book has made their order: the reconciliation sweep must find them. */
const ORPHANS = 3;

let report: ChaosReport;
let cleanUp = () => {};

beforeAll(async () => {
  ({ report, cleanUp } = await runChaosSmoke({
    n: 100,
    // The seed that caught a booking whose task after a sticky-queue timeout ran on a stale clock and then failed
    // replay for good (test/replay/stale-clock.test.ts): it stays, so the smoke keeps trying that moment.
    seed: 20_261_122,
    minutes: 25 / 60,
    startOrder: 'longest-first',
    killEverySeconds: 6,
    maxKills: 3,
    chaosTailSeconds: 0,
    serverRestart: 'SIGKILL',
    recovery: { ...CHAOS_RECOVERY, deadlineSeconds: 60 },
    drainLimitSeconds: 170,
    orphans: ORPHANS,
  }));
}, SMOKE_TIMEOUT_MS);

afterAll(() => cleanUp());

test('the scans find what they look for (so zero hits means something)', () => {
  const needles = { secrets: ['sandbox-secret'], personal: ['Bakorimu', 'bakorimu.lavetosi.7@example.org'] };
  const payload = Buffer.from('{"holder":{"firstName":"Bakorimu"}}').toString('base64');
  expect(scanHistory('h', `{"payloads":[{"data":"${payload}"}]}`, needles)).toEqual([
    { where: 'h', what: 'personal value "Bakorimu"' },
  ]);
  expect(scanHistory('h', '{"msg":"app secret sandbox-secret"}', needles)).toHaveLength(1);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
  expect(JWT.test(jwt)).toBe(true);
  const hits = scanLogLines([{ where: 'w', line: `sent to bakorimu.lavetosi.7@example.org with ${jwt}` }], needles);
  expect(hits.map((h) => h.what).sort()).toEqual(['a JWT', 'personal value "bakorimu.lavetosi.7@example.org"']);
});

test('every booking was started and every invariant held', () => {
  expectEveryInvariantHeld(report, 100);
});

test('the scan read something: every history, and worker log lines', () => {
  expect(report.secrets.historiesScanned).toBeGreaterThanOrEqual(100);
  expect(report.secrets.logLinesScanned).toBeGreaterThan(0);
});

test('the chaos happened: workers killed and restarted, the server restarted', () => {
  expect(report.chaos.workerKills).toBeGreaterThanOrEqual(2);
  expect(report.chaos.workerRestarts).toBeGreaterThanOrEqual(2);
  expect(report.chaos.serverRestarts).toBe(1);
});

test('each fault class struck at least one booking, QueryOrders faults included', () => {
  const missed = FAULT_CLASSES.filter((cls) => report.faultClasses[cls].exercised < 1);
  expect(missed).toEqual([]);
  for (const cls of FAULT_CLASSES) expect(report.faultClasses[cls].assignedPercent).toBeGreaterThanOrEqual(10);
  expect(report.queryOrdersFaults.faultedCalls['429']).toBeGreaterThan(0);
  expect(report.queryOrdersFaults.faultedCalls['500']).toBeGreaterThan(0);
});

test('orphans made on purpose: counted apart from failures, and the sweep reports exactly them', () => {
  const r = report.reconciliation;
  const made = r.orphansMade.map((m) => m.customerReferenceNo).sort();
  expect(r.orphansAsked).toBe(ORPHANS);
  // The targets' orders stay Confirming for 30 s, so each is terminated in time even across a server restart.
  expect(r.orphansNotMade).toEqual([]);
  expect(made).toHaveLength(ORPHANS);
  expect(report.outcomes.orphaned).toBe(ORPHANS);
  expect(report.workflowFailures).toEqual([]);
  expect(r.sweep).not.toBeNull();
  expect(r.sweep!.ordersSeen).toBe(r.supplierOrders);
  expect(r.sweep!.orphans.map((o) => o.customerReferenceNo).sort()).toEqual(made);
  for (const o of r.sweep!.orphans) expect(o.reason).toMatch(/ended without an outcome/);
  expect(r.sweep!.mismatches.map((m) => m.customerReferenceNo).sort()).toEqual(r.expectedMismatches);
});

test('cancellations that overlap: refused during recovery, the booking cancelled itself, one of two confirms taken, lagging listings waited out', () => {
  const c = report.cancellations;
  expect(c.notDone).toEqual([]);
  expect(c.overlaps.planned).toBeGreaterThanOrEqual(10);
  const items = c.items.filter((x) => (OVERLAP_KINDS as readonly string[]).includes(x.kind));
  for (const kind of OVERLAP_KINDS) expect(items.filter((x) => x.kind === kind).length).toBeGreaterThan(0);
  // While booking:<ref> recovers, cancelBooking through order:<ref> is refused, naming the booking's own cancel.
  const during = items.filter((x) => DURING_RECOVERY.has(x.kind) && x.callerAnswer !== undefined);
  expect(during.length).toBeGreaterThan(0);
  for (const x of during) expect(x.callerAnswer).toBe('update-failed:BookingInProgress');
  // The booking's own cancel: confirmed, saying a cancel was asked, and its order cancelled by the system, or (the
  // invariant above) in front of a person.
  const handedOff = during.filter((x) => x.bookingOutcome === 'confirmed' && x.cancelRequested);
  expect(handedOff.filter((x) => x.outcome === 'cancelled' && x.origin === 'auto')).not.toEqual([]);
  for (const x of handedOff) expect([...ORDER_OUTCOMES_NEEDING_A_PERSON, 'cancelled']).toContain(x.outcome);
  expect(c.overlaps.laggedAnswers).toBeGreaterThan(0);
  // Two confirms: never both taken; one of them took the cancellation, and it ended cancelled.
  const pairs = items.filter((x) => x.kind === 'duplicateConfirm' && x.answers);
  expect(pairs.length).toBeGreaterThan(0);
  const taken = (x: (typeof pairs)[number]) => x.answers!.filter((a) => a.startsWith('cancel-requested')).length;
  for (const x of pairs) {
    expect(taken(x)).toBeLessThanOrEqual(1);
    expect(x.outcome).toBe('cancelled');
  }
  // A lost answer (a server restart) may leave one unknown: at least one pair shows the refusal itself.
  expect(pairs.filter((x) => taken(x) === 1 && x.answers!.some((a) => a.startsWith('update-failed:')))).not.toEqual([]);
});
