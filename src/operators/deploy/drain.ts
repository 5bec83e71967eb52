/**
 * `drain`: whether a build that takes no new runs may stop. It never says so while a run that only this build may
 * continue is open: a stopped build's pinned runs wait for ever (signals stored but not processed, updates hanging to
 * the caller's deadline, queries timing out), and only `deploy move` gets them out.
 */
import type { Client } from '@temporalio/client';
import type { WorkerBuild } from '../../runtime/config/build';
import { DEFAULT_GRACE_SECONDS, DeployError, type DeployArgs, type DeployIo, type DeployResult } from './command';
import { routingOf } from './moves';
import { describeBuild, openPinnedRunsOn, openRunsOn } from './routing';

interface Drainage {
  /** Open runs whose last workflow task ran on the build (pinned there, or auto-upgrade runs not yet moved). */
  openRuns: number;
  /** Open runs pinned to the build, however pinned (the server's own drainage query): some never ran a task there. */
  pinnedRuns: number;
  server?: 'draining' | 'drained';
  /** Seconds since the build stopped taking new runs (absent: it never took any, only runs pinned to it by name). */
  sinceSeconds?: number;
  /** The build takes new runs again (made current or ramping since drain began). */
  takesNewRuns: boolean;
  mayStop: boolean;
  line: string;
}

/**
 * Whether a build may stop: it takes no new runs as routing reads now; no open run is on it or pinned to it (two
 * visibility counts: the last build a run ran on, and the server's own pinned list, which also holds runs pinned by
 * an override that never ran a task there); and either the server's drainage check says DRAINED or the build stopped
 * taking new runs at least `grace` seconds ago. Visibility lags: a run started on the build just before the switch
 * may not be listed yet. The server's DRAINED is not trusted alone: it stops checking once it has said it, so a run
 * pinned there by an override later is in the counts only.
 */
async function drainage(client: Client, target: WorkerBuild, graceSeconds: number): Promise<Drainage> {
  const [routing, openRuns, pinnedRuns, state] = await Promise.all([
    routingOf(client, target.deploymentName),
    openRunsOn(client, target),
    openPinnedRunsOn(client, target),
    describeBuild(client, target),
  ]);
  const takesNewRuns = routing.current === target.buildId || routing.ramping?.buildId === target.buildId;
  const summary = routing.builds.find((b) => b.buildId === target.buildId);
  const deactivatedMs = summary?.deactivatedAt ? Number(summary.deactivatedAt.split('.')[0]) * 1000 : undefined;
  const sinceSeconds = deactivatedMs !== undefined ? Math.floor((Date.now() - deactivatedMs) / 1000) : undefined;
  const graceOver = sinceSeconds === undefined ? summary?.status === 'inactive' : sinceSeconds >= graceSeconds;
  const none = openRuns === 0 && pinnedRuns === 0;
  const mayStop = !takesNewRuns && none && (state?.drainage === 'drained' || graceOver);
  const server = state?.drainage;
  let line = `Build ${target.buildId}: ${openRuns} open runs on it, ${pinnedRuns} pinned to it`;
  if (server) line += `; the server says ${server}`;
  if (takesNewRuns) line += '; it takes new runs again (current or ramping): it may not stop';
  else if (!none) line += `; not until they finish, or \`deploy move --from ${target.buildId}\` moves them`;
  else if (!mayStop) {
    line +=
      sinceSeconds !== undefined
        ? `; it stopped taking new runs ${sinceSeconds} s ago, and visibility may not list a run started just ` +
          `before: not yet (${graceSeconds - sinceSeconds} s of the ${graceSeconds} s grace left)`
        : '; the server records no time it stopped taking new runs: not until the server says drained';
  }
  return {
    openRuns,
    pinnedRuns,
    ...(server ? { server } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    takesNewRuns,
    mayStop,
    line,
  };
}

/** Exit 1 when the build may not stop yet (without --wait); refused while it still takes new runs. */
export async function drainStep(client: Client, args: DeployArgs, io: DeployIo): Promise<DeployResult> {
  const target: WorkerBuild = { deploymentName: args.deploymentName, buildId: args.buildId! };
  const routing = await routingOf(client, args.deploymentName);
  if (routing.current === target.buildId || routing.ramping?.buildId === target.buildId) {
    throw new DeployError(`build ${target.buildId} still takes new runs (current or ramping): move them first`);
  }
  const grace = args.graceSeconds ?? DEFAULT_GRACE_SECONDS;
  let verdict = await drainage(client, target, grace);
  io.say(verdict.line);
  // Routing is read again at every count: a rollback to this build meanwhile must end the wait, not say "stop".
  while (args.wait && !verdict.mayStop && !verdict.takesNewRuns) {
    await new Promise((r) => setTimeout(r, io.pollMs ?? 15_000));
    verdict = await drainage(client, target, grace);
    io.say(verdict.line);
  }
  if (verdict.mayStop) io.say(`Build ${target.buildId} is drained: its workers may stop`);
  return {
    exitCode: verdict.mayStop ? 0 : 1,
    value: {
      buildId: target.buildId,
      openRuns: verdict.openRuns,
      pinnedRuns: verdict.pinnedRuns,
      serverDrainage: verdict.server ?? null,
      stoppedTakingRunsSecondsAgo: verdict.sinceSeconds ?? null,
      takesNewRuns: verdict.takesNewRuns,
      drained: verdict.mayStop,
    },
  };
}
