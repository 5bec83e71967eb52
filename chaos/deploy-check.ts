/**
 * The deploy drill's own invariants, from every run's raw history once the run is over (bookings, order runs, the
 * sweep): no workflow task failed for nondeterminism (histories and worker logs), every run's workflow tasks were
 * all completed by one build, no run was left open on a build that was stopped, and each new run went to the build
 * current when its first task was handed out (B while B was current, A while A was); both builds took new runs.
 * The ramp of build D (whose new runs fail) undid itself, no run completed a task on D, and D was stopped; every
 * order-status callback the receiver accepted reached a run of its reference and was taken by a build.
 */
import type { Client } from '@temporalio/client';
import { checkOrderSignal, supplierOrderUpdateSignal } from '../src/api/contract/index';
import { GATE_WORKFLOW_TYPE } from '../src/operators/deploy/gate-run';
import { NONDETERMINISM, runBuilds, type HistoryEvent, type RunBuilds } from './history';
import type { BuildLabel, DeployRecord } from './deploy';
import { CALLBACK_RECEIVER_IDENTITY, type CallbackSent } from './deploy-callbacks';
import type { DeployReport } from './report';
import type { Stack } from './setup';
import type { Log } from './stack';
import { forEachLimit, retry, seconds } from './timing';
import type { FireRecord } from './under-fire';

/**
 * A run whose first task was handed out this close to a routing change may be on either build: the change reaches
 * the task queue's partitions a moment after the call returns, and a task handed out just before it may complete
 * after. Such runs are counted apart, never judged.
 */
const SWITCH_GRACE_BEFORE_MS = 1_000;
const SWITCH_GRACE_AFTER_MS = 5_000;

/**
 * Every run the namespace holds, each history read raw; the deploy's gate runs left out: each is pinned to its
 * target by an override whatever routing says (or left unfinished on a build the drill expects to refuse), and the
 * drill judges them itself (chaos/deploy.ts).
 */
async function everyRun(raw: Client): Promise<{ runs: RunBuilds[]; hints: CallbackHintSeen[] }> {
  const infos: Array<{ workflowId: string; runId: string; type: string }> = [];
  for await (const info of raw.workflow.list({ query: `WorkflowType != '${GATE_WORKFLOW_TYPE}'` })) {
    infos.push({ workflowId: info.workflowId, runId: info.runId, type: info.type });
  }
  const out: RunBuilds[] = [];
  const hints: CallbackHintSeen[] = [];
  await forEachLimit(infos, 8, async (i) => {
    const history = await retry(() => raw.workflow.getHandle(i.workflowId, i.runId).fetchHistory());
    const run = runBuilds(i.workflowId, i.runId, i.type, history.events ?? []);
    out.push(run);
    hints.push(...callbackHints(run, history.events ?? []));
  });
  return { runs: out, hints };
}

/** A callback's hint as a run's history holds it: a signal the receiver sent, and whether a build then took it. */
interface CallbackHintSeen {
  workflowId: string;
  runId: string;
  signal: string;
  atMs: number;
  /** A workflow task completed after it in the run: a build read it. */
  taken: boolean;
  /** The build(s) that ran the run. */
  builds: string[];
}

const HINT_SIGNALS = new Set([supplierOrderUpdateSignal.name, checkOrderSignal.name]);

function callbackHints(run: RunBuilds, events: HistoryEvent[]): CallbackHintSeen[] {
  const out: CallbackHintSeen[] = [];
  const ms = (t: HistoryEvent['eventTime']) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
  events.forEach((e, i) => {
    const s = e.workflowExecutionSignaledEventAttributes;
    if (!s || s.identity !== CALLBACK_RECEIVER_IDENTITY || !HINT_SIGNALS.has(s.signalName ?? '')) return;
    out.push({
      workflowId: run.workflowId,
      runId: run.runId,
      signal: s.signalName ?? '',
      atMs: ms(e.eventTime),
      taken: events.slice(i + 1).some((later) => later.workflowTaskCompletedEventAttributes),
      builds: run.builds,
    });
  });
  return out;
}

/** How far a hint's signal may be written before the callback was sent (one machine's clock, ms rounding). */
const HINT_EARLY_MS = 1_000;
/** How long after the callback was sent its hint must be written (the sender's retries included). */
const HINT_LATE_MS = 60_000;

