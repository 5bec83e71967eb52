/**
 * `ramp --steps 5,25,50,100 --pause 5m`: a progressive rollout. Each step sends that share of new runs to the build
 * (100: makes it current), waits the pause, then reads the build's health from the server; while it stays within the
 * limits the next step goes, and when it does not the ramp is undone by itself (the build that was current takes
 * every new run again) and the step exits 1. The gate and the served check come first, as for any move.
 *
 * Health, over the build's runs since the ramp began (open runs started since, or on it), read from the server:
 *  - failures: runs of the build that closed Failed or TimedOut, and open runs whose workflow task on it failed
 *    (the pending task's attempt above 1: the server retries a failed task, and a build that fails its first task
 *    never records a completed one);
 *  - stuck: open runs of the build whose workflow task has waited longer than --stuck-after (no worker took it).
 * With --wait the pause is watched: health read and said every 15 s, and the ramp undone as soon as it is over a limit.
 * A ramp that cannot go on (the build no longer served, its health unread three times, a routing change refused) is
 * undone too: the build never keeps a share of new runs nobody vouches for.
 */
import type { Client } from '@temporalio/client';
import type { WorkerBuild } from '../../runtime/config/build';
import { DeployError, type DeployArgs, type DeployIo, type DeployResult } from './command';
import { gate } from './gate-code';
import { assertServed, awaitSameTaskQueues, known, moveNewRuns, routingOf, RoutingChangedError } from './moves';
import type { DeploymentRouting } from './routing';

export interface RampHealth {
  /** Runs of the build that failed, or whose workflow task on it failed. */
  failures: number;
  /** Open runs of the build whose workflow task waited longer than the stuck limit. */
  stuck: number;
  /** Runs of the build looked at. */
  runs: number;
}

const quote = (s: string) => `'${s.replace(/'/g, "\\'")}'`;

/** Whether a run described by the server is on `build`: its version, or the version it is moving to. */
function onBuild(
  info: { versioningInfo?: { deploymentVersion?: unknown; versionTransition?: unknown } | null } | null | undefined,
  build: WorkerBuild,
): boolean {
  const versions = [
    info?.versioningInfo?.deploymentVersion,
    (info?.versioningInfo?.versionTransition as { deploymentVersion?: unknown } | null | undefined)?.deploymentVersion,
  ] as Array<{ deploymentName?: string | null; buildId?: string | null } | null | undefined>;
  return versions.some((v) => v?.deploymentName === build.deploymentName && v?.buildId === build.buildId);
}

/** The build's health since `sinceIso` (see the header); at most `limit` open runs are described. */
export async function rampHealth(
  client: Client,
  taskQueue: string,
  build: WorkerBuild,
  sinceIso: string,
  stuckAfterSeconds: number,
  limit = 500,
): Promise<RampHealth> {
  const version = quote(`${build.deploymentName}:${build.buildId}`);
  const queue = `TaskQueue = ${quote(taskQueue)}`;
  const { count: closedFailed } = await client.workflow.count(
    `${queue} AND TemporalWorkerDeploymentVersion = ${version} AND ExecutionStatus IN ('Failed', 'TimedOut') ` +
      `AND CloseTime >= '${sinceIso}'`,
  );
  let failures = closedFailed;
  let stuck = 0;
  let runs = closedFailed;
  const open = `${queue} AND ExecutionStatus = 'Running' AND (StartTime >= '${sinceIso}' OR TemporalWorkerDeploymentVersion = ${version})`;
  let seen = 0;
  for await (const run of client.workflow.list({ query: open, pageSize: 100 })) {
    if (++seen > limit) break;
    const described = await client.workflowService
      .describeWorkflowExecution({
        namespace: client.options.namespace,
        execution: { workflowId: run.workflowId, runId: run.runId },
      })
      .catch(() => undefined);
    if (!described || !onBuild(described.workflowExecutionInfo, build)) continue;
    runs += 1;
    const task = described.pendingWorkflowTask;
    if (!task) continue;
    if ((task.attempt ?? 1) > 1) failures += 1;
    const scheduled = Number(task.originalScheduledTime?.seconds ?? task.scheduledTime?.seconds ?? 0) * 1000;
    if (scheduled > 0 && Date.now() - scheduled > stuckAfterSeconds * 1000) stuck += 1;
  }
  return { failures, stuck, runs };
}

/** Undoes the ramp: the ramp ended, or, once the build was made current, the build current before made current again. */
async function undo(
  client: Client,
  routing: DeploymentRouting,
  previous: WorkerBuild,
  madeCurrent: boolean,
  io: DeployIo,
): Promise<void> {
  const by = { identity: io.identity };
  if (!madeCurrent) {
    await moveNewRuns(client, routing, { ramp: undefined }, by);
    io.say(`Ramp undone: build ${previous.buildId} takes every new run again`);
    return;
  }
  await assertServed(client, previous, io);
  await moveNewRuns(client, routing, { current: previous.buildId }, by);
  io.say(`Rolled back: build ${previous.buildId} is current again`);
}

