/**
 * The deploy drill's own invariants, from every run's raw history once the run is over (bookings, order runs, the
 * sweep): no workflow task failed for nondeterminism (histories and worker logs), every run's workflow tasks were
 * all completed by one build, no run was left open on a build that was stopped, and each new run went to the build
 * current when its first task was handed out (B while B was current, A while A was); both builds took new runs.
 */
import type { Client } from '@temporalio/client';
import { GATE_WORKFLOW_TYPE } from '../src/operators/deploy/gate-run';
import { NONDETERMINISM, runBuilds, type RunBuilds } from './history';
import type { BuildLabel, DeployRecord } from './deploy';
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
async function everyRun(raw: Client): Promise<RunBuilds[]> {
  const infos: Array<{ workflowId: string; runId: string; type: string }> = [];
  for await (const info of raw.workflow.list({ query: `WorkflowType != '${GATE_WORKFLOW_TYPE}'` })) {
    infos.push({ workflowId: info.workflowId, runId: info.runId, type: info.type });
  }
  const out: RunBuilds[] = [];
  await forEachLimit(infos, 8, async (i) => {
    const history = await retry(() => raw.workflow.getHandle(i.workflowId, i.runId).fetchHistory());
    out.push(runBuilds(i.workflowId, i.runId, i.type, history.events ?? []));
  });
  return out;
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
    buildId === d.builds.A.buildId ? 'A' : buildId === d.builds.B.buildId ? 'B' : buildId || 'unversioned';
  log('deploy: reading every run for its builds');
  const runs = await everyRun(stack.raw);
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
    },
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