/** Each callback the receiver accepted, matched with the hint it became (see CallbackHintSeen). */
function matchCallbacks(
  sent: CallbackSent[],
  hints: CallbackHintSeen[],
): Array<CallbackSent & { reached?: CallbackHintSeen }> {
  const unused = [...hints].sort((a, b) => a.atMs - b.atMs);
  return [...sent]
    .sort((a, b) => a.sentMs - b.sentMs)
    .map((c) => {
      const ids = [`booking:${c.customerReferenceNo}`, `order:${c.customerReferenceNo}`];
      const i = unused.findIndex(
        (h) => ids.includes(h.workflowId) && h.atMs >= c.sentMs - HINT_EARLY_MS && h.atMs <= c.sentMs + HINT_LATE_MS,
      );
      return i < 0 ? c : { ...c, reached: unused.splice(i, 1)[0]! };
    });
}

/** Which build was current at `t`, or `either` within the grace around a change. */
export function routingAt(record: DeployRecord, t: number): BuildLabel | 'either' | undefined {
  const changes = record.steps.filter((s) => s.setBeforeMs !== undefined && s.setAfterMs !== undefined);
  let current: BuildLabel | undefined;
  for (const s of changes) {
    if (t >= s.setBeforeMs! - SWITCH_GRACE_BEFORE_MS && t <= s.setAfterMs! + SWITCH_GRACE_AFTER_MS) {
      return current === undefined || current === s.build ? s.build : 'either';
    }
    if (t > s.setAfterMs!) current = s.build;
  }
  return current;
}

