/**
 * The chaos run's report: the JSON written to chaos/results/chaos-<seed>.json, and the table printed at
 * the end. `violations` lists every broken invariant in one line each; a run is `ok` when it is empty.
 */
import type { RecoveryPolicy } from '../src/api/contract/index';
import type { SandboxStats } from '../dev/sandbox/server';
import type { Money } from '../src/api/values/index';
import { type SecretHit } from '../dev/codec/scan';
import { type CancellationNotDone, type CancelSendViolation, type FeeViolation } from './check/cancels';
import { type ClassCoverage } from './check/coverage';
import { type CancellationObservation } from './check/observation';
import { type Orphan } from './check/orders';
import type { DeployStep } from './deploy';
import type { NodeKill, PostgresRestart } from './faults';
import type { FaultClass } from './mix';

export interface BookingProblem {
  customerReferenceNo: string;
  detail: string;
}

/** The reconciliation sweep at the end of a run, against the orphans the run made on purpose. */
export interface ReconciliationReport {
  /** Bookings picked to be made orphans (`--orphans`). */
  orphansAsked: number;
  /** Bookings terminated on purpose once Book had made their order: not the run's failures, the sweep's quarry. */
  orphansMade: Array<{ customerReferenceNo: string; atSeconds: number }>;
  /** Picked, but not made an orphan (the order settled or the workflow closed first): the sweep must skip them. */
  orphansNotMade: Array<{ customerReferenceNo: string; why: string }>;
  /** What the sweep workflow returned (null when it did not finish: see sweepError). */
  sweep: {
    workflowId: string;
    window: { start: string; end: string };
    requests: number;
    ordersSeen: number;
    unreadable: number;
    orphans: Array<{ customerReferenceNo: string; status: number; reason: string }>;
    mismatches: Array<{ customerReferenceNo: string; status: number; reason: string }>;
  } | null;
  sweepError?: string;
  /** Orders the sandbox holds after the sweep. */
  supplierOrders: number;
  /** References whose order status the bookings' outcomes do not account for (the run's own oracle). */
  expectedMismatches: string[];
  /** Each must be empty: orphans made but not reported, reported but not made; mismatches likewise. */
  orphansMissed: string[];
  orphansExtra: string[];
  mismatchesMissed: string[];
  mismatchesExtra: string[];
}

/** The deploy drill (`--deploy`, chaos/deploy.ts and chaos/deploy-check.ts): what it did and what held. */
export interface DeployReport {
  deploymentName: string;
  builds: Record<'A' | 'B', string>;
  /** The identity the routing changes were made with. */
  operator: string;
  /** Every routing change in order (first: A before the first booking), with its replay gate's counts. */
  steps: DeployStep[];
  /** Changes to a build that took (the first included), and rollbacks to A that took. */
  deploys: number;
  rollbacks: number;
  bStartedAtSeconds: number | null;
  bReadyMs: number | null;
  /** Worker SIGKILLs per build. */
  killsByBuild: Record<string, number>;
  /**
   * From the moment A stopped being current (the call that made B current again returned) until no open run was on A;
   * null: never.
   */
  timeToDrainASeconds: number | null;
  aStoppedAtSeconds: number | null;
  /** openRunsOn(A) readings while it drained: [seconds since A stopped being current, count]. */
  aDrainSamples: Array<[number, number]>;
  /** Runs whose history was read (every run in the namespace). */
  runsRead: number;
  /** Build (A, B, mixed, no task completed) → workflow type → runs. */
  runsPerBuild: Record<string, Record<string, number>>;
  /** Per stretch of routing: the new runs whose first task was handed out in it, by the build they ran on. */
  newRunsByWindow: Array<{
    kind: DeployStep['kind'];
    build: 'A' | 'B';
    fromSeconds: number;
    toSeconds: number | null;
    runs: Record<string, number>;
  }>;
  /** New runs whose first task was handed out within a few seconds of a change: either build is right. */
  runsNearAChange: number;
  /** Must be empty: a new run on the build not current, or a continued run on another build than its predecessor. */
  runsOnWrongBuild: Array<{ workflowId: string; runId: string; expected: string; actual: string; why: string }>;
  /** Must be empty: runs whose workflow tasks were completed by two builds. */
  runsOnTwoBuilds: string[];
  /** Must be empty: runs on A still open (or closed) after A's workers were stopped. */
  runsLeftOnStoppedBuild: string[];
  /** Visibility's count of open runs on A at the end (-1: not counted). */
  openOnAAtEnd: number;
  /** WORKFLOW_TASK_FAILED events in every history, by cause (informational but for nondeterminism). */
  workflowTaskFailures: Record<string, number>;
  workflowTaskFailureSamples: Array<{ workflowId: string; runId: string; cause: string; message: string }>;
  /** Must be 0: task failures for nondeterminism, and worker log lines that name it. */
  nondeterministicTaskFailures: number;
  nondeterminismLogLines: string[];
  errors: string[];
}