/**
 * `--wait`: the pause watched. The build's health is read every 15 s (io.pollMs) and said in a line, and the pause
 * ends early once it is over a limit, so a failing build is undone at once rather than at the pause's end.
 */
async function watchPause(
  client: Client,
  args: DeployArgs,
  target: WorkerBuild,
  since: string,
  percent: number,
  limits: { failures: number; stuck: number },
  io: DeployIo,
): Promise<void> {
  const began = Date.now();
  const end = began + (args.pauseSeconds ?? 0) * 1000;
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) return;
    await new Promise((r) => setTimeout(r, Math.min(io.pollMs ?? 15_000, left)));
    let health: RampHealth;
    try {
      health = await rampHealth(client, args.taskQueue, target, since, args.stuckAfterSeconds ?? 60);
    } catch (err) {
      // A read the server did not answer (a node restarting) is tried again at the next poll; the read after the
      // pause decides.
      io.say(`  health not read (${err instanceof Error ? err.message : String(err)}): read again in a moment`);
      continue;
    }
    io.say(
      `  ${Math.round((Date.now() - began) / 1000)} s into the ${percent} % step: ${health.runs} runs on it, ` +
        `${health.failures} failing, ${health.stuck} stuck`,
    );
    if (health.failures > limits.failures || health.stuck > limits.stuck) return;
  }
}

/** The health after a pause: read up to 3 times, 5 s apart, while the server does not answer. */
async function readHealth(client: Client, args: DeployArgs, target: WorkerBuild, since: string): Promise<RampHealth> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await rampHealth(client, args.taskQueue, target, since, args.stuckAfterSeconds ?? 60);
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 5_000));
    }
  }
}

/**
 * The progressive ramp; exit 1 when the gate refuses, or when the build's health stopped it or the ramp could not go
 * on (undone, either way).
 */
export async function progressiveRamp(client: Client, args: DeployArgs, io: DeployIo): Promise<DeployResult> {
  const target: WorkerBuild = { deploymentName: args.deploymentName, buildId: args.buildId! };
  const limits = { failures: args.maxFailures ?? 0, stuck: args.maxStuck ?? 0 };
  let routing = await routingOf(client, args.deploymentName);
  known(routing, target.buildId);
  if (!routing.current || routing.current === target.buildId) {
    throw new DeployError(
      `build ${target.buildId}: a progressive ramp needs another build current to fall back to (current: ` +
        `${routing.current ?? 'none'}); use rollout`,
    );
  }
  const previous: WorkerBuild = { deploymentName: args.deploymentName, buildId: routing.current };
  const report = await gate(client, args, target, io);
  if (report.verdict === 'refuse') return { exitCode: 1, value: { gate: report, moved: false } };
  await awaitSameTaskQueues(client, routing, target, io);
  const since = new Date().toISOString();
  const steps: Array<{ percent: number; health: RampHealth }> = [];
  let moved = false;
  let stepBegan = Date.now();
  for (const percent of args.steps!) {
    let health: RampHealth;
    try {
      await assertServed(client, target, io);
      const move =
        percent === 100 ? { current: target.buildId } : { ramp: { buildId: target.buildId, percentage: percent } };
      routing = await moveNewRuns(client, routing, move, { identity: io.identity });
      moved = true;
      io.say(
        percent === 100
          ? `Build ${target.buildId} is current`
          : `Build ${target.buildId} takes ${percent} % of new runs`,
      );
      stepBegan = Date.now();
      if (args.wait) await watchPause(client, args, target, since, percent, limits, io);
      else await new Promise((r) => setTimeout(r, (args.pauseSeconds ?? 0) * 1000));
      health = await readHealth(client, args, target, since);
    } catch (err) {
      // A ramp that cannot go on (its build no longer served, its health unread, the server unreachable) never
      // leaves the build taking runs it cannot vouch for: undone, as for a build over a limit.
      // Routing someone else changed meanwhile is theirs now: nothing is undone over it.
      if (!moved || err instanceof RoutingChangedError) throw err;
      io.say(`Ramp stopped at ${percent} %: ${err instanceof Error ? err.message : String(err)}`);
      await undo(client, routing, previous, percent === 100, io);
      return {
        exitCode: 1,
        value: { gate: report, steps, rolledBack: true, current: previous.buildId, stoppedBy: String(err) },
      };
    }
    steps.push({ percent, health });
    io.say(
      `  after ${Math.round((Date.now() - stepBegan) / 1000)} s: ${health.runs} runs on it, ${health.failures} failing (limit ` +
        `${limits.failures}), ${health.stuck} stuck (limit ${limits.stuck})`,
    );
    if (health.failures > limits.failures || health.stuck > limits.stuck) {
      await undo(client, routing, previous, percent === 100, io);
      return { exitCode: 1, value: { gate: report, steps, rolledBack: true, current: previous.buildId } };
    }
  }
  const last = args.steps!.at(-1)!;
  io.say(last === 100 ? 'Ramp complete' : `Ramp held at ${last} %: \`rollout\` makes the build current`);
  return { exitCode: 0, value: { gate: report, steps, rolledBack: false } };
}