/** The drill's checks, its violations as lines, the references they name, and its part of the report. */
export async function checkDeploy(
  stack: Stack,
  fire: FireRecord,
  log: Log,
): Promise<{ violations: string[]; implicated: string[]; report: DeployReport }> {
  const d = stack.deploy!;
  const record = d.record;
  const labelOf = (buildId: string): string =>
    buildId === d.builds.A.buildId
      ? 'A'
      : buildId === d.builds.B.buildId
        ? 'B'
        : buildId && buildId === record.ramp?.buildId
          ? 'D'
          : buildId || 'unversioned';
  log('deploy: reading every run for its builds');
  const { runs, hints } = await everyRun(stack.raw);
  const byRunId = new Map(runs.map((r) => [r.runId, r]));
  const violations: string[] = [];
  const implicated: string[] = [...record.implicated];
  const refOf = (r: RunBuilds) => r.workflowId.replace(/^(booking|order):/, '');

  // Nondeterminism: in the histories and in every worker log line.
  const taskFailures = runs.flatMap((r) => r.taskFailures.map((f) => ({ run: r, ...f })));
  const nondeterministic = taskFailures.filter((f) => NONDETERMINISM.test(`${f.cause} ${f.message}`));
  const logHits = stack.fleet.lines.filter((l) => NONDETERMINISM.test(l.line));
  for (const f of nondeterministic) {
    violations.push(`nondeterminism: ${f.run.workflowId} run ${f.run.runId}: ${f.cause}: ${f.message}`);
    implicated.push(refOf(f.run));
  }
  if (logHits.length > 0) {
    violations.push(
      `nondeterminism: ${logHits.length} worker log lines, first: ${logHits[0]!.worker} ${logHits[0]!.line.slice(0, 300)}`,
    );
  }

  // One build per run, and a build on every task.
  const mixed = runs.filter((r) => r.builds.length > 1);
  const unversioned = runs.filter((r) => r.builds.includes(''));
  for (const r of mixed) {
    violations.push(`run on two builds: ${r.workflowId} run ${r.runId}: ${r.builds.map(labelOf).join(' → ')}`);
    implicated.push(refOf(r));
  }
  for (const r of unversioned) {
    violations.push(`workflow task completed by no build: ${r.workflowId} run ${r.runId}`);
    implicated.push(refOf(r));
  }

  // Nothing left on A once it was stopped.
  const stoppedAt = record.aDrain?.stoppedAtMs;
  const onA = runs.filter((r) => r.builds.includes(d.builds.A.buildId));
  const leftOnA = stoppedAt === undefined ? [] : onA.filter((r) => r.closeMs === undefined || r.closeMs > stoppedAt);
  for (const r of leftOnA) {
    violations.push(
      `run left open on stopped build A: ${r.workflowId} run ${r.runId} (${r.closeMs === undefined ? 'still open' : `closed ${seconds(r.closeMs - stoppedAt!)} s after A stopped`})`,
    );
    implicated.push(refOf(r));
  }

  // New runs on the build current when their first task was handed out; continued runs on their predecessor's.
  const wrong: DeployReport['runsOnWrongBuild'] = [];
  let ambiguous = 0;
  for (const r of runs) {
    const build = r.builds.length === 1 ? labelOf(r.builds[0]!) : undefined;
    if (!build) continue;
    if (r.continuedFromRunId) {
      const before = byRunId.get(r.continuedFromRunId);
      const prior = before && before.builds.length === 1 ? labelOf(before.builds[0]!) : undefined;
      if (prior && prior !== build)
        wrong.push({
          workflowId: r.workflowId,
          runId: r.runId,
          expected: prior,
          actual: build,
          why: 'continued from a run on another build',
        });
      continue;
    }
    const expected = r.firstTaskMs === undefined ? undefined : routingAt(record, r.firstTaskMs);
    if (expected === 'either') ambiguous++;
    else if (expected && expected !== build) {
      wrong.push({
        workflowId: r.workflowId,
        runId: r.runId,
        expected,
        actual: build,
        why: `first task handed out at t+${seconds(r.firstTaskMs! - fire.phases.phaseStart)} s`,
      });
    }
  }
  for (const w of wrong) {
    violations.push(
      `run on the wrong build: ${w.workflowId} run ${w.runId}: on ${w.actual}, expected ${w.expected} (${w.why})`,
    );
    implicated.push(w.workflowId.replace(/^(booking|order):/, ''));
  }

  const newRuns = (label: BuildLabel) =>
    runs.filter((r) => !r.continuedFromRunId && r.builds.length === 1 && labelOf(r.builds[0]!) === label).length;
  for (const label of ['A', 'B'] as const) {
    if (newRuns(label) === 0) violations.push(`build ${label} took no new run`);
  }
  const windows = routingWindows(record, runs, labelOf, fire.phases.phaseStart);
  for (const w of windows) {
    if ((w.runs[w.build] ?? 0) === 0 && Object.keys(w.runs).length > 0) {
      violations.push(
        `no new run on build ${w.build} while it was current (t+${w.fromSeconds}–${w.toSeconds ?? 'end'} s)`,
      );
    }
  }

  // The drill itself: every gate passed, every change took, A drained and stopped.
  for (const s of record.steps) {
    if (s.gate && s.gate.verdict !== 'pass')
      violations.push(
        `replay gate for build ${s.build} (${s.kind}): ${s.gate.verdict}: ${s.gate.reasons.slice(0, 3).join('; ')}`,
      );
    else if (s.setAfterMs === undefined)
      violations.push(`build ${s.build} not made current (${s.kind}): ${s.error ?? ''}`);
  }
  violations.push(...record.errors.map((e) => `deploy drill: ${e}`));
  const openOnA = await retry(
    async () =>
      (
        await stack.raw.workflow.count(
          `TemporalWorkerDeploymentVersion = '${d.deploymentName}:${d.builds.A.buildId}' AND ExecutionStatus = 'Running'`,
        )
      ).count,
  ).catch(() => -1);
  if (stoppedAt !== undefined && openOnA !== 0)
    violations.push(`build A stopped with ${openOnA} runs open on it (visibility)`);

  const ramp = rampChecks(record, runs, violations, implicated);
  const callbacks = callbackChecks(record, hints, labelOf, violations);

  const kills = stack.fleet.stats.killsBySlot;
  const killsByBuild: Record<string, number> = {};
  for (const [slot, n] of Object.entries(kills)) killsByBuild[slot[0]!] = (killsByBuild[slot[0]!] ?? 0) + n;
  const runsPerBuild: DeployReport['runsPerBuild'] = {};
  for (const r of runs) {
    const label = r.builds.length === 1 ? labelOf(r.builds[0]!) : r.builds.length === 0 ? 'no task completed' : 'mixed';
    const row = (runsPerBuild[label] ??= {});
    row[r.type] = (row[r.type] ?? 0) + 1;
  }
  const drain = record.aDrain;
  return {
    violations,
    implicated,
    report: {
      deploymentName: record.deploymentName,
      builds: record.builds,
      operator: d.operator.options.identity ?? '',
      // The first change was made before the phase began: its time from the phase start is negative.
      steps: record.steps.map((s) =>
        s.kind === 'first' && s.setBeforeMs !== undefined
          ? { ...s, atSeconds: seconds(s.setBeforeMs - fire.phases.phaseStart) }
          : s,
      ),
      deploys: record.steps.filter((s) => s.kind !== 'rollback' && s.setAfterMs !== undefined).length,
      rollbacks: record.steps.filter((s) => s.kind === 'rollback' && s.setAfterMs !== undefined).length,
      bStartedAtSeconds: record.bStartedAtSeconds ?? null,
      bReadyMs: record.bReadyMs ?? null,
      killsByBuild,
      timeToDrainASeconds:
        drain?.drainedAtMs !== undefined ? seconds(drain.drainedAtMs - drain.notCurrentSinceMs) : null,
      aStoppedAtSeconds: stoppedAt !== undefined ? seconds(stoppedAt - fire.phases.phaseStart) : null,
      aDrainSamples: drain?.samples ?? [],
      runsRead: runs.length,
      runsPerBuild,
      newRunsByWindow: windows,
      runsNearAChange: ambiguous,
      runsOnWrongBuild: wrong,
      runsOnTwoBuilds: mixed.map((r) => `${r.workflowId} ${r.runId}: ${r.builds.map(labelOf).join(' → ')}`),
      runsLeftOnStoppedBuild: leftOnA.map((r) => `${r.workflowId} ${r.runId}`),
      openOnAAtEnd: openOnA,
      workflowTaskFailures: tally(taskFailures.map((f) => f.cause)),
      workflowTaskFailureSamples: taskFailures
        .slice(0, 20)
        .map((f) => ({ workflowId: f.run.workflowId, runId: f.run.runId, cause: f.cause, message: f.message })),
      nondeterministicTaskFailures: nondeterministic.length,
      nondeterminismLogLines: logHits.slice(0, 20).map((l) => `${l.worker} ${l.line.slice(0, 500)}`),
      errors: record.errors,
      ramp,
      callbacks,
    } as DeployReport,
  };
}