export interface ChaosReport {
  seed: number;
  /** `dev`: the CLI dev server on SQLite; `prod`: PostgreSQL and two server nodes (dev/prod). */
  engine: 'dev' | 'prod';
  ok: boolean;
  violations: string[];
  options: {
    n: number;
    minutes: number;
    killEverySeconds: number;
    chaosTailSeconds: number;
    serverRestart: string;
    recovery: Partial<RecoveryPolicy>;
    supplierTimeoutsMs: Record<string, number>;
    hardLimitSeconds: number;
  };
  elapsedSeconds: number;
  phasesSeconds: { setup: number; starting: number; draining: number; collecting: number };
  bookings: { planned: number; started: number; startFailures: number; startRetries: number };
  /** Outcome kinds, plus `open`, `workflow-failed`, `orphaned`, `lost`, `not-started` for bookings without one. */
  outcomes: Record<string, number>;
  /** expected kind → actual kind → bookings (informational: chaos may turn a confirmation into `unresolved`). */
  expectedVsActual: Record<string, Record<string, number>>;
  /** Unresolved bookings by the supplier's order status at the end (`no order`, 1 Confirming, 2 Confirmed, 4 Failed). */
  unresolvedBySupplierStatus: Record<string, number>;
  /** Bookings that did not end as planned (first 200), with when they started and a one-line digest. */
  surprisesTotal: number;
  surprises: Array<{
    customerReferenceNo: string;
    startedAtSeconds: number;
    test: string;
    expected: string;
    actual: string;
    digest: string;
  }>;
  faultClasses: Record<FaultClass, ClassCoverage>;
  queryOrdersFaults: { injected: Record<string, number>; faultedCalls: Record<string, number> };
  supplier: {
    orders: number;
    /** Orders per booking reference → bookings. */
    ordersPerReference: Record<string, number>;
    duplicates: Array<{ ref: string; orders: number }>;
    strayOrders: string[];
    bookSendsOverLimit: Array<{ ref: string; bookSends: number }>;
    stats: Pick<SandboxStats, 'byOperation' | 'byStatus'>;
  };
  orphans: Orphan[];
  stuck: BookingProblem[];
  lost: BookingProblem[];
  workflowFailures: BookingProblem[];
  /** Cancellations on demand after confirmation (class cancelAfterConfirm): how each went, and their invariants. */
  cancellations: {
    planned: number;
    /** Those whose confirm (`{confirm: true, acceptedFee}`) was sent. */
    asked: number;
    /** The order run's outcome kind (or `skipped`: the booking did not end confirmed; `open`; `error`) → count. */
    byOutcome: Record<string, number>;
    /** Per kind (chaos/mix.ts CANCEL_KINDS): planned, the outcome expected, the outcomes seen. */
    byKind: Record<string, { planned: number; expected: string; outcomes: Record<string, number> }>;
    /** Window kinds whose booking confirmed too late to keep the planned timing (cancelled at the quoted fee instead). */
    windowMissed: number;
    /** Cancel calls the supplier received, by HTTP status and fault. */
    cancelCalls: number;
    cancelCallsByAnswer: Record<string, number>;
    /** Re-sends answered 400 "cannot be cancelled" after a taken Cancel (the lost-answer kind's repeat). */
    repeatsRefused: number;
    /** Orders in status 3 at the end. */
    ordersCancelled: number;
    /** Every order the supplier took a Cancel for: the fee it charged, the fee our confirm accepted. */
    feesCharged: Array<{ ref: string; status: number; charged: Money; accepted: Money | null | 'any' }>;
    /** Must be empty: Cancels sent after a refusal that proved nothing was done, after a settled answer, taken twice. */
    sendsOverRefusal: CancelSendViolation[];
    /** Must be empty: orders charged above what was accepted, or cancelled without our asking. */
    feesNotAccepted: FeeViolation[];
    /**
     * Must be empty: cancellations asked for that ended neither `cancelled`, nor in an outcome that needs a person,
     * nor refused to the caller's face (chaos/check/cancels.ts cancellationsNotDone).
     */
    notDone: CancellationNotDone[];
    /** Order runs still running after the drain (-1: could not be counted). */
    openOrderRunsAfterDrain: number;
    /** Class cancelOverlaps: how the overlaps went (its kinds' outcomes are in `byKind`). */
    overlaps: {
      planned: number;
      /** Cancelled during recovery: the answers to the caller's cancelBooking through `order:<ref>`. */
      callerAnswers: Record<string, number>;
      /** How the order runs those refused requests started ended (kind only), when another run took the cancellation. */
      callerRunOutcomes: Record<string, number>;
      /** Cancelled during recovery: the bookings' outcomes (`confirmed, cancelRequested`, …). */
      bookingOutcomes: Record<string, number>;
      /** Cancelled during recovery: further order runs started since the booking's cancel (a hand-off delivered twice). */
      otherRunOutcomes: Record<string, number>;
      /** Whose cancellation the order runs that ended say it was (`auto`: onCancelAfterBook; `caller`). */
      origins: Record<string, number>;
      /** Two confirms: the pair of answers, sorted. */
      duplicateAnswers: Record<string, number>;
      /** QueryOrders answers in which an order's listing lagged behind its Confirmed, and the orders concerned. */
      laggedAnswers: number;
      laggedOrders: number;
    };
    items: CancellationObservation[];
  };
  reconciliation: ReconciliationReport;
  chaos: {
    workerKills: number;
    workerRestarts: number;
    unexpectedWorkerExits: number;
    workerStartMs: { median: number; max: number };
    serverRestarts: number;
    serverDowntimeMs: number[];
    /** Prod engine: Temporal nodes SIGKILLed and started again (downMs until the node's frontend answered). */
    nodeKills: NodeKill[];
    /** Prod engine: PostgreSQL stopped (connections cut) and started again. */
    postgresRestarts: PostgresRestart[];
    queryOrdersFaultInjections: number;
    /** Kills and restarts, in seconds since the first booking was due. */
    timeline: string[];
  };
  secrets: { historiesScanned: number; logLinesScanned: number; hits: SecretHit[] };
  /** Where to look when something broke: the kept temp dir (logs, database) and exported histories. */
  artifacts: { tempDir?: string; histories: string[] };
  /** `--deploy` only. */
  deploy?: DeployReport;
}

