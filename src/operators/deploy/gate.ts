/**
 * The replay gate: before a build takes traffic, the histories it would have to continue are replayed against its
 * workflow bundle, read from the cluster itself. One failure stops the deploy.
 *
 * Which runs a new build would continue, when it is made current:
 *  - open runs with no build (started by unversioned workers, before versioning was switched on): the server sends
 *    their next task to the current build;
 *  - open runs whose type is AUTO_UPGRADE: they move to the current build;
 *  - open runs already pinned to this very build (from a ramp, or an earlier time it was current).
 * Those must replay. A run pinned to another build stays there, so its history replaying differently on the new
 * build is no danger: it is the expected sign that the new build changed commands, reported as "diverges" with the
 * number of runs the old build must still finish. Closed runs of this very build must replay too (the build would be
 * nondeterministic against itself); closed runs of other builds are a sample, reported the same way.
 * `strict` counts every divergence as a failure: for a fix that must reach runs already going (docs/testing.md).
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { parseDeploymentVersion, type WorkerBuild } from '../../runtime/config/build';
import { GATE_WORKFLOW_TYPE } from './gate-run';

export interface GateOptions {
  client: Client;
  /** The new build's workflow code (`npm run bundle`'s output, or the code itself). */
  workflowBundle: ReplayWorkerOptions['workflowBundle'];
  /** The payload codec the runs were written with (the workers' encryption keys). */
  dataConverter?: DataConverter;
  /** The build about to take traffic. */
  build: WorkerBuild;
  /** The booking task queue: the deployment's runs are those on it. */
  taskQueue: string;
  /** Recently closed runs to replay besides every open one (default 50). */
  closedSample?: number;
  /** Open runs pinned to other builds to replay, at most (default 200): they cannot break, they show divergence. */
  pinnedElsewhereSample?: number;
  /** Every divergence refuses, not only those of runs the build would continue. */
  strict?: boolean;
  /** A line of progress. */
  log?: (line: string) => void;
}

/** Why a run is in the gate. */
export type GateRole = 'would-continue' | 'own-build' | 'pinned-elsewhere' | 'closed-sample';

export interface GateRun {
  workflowId: string;
  runId: string;
  type: string;
  /** The build the run is on (empty: unversioned). */
  buildId: string;
  behavior: string;
  role: GateRole;
  status: 'replays' | 'diverges' | 'fails';
  /** The replayer's message, when it did not replay. */
  error?: string;
}

export interface GateReport {
  build: WorkerBuild;
  verdict: 'pass' | 'refuse';
  /** One line per refusal reason. */
  reasons: string[];
  runs: GateRun[];
  counts: Record<GateRole, { replayed: number; failed: number }>;
  /** Open runs that stay on other builds, by build: what must drain before those builds stop. */
  openElsewhere: Record<string, number>;
}

interface Candidate {
  info: WorkflowExecutionInfo;
  role: GateRole;
  buildId: string;
  behavior: string;
}

/** The server's own search attributes for a run's build and behaviour (present on every cluster's visibility). */
function buildOf(info: WorkflowExecutionInfo): { deployment: string; buildId: string; behavior: string } {
  const attrs = info.searchAttributes as Record<string, unknown[] | undefined>;
  const version = parseDeploymentVersion(String(attrs?.TemporalWorkerDeploymentVersion?.[0] ?? ''));
  return {
    deployment: version?.deploymentName ?? '',
    buildId: version?.buildId ?? '',
    behavior: String(attrs?.TemporalWorkflowVersioningBehavior?.[0] ?? ''),
  };
}

function roleOf(info: WorkflowExecutionInfo, build: WorkerBuild, open: boolean): Candidate {
  const { deployment, buildId, behavior } = buildOf(info);
  const own = deployment === build.deploymentName && buildId === build.buildId;
  let role: GateRole;
  if (!open) role = own ? 'own-build' : 'closed-sample';
  else if (own || buildId === '' || behavior !== 'Pinned') role = 'would-continue';
  else role = 'pinned-elsewhere';
  return { info, role, buildId, behavior: behavior || 'unversioned' };
}