/**
 * The ramp of build D: undone by itself (exit 1, rolled back) after seeing D's runs fail, routing back as it was, no
 * run that completed a task on D, D drained and stopped.
 */
function rampChecks(record: DeployRecord, runs: RunBuilds[], violations: string[], implicated: string[]) {
  const r = record.ramp;
  if (!r) {
    violations.push('deploy drill: the ramp of build D (new runs fail) did not happen');
    return null;
  }
  const last = r.steps?.at(-1);
  if (r.exitCode !== 1 || !r.rolledBack) {
    violations.push(
      `ramp of build D, whose new runs fail, was not undone by itself (exit ${r.exitCode ?? 'none'}, ` +
        `steps ${JSON.stringify(r.steps ?? [])})`,
    );
  } else if (!last || last.health.failures === 0) {
    violations.push('ramp of build D undone without a failure seen on D');
  }
  if (r.currentBefore === undefined || r.currentAfter !== r.currentBefore || r.rampingAfter !== null) {
    violations.push(
      `after the ramp of D, routing is current ${r.currentAfter ?? '?'} ramping ${r.rampingAfter ?? '?'}; ` +
        `before it, current ${r.currentBefore ?? '?'}`,
    );
  }
  violations.push(...r.errors.map((e) => `deploy drill: ${e}`));
  if (r.stoppedAtMs === undefined) violations.push('build D was never stopped');
  const onD = runs.filter((run) => run.builds.includes(r.buildId));
  for (const run of onD) {
    violations.push(`run completed a task on build D (whose new runs fail): ${run.workflowId} run ${run.runId}`);
    implicated.push(run.workflowId.replace(/^(booking|order):/, ''));
  }
  // The runs D failed: their first completed task came after a failed one, begun while D took new runs.
  const during = (t?: number) => t !== undefined && t >= r.rampBeganMs! && t <= r.rampEndedMs! + 60_000;
  const failedThenFinished = runs.filter(
    (run) => run.taskFailures.length > 0 && run.builds.length === 1 && during(run.firstTaskMs),
  );
  return {
    buildId: r.buildId,
    startedAtSeconds: r.startedAtSeconds,
    rampSeconds: r.rampEndedMs && r.rampBeganMs ? seconds(r.rampEndedMs - r.rampBeganMs) : null,
    exitCode: r.exitCode ?? null,
    rolledBack: r.rolledBack ?? false,
    steps: r.steps ?? [],
    currentBefore: r.currentBefore ?? null,
    currentAfter: r.currentAfter ?? null,
    dStoppedAfterRampSeconds:
      r.stoppedAtMs !== undefined && r.rampEndedMs !== undefined ? seconds(r.stoppedAtMs - r.rampEndedMs) : null,
    runsOnD: onD.length,
    runsWithAFailedTaskFinishedElsewhere: failedThenFinished.length,
    lines: r.lines,
  };
}