/** The report as a plain-text table for the terminal. */
export function formatReport(r: ChaosReport): string {
  const rows: Array<[string, string]> = [
    ['seed', `${r.seed} (engine ${r.engine})`],
    [
      'elapsed',
      `${r.elapsedSeconds} s (setup ${r.phasesSeconds.setup}, starting ${r.phasesSeconds.starting}, draining ${r.phasesSeconds.draining}, collecting ${r.phasesSeconds.collecting})`,
    ],
    [
      'bookings started',
      `${r.bookings.started} / ${r.bookings.planned} (start failures ${r.bookings.startFailures}, retried starts ${r.bookings.startRetries})`,
    ],
    ...Object.entries(r.outcomes)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, n]): [string, string] => [`  outcome ${kind}`, String(n)]),
    ['supplier orders', `${r.supplier.orders}; per reference ${JSON.stringify(r.supplier.ordersPerReference)}`],
    ['duplicates (must be 0)', String(r.supplier.duplicates.length + r.supplier.strayOrders.length)],
    ['Book sends over the limit (must be 0)', String(r.supplier.bookSendsOverLimit.length)],
    ['orphans (must be 0)', String(r.orphans.length)],
    ['stuck (must be 0)', String(r.stuck.length)],
    ['lost (must be 0)', String(r.lost.length)],
    ['workflow failures (must be 0)', String(r.workflowFailures.length)],
    [
      'cancellations on demand',
      `${r.cancellations.asked} asked of ${r.cancellations.planned} planned: ${Object.entries(r.cancellations.byOutcome)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => `${k} ${n}`)
        .join(
          ', ',
        )}; ${r.cancellations.cancelCalls} Cancel calls ${JSON.stringify(r.cancellations.cancelCallsByAnswer)}`,
    ],
    ['Cancels sent twice over a refusal (must be 0)', String(r.cancellations.sendsOverRefusal.length)],
    ['cancelled at a fee nobody accepted (must be 0)', String(r.cancellations.feesNotAccepted.length)],
    ['cancellations neither done nor for a person (must be 0)', String(r.cancellations.notDone.length)],
    [
      'overlapping cancellations',
      `${r.cancellations.overlaps.planned} planned; during recovery the caller got ${JSON.stringify(r.cancellations.overlaps.callerAnswers)}, bookings ${JSON.stringify(r.cancellations.overlaps.bookingOutcomes)}, further order runs ${JSON.stringify(r.cancellations.overlaps.otherRunOutcomes)}; two confirms ${JSON.stringify(r.cancellations.overlaps.duplicateAnswers)}; order runs by origin ${JSON.stringify(r.cancellations.overlaps.origins)}; listings lagged in ${r.cancellations.overlaps.laggedAnswers} answers for ${r.cancellations.overlaps.laggedOrders} orders`,
    ],
    [
      'orphans made on purpose',
      `${r.reconciliation.orphansMade.length} / ${r.reconciliation.orphansAsked} asked (not made: ${r.reconciliation.orphansNotMade.length})`,
    ],
    [
      'reconciliation sweep',
      r.reconciliation.sweep
        ? `${r.reconciliation.sweep.ordersSeen} orders in ${r.reconciliation.sweep.requests} requests; orphans ${r.reconciliation.sweep.orphans.length}, mismatches ${r.reconciliation.sweep.mismatches.length} (expected ${r.reconciliation.expectedMismatches.length})`
        : `did not finish: ${r.reconciliation.sweepError ?? '?'}`,
    ],
    [
      'sweep missed / extra (must be 0)',
      `orphans ${r.reconciliation.orphansMissed.length} / ${r.reconciliation.orphansExtra.length}, mismatches ${r.reconciliation.mismatchesMissed.length} / ${r.reconciliation.mismatchesExtra.length}`,
    ],
    [
      'secret hits (must be 0)',
      `${r.secrets.hits.length} (${r.secrets.historiesScanned} histories, ${r.secrets.logLinesScanned} worker log lines)`,
    ],
    [
      'worker kills / restarts',
      `${r.chaos.workerKills} / ${r.chaos.workerRestarts} (unexpected exits ${r.chaos.unexpectedWorkerExits}; start ${r.chaos.workerStartMs.median} ms median, ${r.chaos.workerStartMs.max} max)`,
    ],
    ['server restarts', `${r.chaos.serverRestarts} (down ${r.chaos.serverDowntimeMs.join(', ') || '-'} ms)`],
    ...(r.engine === 'prod'
      ? ([
          [
            'Temporal node kills (SIGKILL)',
            r.chaos.nodeKills.map((k) => `${k.node} at t+${k.atSeconds} s, back in ${k.downMs} ms`).join('; ') || '-',
          ],
          [
            'PostgreSQL restarts',
            r.chaos.postgresRestarts.map((k) => `at t+${k.atSeconds} s, down ${k.downMs} ms`).join('; ') || '-',
          ],
        ] as Array<[string, string]>)
      : []),
    [
      'QueryOrders faults injected',
      `${r.chaos.queryOrdersFaultInjections} bursts: ${JSON.stringify(r.queryOrdersFaults.injected)}; calls faulted ${JSON.stringify(r.queryOrdersFaults.faultedCalls)}`,
    ],
  ];
  if (r.deploy) rows.push(...deployRows(r.deploy));
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);

  const classWidth = Math.max(...Object.keys(r.faultClasses).map((k) => k.length));
  lines.push('', `${'fault class'.padEnd(classWidth)}  assigned      exercised`);
  for (const [cls, c] of Object.entries(r.faultClasses)) {
    lines.push(`${cls.padEnd(classWidth)}  ${`${c.assigned} (${c.assignedPercent} %)`.padEnd(12)}  ${c.exercised}`);
  }
  lines.push('', 'cancellation kind → order run outcome');
  for (const [kind, row] of Object.entries(r.cancellations.byKind)) {
    lines.push(
      `  ${kind.padEnd(30)} ${row.planned} planned, expected ${row.expected}: ${Object.entries(row.outcomes)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  }
  lines.push('', `unresolved, by the supplier's order status: ${JSON.stringify(r.unresolvedBySupplierStatus)}`);
  lines.push('', 'expected → actual');
  for (const [expected, row] of Object.entries(r.expectedVsActual)) {
    lines.push(
      `  ${expected.padEnd(15)} ${Object.entries(row)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  }
  lines.push('', r.ok ? 'OK: every invariant held' : `VIOLATIONS:\n  ${r.violations.join('\n  ')}`);
  if (r.artifacts.tempDir) lines.push(`kept for inspection: ${r.artifacts.tempDir}`);
  for (const h of r.artifacts.histories) lines.push(`history: ${h}`);
  return lines.join('\n');
}

/** The deploy drill's rows of the table. */
function deployRows(d: DeployReport): Array<[string, string]> {
  const gateLine = (s: DeployStep): string => {
    if (!s.gate) return 'no gate (first build)';
    const c = s.gate.counts;
    if (!c) return `gate ${s.gate.verdict} in ${s.gate.seconds} s`;
    return (
      `gate ${s.gate.verdict} in ${s.gate.seconds} s: would continue ${c['would-continue'].replayed} (${c['would-continue'].failed} failed), ` +
      `own closed ${c['own-build'].replayed} (${c['own-build'].failed} failed), other builds closed ${c['closed-sample'].replayed} ` +
      `(${c['closed-sample'].failed} diverge), pinned elsewhere ${c['pinned-elsewhere'].replayed} (${c['pinned-elsewhere'].failed} diverge)`
    );
  };
  return [
    ['deploy drill', `deployment ${d.deploymentName}: A ${d.builds.A}, B ${d.builds.B}; operator ${d.operator}`],
    ['  deploys / rollbacks', `${d.deploys} / ${d.rollbacks}`],
    ...d.steps.map((s): [string, string] => [
      `  ${s.kind} → ${s.build}`,
      `t+${s.atSeconds} s, ${s.setAfterMs !== undefined ? `current after ${s.setAttempts} call(s), the last taking ${((s.setAfterMs - s.setBeforeMs!) / 1000).toFixed(1)} s` : `NOT current: ${(s.error ?? '').slice(0, 300)}`}; ${gateLine(s)}`,
    ]),
    ['  worker kills by build', JSON.stringify(d.killsByBuild)],
    [
      '  time to drain A',
      d.timeToDrainASeconds === null ? 'never' : `${d.timeToDrainASeconds} s (A stopped at t+${d.aStoppedAtSeconds} s)`,
    ],
    ['  runs per build', JSON.stringify(d.runsPerBuild)],
    [
      '  new runs by routing',
      d.newRunsByWindow
        .map((w) => `${w.build} t+${w.fromSeconds}–${w.toSeconds ?? 'end'}: ${JSON.stringify(w.runs)}`)
        .join('; ') + ` (${d.runsNearAChange} near a change)`,
    ],
    ['  runs on the wrong build (must be 0)', String(d.runsOnWrongBuild.length)],
    ['  runs on two builds (must be 0)', String(d.runsOnTwoBuilds.length)],
    [
      '  runs left on a stopped build (must be 0)',
      `${d.runsLeftOnStoppedBuild.length} (open on A at the end: ${d.openOnAAtEnd})`,
    ],
    [
      '  nondeterminism (must be 0)',
      `${d.nondeterministicTaskFailures} task failures, ${d.nondeterminismLogLines.length} log lines; workflow task failures ${JSON.stringify(d.workflowTaskFailures)} in ${d.runsRead} runs`,
    ],
  ];
}
