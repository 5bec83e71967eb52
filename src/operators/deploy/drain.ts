/**
 * `drain`: whether a build that takes no new runs may stop.
 */
import type { Client } from '@temporalio/client';
import type { WorkerBuild } from '../../runtime/config/build';
import { DEFAULT_GRACE_SECONDS, DeployError, type DeployArgs, type DeployIo, type DeployResult } from './command';
import { routingOf } from './moves';
import { describeBuild, openRunsOn, type DeploymentRouting } from './routing';

interface Drainage {
  openRuns: number;
  server?: 'draining' | 'drained';
  /** Seconds since the build stopped taking new runs (absent: it never took any, only runs pinned to it by name). */
  sinceSeconds?: number;
  mayStop: boolean;
  line: string;
}

/**
 * Whether a build may stop: no open run pinned to it in visibility now, and either the server's own drainage check
 * says DRAINED (it applies its own visibility grace period) or the build stopped taking new runs at least `grace`
 * seconds ago. Visibility lags: a run started on the build just before the switch may not be listed yet, and a zero
 * read then would strand it (a stopped build's pinned runs take no signal, update or query).
 */
async function drainage(
  client: Client,
  routing: DeploymentRouting,
  target: WorkerBuild,
  graceSeconds: number,
): Promise<Drainage> {
  const [openRuns, state] = await Promise.all([openRunsOn(client, target), describeBuild(client, target)]);
  const summary = routing.builds.find((b) => b.buildId === target.buildId);
  const deactivatedMs = summary?.deactivatedAt ? Number(summary.deactivatedAt.split('.')[0]) * 1000 : undefined;
  const sinceSeconds = deactivatedMs !== undefined ? Math.floor((Date.now() - deactivatedMs) / 1000) : undefined;
  const graceOver = sinceSeconds === undefined ? summary?.status === 'inactive' : sinceSeconds >= graceSeconds;
  const mayStop = openRuns === 0 && (state?.drainage === 'drained' || graceOver);
  const server = state?.drainage;
  let line = `Build ${target.buildId}: ${openRuns} open runs pinned to it`;
  if (server) line += `; the server says ${server}`;
  if (openRuns === 0 && !mayStop) {
    line +=
      sinceSeconds !== undefined
        ? `; it stopped taking new runs ${sinceSeconds} s ago, and visibility may not list a run started just ` +
          `before: not yet (${graceSeconds - sinceSeconds} s of the ${graceSeconds} s grace left)`
        : '; the server records no time it stopped taking new runs: not until the server says drained';
  }
  return {
    openRuns,
    ...(server ? { server } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
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
  let verdict = await drainage(client, routing, target, grace);
  io.say(verdict.line);
  while (args.wait && !verdict.mayStop) {
    await new Promise((r) => setTimeout(r, io.pollMs ?? 15_000));
    verdict = await drainage(client, routing, target, grace);
    io.say(verdict.line);
  }
  if (verdict.mayStop) io.say(`Build ${target.buildId} is drained: its workers may stop`);
  return {
    exitCode: verdict.mayStop ? 0 : 1,
    value: {
      buildId: target.buildId,
      openRuns: verdict.openRuns,
      serverDrainage: verdict.server ?? null,
      stoppedTakingRunsSecondsAgo: verdict.sinceSeconds ?? null,
      drained: verdict.mayStop,
    },
  };
}