async function listRuns(client: Client, query: string, limit: number): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  if (limit <= 0) return out;
  for await (const info of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    out.push(info);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The build a run is pinned to, as its own history says: the last completed workflow task that declared PINNED.
 * Visibility can lag: a run listed before its first task completed shows no build, and by the time its history is
 * read that task may have been completed, and the run pinned, by the build current then. The history is what gets
 * replayed, so its word decides the run's role.
 */
export function pinnedBuildOf(history: temporal.api.history.v1.IHistory): WorkerBuild | undefined {
  let pinned: WorkerBuild | undefined;
  for (const event of history.events ?? []) {
    const done = event.workflowTaskCompletedEventAttributes;
    if (!done) continue;
    const version = done.deploymentVersion;
    if (done.versioningBehavior === temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED && version) {
      pinned = { deploymentName: version.deploymentName ?? '', buildId: version.buildId ?? '' };
    }
  }
  return pinned;
}

/** An open run's role once its history is read: pinned to another build there, it stays there whatever visibility said. */
function roleFromHistory(c: Candidate, history: temporal.api.history.v1.IHistory, build: WorkerBuild): Candidate {
  if (c.role !== 'would-continue') return c;
  const pinned = pinnedBuildOf(history);
  if (!pinned || (pinned.deploymentName === build.deploymentName && pinned.buildId === build.buildId)) return c;
  return { ...c, role: 'pinned-elsewhere', buildId: pinned.buildId, behavior: 'Pinned' };
}

/** Which runs to replay: every open run of the queue (those pinned elsewhere sampled), and a sample of closed ones. */
async function candidates(
  options: GateOptions,
): Promise<{ chosen: Candidate[]; openElsewhere: Record<string, number> }> {
  // The deploy's own gate runs are left out: probes that end at once, no build continues them, and one that a
  // refused build failed would otherwise refuse every later gate.
  const queue = `TaskQueue = '${options.taskQueue.replace(/'/g, "\\'")}' AND WorkflowType != '${GATE_WORKFLOW_TYPE}'`;
  const open = (await listRuns(options.client, `${queue} AND ExecutionStatus = 'Running'`, 100_000)).map((info) =>
    roleOf(info, options.build, true),
  );
  const openElsewhere: Record<string, number> = {};
  for (const c of open)
    if (c.role === 'pinned-elsewhere') openElsewhere[c.buildId] = (openElsewhere[c.buildId] ?? 0) + 1;
  const elsewhere = open.filter((c) => c.role === 'pinned-elsewhere').slice(0, options.pinnedElsewhereSample ?? 200);
  const closed = (
    await listRuns(options.client, `${queue} AND ExecutionStatus != 'Running'`, options.closedSample ?? 50)
  ).map((info) => roleOf(info, options.build, false));
  return {
    chosen: [...open.filter((c) => c.role === 'would-continue'), ...closed, ...elsewhere],
    openElsewhere,
  };
}

/** A failure that refuses the build: one it would continue, its own history, or any under `strict`. */
function refuses(run: GateRun, strict: boolean): boolean {
  if (run.status === 'replays') return false;
  return strict || run.role === 'would-continue' || run.role === 'own-build' || run.status === 'fails';
}

/**
 * Replays and judges. A history that cannot be replayed at all (a payload the keys given cannot decode, a history
 * the server would not send) refuses the build too: the gate passes only what it has seen replay.
 */
export async function runReplayGate(options: GateOptions): Promise<GateReport> {
  const log = options.log ?? (() => {});
  const { chosen, openElsewhere } = await candidates(options);
  log(
    `Replaying ${chosen.length} histories against build ${options.build.buildId}: ` +
      `${chosen.filter((c) => c.role === 'would-continue').length} open runs it would continue, ` +
      `${chosen.filter((c) => c.role === 'pinned-elsewhere').length} pinned to other builds, ` +
      `${chosen.filter((c) => c.role === 'own-build' || c.role === 'closed-sample').length} closed`,
  );
  const runs: GateRun[] = [];
  const fetchFailures: GateRun[] = [];
  // The replayer takes one history at a time and answers for it before taking the next: results come in order.
  const pushed: Candidate[] = [];
  async function* histories() {
    for (const c of chosen) {
      try {
        const history = await options.client.workflow.getHandle(c.info.workflowId, c.info.runId).fetchHistory();
        const judged = roleFromHistory(c, history, options.build);
        if (judged.role === 'pinned-elsewhere' && c.role !== judged.role) {
          openElsewhere[judged.buildId] = (openElsewhere[judged.buildId] ?? 0) + 1;
        }
        pushed.push(judged);
        yield { workflowId: c.info.workflowId, history };
      } catch (err) {
        fetchFailures.push(gateRun(c, 'fails', `history not read: ${err instanceof Error ? err.message : err}`));
      }
    }
  }
  for await (const result of Worker.runReplayHistories(
    {
      workflowBundle: options.workflowBundle,
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    },
    histories(),
  )) {
    const c = pushed.shift();
    if (!c) continue;
    if (!result.error) runs.push(gateRun(c, 'replays'));
    else {
      const nondeterminism = result.error.name === 'DeterminismViolationError';
      runs.push(gateRun(c, nondeterminism ? 'diverges' : 'fails', result.error.message));
    }
  }
  runs.push(...fetchFailures);
  return judge(options, runs, openElsewhere);
}

function gateRun(c: Candidate, status: GateRun['status'], error?: string): GateRun {
  return {
    workflowId: c.info.workflowId,
    runId: c.info.runId,
    type: c.info.type,
    buildId: c.buildId,
    behavior: c.behavior,
    role: c.role,
    status,
    ...(error ? { error: error.split('\n')[0]!.slice(0, 500) } : {}),
  };
}

function judge(options: GateOptions, runs: GateRun[], openElsewhere: Record<string, number>): GateReport {
  const strict = options.strict ?? false;
  const counts = Object.fromEntries(
    (['would-continue', 'own-build', 'pinned-elsewhere', 'closed-sample'] as const).map((role) => [
      role,
      {
        replayed: runs.filter((r) => r.role === role).length,
        failed: runs.filter((r) => r.role === role && r.status !== 'replays').length,
      },
    ]),
  ) as GateReport['counts'];
  const reasons = runs
    .filter((r) => refuses(r, strict))
    .map(
      (r) =>
        `${r.workflowId} (${r.type}, ${r.buildId ? `build ${r.buildId}` : 'unversioned'}, ${r.role}) ` +
        `${r.status === 'diverges' ? 'does not replay' : 'could not be replayed'}: ${r.error ?? ''}`,
    );
  return {
    build: options.build,
    verdict: reasons.length > 0 ? 'refuse' : 'pass',
    reasons,
    runs,
    counts,
    openElsewhere,
  };
}

/** The gate's findings in a few lines for a person. */
export function describeGate(report: GateReport): string[] {
  const c = report.counts;
  const lines = [
    `Replay gate for build ${report.build.buildId}: ${report.verdict === 'pass' ? 'PASS' : 'REFUSED'}`,
    `  open runs it would continue: ${c['would-continue'].replayed} replayed, ${c['would-continue'].failed} failed`,
    `  its own closed runs:         ${c['own-build'].replayed} replayed, ${c['own-build'].failed} failed`,
    `  closed runs of other builds: ${c['closed-sample'].replayed} replayed, ${c['closed-sample'].failed} diverge`,
    `  open runs pinned elsewhere:  ${c['pinned-elsewhere'].replayed} replayed, ${c['pinned-elsewhere'].failed} diverge`,
  ];
  const elsewhere = Object.entries(report.openElsewhere);
  if (elsewhere.length > 0) {
    lines.push(
      `  stay on their build until done: ${elsewhere.map(([b, n]) => `${n} on ${b}`).join(', ')}` +
        (c['pinned-elsewhere'].failed + c['closed-sample'].failed > 0
          ? ' (this build changes workflow commands: those builds must run until drained)'
          : ''),
    );
  }
  for (const reason of report.reasons.slice(0, 20)) lines.push(`  refused: ${reason}`);
  if (report.reasons.length > 20) lines.push(`  … and ${report.reasons.length - 20} more`);
  return lines;
}