/**
 * The callbacks: every one the receiver accepted (2xx) reached a run of its reference (a hint signal under the
 * receiver's identity, written within a minute) and a build then took it (a workflow task completed after it). A
 * callback the receiver refused is a finding; one it deferred (503: Temporal unreachable, or the order read moments
 * ago) after every try is counted.
 */
function callbackChecks(
  record: DeployRecord,
  hints: CallbackHintSeen[],
  labelOf: (buildId: string) => string,
  violations: string[],
) {
  const c = record.callbacks;
  if (!c) return null;
  violations.push(...c.errors.map((e) => `callbacks: ${e}`));
  const accepted = c.sent.filter((s) => s.httpStatus >= 200 && s.httpStatus < 300);
  const refused = c.sent.filter((s) => s.httpStatus >= 400 && s.httpStatus !== 503);
  const unanswered = c.sent.filter((s) => s.httpStatus === 0 || s.httpStatus === 503);
  for (const s of refused) {
    violations.push(`callback for ${s.customerReferenceNo} refused by the receiver: HTTP ${s.httpStatus}`);
  }
  const matched = matchCallbacks(accepted, hints);
  const lost = matched.filter((m) => !m.reached);
  const untaken = matched.filter((m) => m.reached && !m.reached.taken);
  for (const m of lost) {
    violations.push(`callback for ${m.customerReferenceNo} accepted but reached no run of its reference`);
  }
  for (const m of untaken) {
    violations.push(
      `callback for ${m.customerReferenceNo} reached ${m.reached!.workflowId} run ${m.reached!.runId} ` +
        `(${m.reached!.builds.map(labelOf).join(' → ') || 'no build'}), and no build took it`,
    );
  }
  if (accepted.length === 0) violations.push('callbacks: none accepted while builds moved');
  const reached = matched.filter((m) => m.reached);
  const byRunBuild: Record<string, number> = {};
  let otherThanCurrent = 0;
  for (const m of reached) {
    const label = m.reached!.builds.map(labelOf).join(' → ') || 'no build';
    byRunBuild[label] = (byRunBuild[label] ?? 0) + 1;
    if (m.currentBuild && !m.reached!.builds.includes(m.currentBuild)) otherThanCurrent++;
  }
  return {
    sent: c.sent.length,
    accepted: accepted.length,
    refused: refused.length,
    deferredOrUnanswered: unanswered.length,
    reachedRun: reached.length,
    takenByABuild: reached.length - untaken.length,
    bySignal: tally(reached.map((m) => m.reached!.signal)),
    byRunBuild,
    /** Reached a run on another build than the one current when it was sent. */
    toARunOnAnotherBuildThanCurrent: otherThanCurrent,
    receiverStats: c.stats ?? null,
  };
}

/** Per stretch of routing (from one change to the next), the new runs (not continued) whose first task fell in it, by build. */
function routingWindows(
  record: DeployRecord,
  runs: RunBuilds[],
  labelOf: (buildId: string) => string,
  phaseStart: number,
): DeployReport['newRunsByWindow'] {
  const changes = record.steps.filter((s) => s.setAfterMs !== undefined);
  return changes.map((s, i) => {
    const from = s.setAfterMs!;
    const to = changes[i + 1]?.setBeforeMs;
    const inside = runs.filter(
      (r) =>
        !r.continuedFromRunId &&
        r.firstTaskMs !== undefined &&
        r.firstTaskMs >= from &&
        (to === undefined || r.firstTaskMs < to),
    );
    return {
      kind: s.kind,
      build: s.build,
      fromSeconds: seconds(from - phaseStart),
      toSeconds: to === undefined ? null : seconds(to - phaseStart),
      runs: tally(inside.map((r) => (r.builds.length === 1 ? labelOf(r.builds[0]!) : 'mixed'))),
    };
  });
}

function tally(labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
}
