/**
 * The deploy drill small (chaos/run.ts with `deploy`, on the production engine): build A's workers versioned and
 * current from the first booking, build B (changed commands, no patch) started beside them, gated and made current,
 * rolled back to A, forward to B, then A drained and stopped, while workers, nodes and PostgreSQL are killed as in
 * every prod chaos run; build C, whose code fails its first workflow task, is refused by its gate run, and once A
 * is stopped a rollout back to it is refused; build D, whose new runs fail though it replays and passes its gate run,
 * is ramped and the ramp undoes itself; order-status callbacks sent through the callback receiver meanwhile each
 * reach a run of their reference, on either build. Every existing invariant holds, and: every gate passed, no workflow task failed for
 * nondeterminism, every run ran on one build (the one current when its first task was handed out), and nothing was
 * left on A when it stopped. The full drill is `npm run chaos -- --deploy`.
 */
import { temporal } from '@temporalio/proto';
import { routingAt } from '../../chaos/deploy-check';
import { NONDETERMINISM, runBuilds } from '../../chaos/history';
import type { DeployRecord } from '../../chaos/deploy';
import type { ChaosReport } from '../../chaos/report';
import { CHAOS_RECOVERY } from '../../chaos/run';
import { expectEveryInvariantHeld, runChaosSmoke } from '../harness/chaos-smoke';

/**
 * Setup ~30 s, starts 90 s (those open longest first, so the drain after the last start is short), drain ≤ 170 s
 * (A's last booking included).
 */
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
    // Not shorter: a forward change that meets node-2's SIGKILL has taken ~48 s to return, and B must still get
    // bookings of its own after it.
    minutes: 1.5,
    startOrder: 'longest-first',
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

test('the checks find what they look for: a run on two builds, a task failed for nondeterminism, the routing then', () => {
  const at = (s: number) => ({ seconds: s, nanos: 0 });
  // Plain numbers where the proto types say Long: runBuilds reads them with Number().
  const events = [
    { eventId: 1, eventTime: at(100), workflowExecutionStartedEventAttributes: {} },
    { eventId: 3, eventTime: at(101), workflowTaskStartedEventAttributes: {} },
    {
      eventId: 4,
      eventTime: at(102),
      workflowTaskCompletedEventAttributes: {
        startedEventId: 3,
        deploymentVersion: { deploymentName: 'chaos', buildId: 'a-1' },
      },
    },
    { eventId: 6, eventTime: at(103), workflowTaskStartedEventAttributes: {} },
    {
      eventId: 7,
      eventTime: at(104),
      workflowTaskFailedEventAttributes: {
        cause: temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
        failure: { message: '[TMPRL1100] Nondeterminism error: Timer machine does not handle this event' },
      },
    },
    { eventId: 9, eventTime: at(105), workflowTaskCompletedEventAttributes: { workerDeploymentVersion: 'chaos:b-1' } },
    { eventId: 10, eventTime: at(106), workflowExecutionCompletedEventAttributes: {} },
  ] as unknown as Parameters<typeof runBuilds>[3];
  const run = runBuilds('booking:x', 'r1', 'bookingWorkflow', events);
  expect(run.builds).toEqual(['a-1', 'b-1']);
  expect(run).toMatchObject({ startMs: 100_000, firstTaskMs: 101_000, closeMs: 106_000 });
  expect(run.taskFailures).toHaveLength(1);
  expect(NONDETERMINISM.test(`${run.taskFailures[0]!.cause} ${run.taskFailures[0]!.message}`)).toBe(true);
  expect(NONDETERMINISM.test('WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND ')).toBe(false);

  const record = {
    steps: [
      { kind: 'first', build: 'A', setBeforeMs: 0, setAfterMs: 100 },
      { kind: 'deploy', build: 'B', setBeforeMs: 50_000, setAfterMs: 51_000 },
    ],
  } as DeployRecord;
  expect(routingAt(record, 20_000)).toBe('A');
  expect(routingAt(record, 50_500)).toBe('either');
  expect(routingAt(record, 70_000)).toBe('B');
});

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

test('the gate run refused build C, whose code fails its first task, and a rollout to the stopped build A', () => {
  const timeline = report.chaos.timeline.join('\n');
  expect(timeline).toMatch(/build C: gate run refuse: build \S+ failed its first workflow task/);
  expect(timeline).toMatch(/rollout to stopped build A: refused: .*no live worker/);
  expect(report.deploy!.errors).toEqual([]);
});

/** The drill's parts this file reads beyond DeployReport's own fields (chaos/deploy-check.ts adds them). */
interface DrillExtras {
  ramp: { exitCode: number; rolledBack: boolean; currentBefore: string; currentAfter: string; runsOnD: number } & {
    steps: Array<{ percent: number; health: { failures: number } }>;
    dStoppedAfterRampSeconds: number | null;
  };
  callbacks: { sent: number; accepted: number; reachedRun: number; takenByABuild: number; refused: number };
}

test('every gate run passed on the gate workflow itself (B carries it too), not with a warning', () => {
  for (const s of report.deploy!.steps.slice(1)) {
    expect(s.gate?.lines.join('\n')).toMatch(/Gate run on build \S+: PASS \(deploy-gate:/);
  }
});

test('the ramp of build D, whose new runs fail, undid itself; D took no run and was stopped', () => {
  const { ramp } = report.deploy as unknown as DrillExtras;
  expect(ramp).toMatchObject({ exitCode: 1, rolledBack: true, runsOnD: 0 });
  expect(ramp.currentAfter).toBe(ramp.currentBefore);
  expect(ramp.steps.at(-1)!.health.failures).toBeGreaterThan(0);
  expect(ramp.dStoppedAfterRampSeconds).not.toBeNull();
});

test('callbacks sent while builds moved each reached a run of their reference, and a build took it', () => {
  const { callbacks } = report.deploy as unknown as DrillExtras;
  expect(callbacks.accepted).toBeGreaterThan(0);
  expect(callbacks).toMatchObject({ refused: 0, reachedRun: callbacks.accepted, takenByABuild: callbacks.accepted });
});

test('every run finished on the build it started on, the one current then; none failed for nondeterminism', () => {
  const d = report.deploy!;
  expect(d.runsOnWrongBuild).toEqual([]);
  expect(d.runsOnTwoBuilds).toEqual([]);
  expect(d.runsLeftOnStoppedBuild).toEqual([]);
  expect(d.openOnAAtEnd).toBe(0);
  expect(d.nondeterministicTaskFailures).toBe(0);
  expect(d.nondeterminismLogLines).toEqual([]);
  expect(Object.keys(d.runsPerBuild).sort()).toEqual(['A', 'B']);
  // Both builds took runs of their own (the sweep at the end aside). B may take few bookings: the forward change
  // meets node-2's SIGKILL, and such a change has taken ~48 s to return, new runs going to A meanwhile.
  const ownRuns = (label: 'A' | 'B') =>
    Object.entries(d.runsPerBuild[label] ?? {})
      .filter(([type]) => type !== 'reconciliationSweepWorkflow')
      .reduce((sum, [, n]) => sum + n, 0);
  expect(ownRuns('A')).toBeGreaterThan(0);
  expect(ownRuns('B')).toBeGreaterThan(0);
});

test('every booking was started and every invariant held', () => {
  expectEveryInvariantHeld(report, BOOKINGS);
});
