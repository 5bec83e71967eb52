/**
 * A small chaos run on the production engine (chaos/run.ts with engine `prod`): PostgreSQL and two
 * Temporal nodes of its own, about 100 bookings with every fault class, worker SIGKILLs, one node SIGKILLed
 * and brought back, PostgreSQL restarted under load, then the other node SIGKILLed. The same invariants
 * as on the dev server: one order per reference, nothing orphaned, stuck or lost, no secret in history, and
 * the reconciliation sweep finds exactly the orphans the run made.
 * The full run is `npm run chaos -- --prod`.
 */
import type { ChaosReport } from '../../chaos/report';
import { CHAOS_RECOVERY } from '../../chaos/run';
import { expectEveryInvariantHeld, runChaosSmoke } from '../harness/chaos-smoke';

/** Setup ~20 s, starts 30 s (those open longest first, so the drain after the last start is short), drain ≤ 170 s. */
const SMOKE_TIMEOUT_MS = 7 * 60_000;

let report: ChaosReport;
let cleanUp = () => {};

beforeAll(async () => {
  ({ report, cleanUp } = await runChaosSmoke({
    engine: 'prod',
    n: 100,
    seed: 20_261_123,
    minutes: 0.5,
    startOrder: 'longest-first',
    killEverySeconds: 7,
    maxKills: 3,
    chaosTailSeconds: 0,
    nodeDownSeconds: 5,
    recovery: { ...CHAOS_RECOVERY, deadlineSeconds: 60 },
    drainLimitSeconds: 170,
    // Terminated after Book: the reconciliation sweep must report exactly these (expectEveryInvariantHeld).
    orphans: 2,
  }));
}, SMOKE_TIMEOUT_MS);

afterAll(() => cleanUp());

test('the faults happened: both nodes SIGKILLed and back, PostgreSQL restarted, workers killed', () => {
  expect(report.engine).toBe('prod');
  expect(report.chaos.nodeKills.map((k) => k.node)).toEqual(['node-1', 'node-2']);
  expect(report.chaos.postgresRestarts).toHaveLength(1);
  expect(report.chaos.workerKills).toBeGreaterThanOrEqual(2);
});

test('every booking was started and every invariant held', () => {
  expectEveryInvariantHeld(report, 100);
});
