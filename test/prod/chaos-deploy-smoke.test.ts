/**
 * The deploy drill small (chaos/run.ts with `deploy`, on the production engine): build A's workers versioned and
 * current from the first booking, build B (changed commands, no patch) started beside them, gated and made current,
 * rolled back to A, forward to B, then A drained and stopped, while workers, nodes and PostgreSQL are killed as in
 * every prod chaos run. Every existing invariant holds, and: every gate passed, no workflow task failed for
 * nondeterminism, every run ran on one build (the one current when its first task was handed out), and nothing was
 * left on A when it stopped. The full drill is `npm run chaos -- --deploy`.
 */
import type { ChaosReport } from '../../chaos/report';
import { CHAOS_RECOVERY } from '../../chaos/run';
import { expectEveryInvariantHeld, runChaosSmoke } from '../harness/chaos-smoke';

/** Setup ~30 s, starts 90 s, drain ≤ 170 s (A's last booking included). */
const SMOKE_TIMEOUT_MS = 7 * 60_000;
const BOOKINGS = 45;

let report: ChaosReport;
let cleanUp = () => {};

beforeAll(async () => {
  ({ report, cleanUp } = await runChaosSmoke({
    engine: 'prod',
    deploy: true,
    n: BOOKINGS,
    seed: 20_261_128,
    minutes: 1.5,
    killEverySeconds: 10,
    maxKills: 4,
    chaosTailSeconds: 0,
    nodeDownSeconds: 5,
    recovery: { ...CHAOS_RECOVERY, deadlineSeconds: 60 },
    drainLimitSeconds: 170,
    orphans: 1,
  }));
}, SMOKE_TIMEOUT_MS);

afterAll(() => cleanUp());

test('the drill happened: A current, B deployed, rolled back to A, forward to B, each gated; A drained and stopped', () => {
  const d = report.deploy!;
  expect(d.steps.map((s) => `${s.kind} ${s.build}`)).toEqual(['first A', 'deploy B', 'rollback A', 'forward B']);
  for (const s of d.steps) expect(s.setAfterMs).toBeDefined();
  expect(d.steps.slice(1).map((s) => s.gate?.verdict)).toEqual(['pass', 'pass', 'pass']);
  expect(d.rollbacks).toBe(1);
  expect(d.timeToDrainASeconds).not.toBeNull();
  expect(d.aStoppedAtSeconds).not.toBeNull();
  expect(report.chaos.workerKills).toBeGreaterThanOrEqual(2);
});

test('every run finished on the build it started on, the one current then; none failed for nondeterminism', () => {
  const d = report.deploy!;
  expect(d.runsOnWrongBuild).toEqual([]);
  expect(d.runsOnTwoBuilds).toEqual([]);
  expect(d.runsLeftOnStoppedBuild).toEqual([]);
  expect(d.openOnAAtEnd).toBe(0);
  expect(d.nondeterministicTaskFailures).toBe(0);
  expect(d.nondeterminismLogLines).toEqual([]);
  expect(d.runsPerBuild.A?.bookingWorkflow).toBeGreaterThan(0);
  expect(d.runsPerBuild.B?.bookingWorkflow).toBeGreaterThan(0);
  expect(Object.keys(d.runsPerBuild).sort()).toEqual(['A', 'B']);
});

test('every booking was started and every invariant held', () => {
  expectEveryInvariantHeld(report, BOOKINGS);
});
