/**
 * What every routing change checks and how it is made: the target build is known and served (live pollers on every
 * queue), polls every queue the current build polls, and the change carries the conflict token read before the gate.
 */
import type { Client } from '@temporalio/client';
import type { WorkerBuild } from '../../runtime/config/build';
import { DeployError, type DeployIo } from './command';
import {
  describeBuild,
  describeDeployment,
  lastPolls,
  setCurrentBuild,
  setRampingBuild,
  type DeploymentRouting,
} from './routing';

export async function routingOf(client: Client, name: string): Promise<DeploymentRouting> {
  const routing = await describeDeployment(client, name);
  if (!routing) throw new DeployError(`deployment ${name}: no worker of it has polled this namespace yet`);
  return routing;
}

/** The build must have polled: moving new runs to a build no worker runs would leave them waiting. */
export function known(routing: DeploymentRouting, buildId: string): void {
  if (!routing.builds.some((b) => b.buildId === buildId)) {
    throw new DeployError(
      `build ${buildId}: no worker of it has polled deployment ${routing.deploymentName} ` +
        `(builds known: ${routing.builds.map((b) => b.buildId).join(', ') || 'none'}); start its workers first`,
    );
  }
}

/**
 * The build to roll back to: the one given, else the one that was current just before the current one. The server
 * stamps a build's lastDeactivationTime when it stops ramping too, so the latest of those may be an aborted ramp that
 * never served every new run; but one change makes a build current and its predecessor not current with the very same
 * time, so the predecessor is the build that stopped exactly when the current one became current.
 */
export function rollbackTarget(routing: DeploymentRouting, buildId?: string): string {
  if (buildId) return buildId;
  const since = routing.builds.find((b) => b.buildId === routing.current)?.currentSince;
  const before = since
    ? routing.builds.find((b) => b.buildId !== routing.current && b.deactivatedAt === since)
    : undefined;
  if (!before) {
    throw new DeployError(
      `--build-id: the server records no build that was current just before ${routing.current ?? 'none'} ` +
        '(a build that only ramped is no rollback target); name the build to go back to',
    );
  }
  return before.buildId;
}

/**
 * Every task queue the build registered has been polled by one of its workers within `liveWithinMs`: the server lets
 * routing go to any registered build, and a registration outlives its workers, so new runs sent to a stopped build
 * would wait for ever.
 */
export async function assertServed(client: Client, target: WorkerBuild, io: DeployIo): Promise<void> {
  const windowMs = io.liveWithinMs ?? 90_000;
  const polls = await lastPolls(client, target);
  const now = Date.now();
  const stale = polls.filter((p) => p.lastPollMs === undefined || now - p.lastPollMs > windowMs);
  if (polls.length > 0 && stale.length === 0) return;
  const what = stale.map(
    (p) =>
      `${p.name} (${p.type} tasks; ` +
      (p.lastPollMs === undefined
        ? 'no poll the server remembers)'
        : `last poll ${Math.round((now - p.lastPollMs) / 1000)} s ago)`),
  );
  throw new DeployError(
    `build ${target.buildId}: no live worker: ` +
      (polls.length === 0 ? 'it registered no task queue' : `none of its workers polled ${what.join(', ')}`) +
      ` in the last ${Math.round(windowMs / 1000)} s; new runs routed to it would wait. Start its workers, then retry`,
  );
}

/**
 * Waits until `target`'s workers poll every task queue the current build polls. The server refuses to move new runs
 * to a build missing one (its runs there would go unversioned), and a build's workers register their queues one by
 * one in their first seconds: a deploy started right after they came up would otherwise fail on a race.
 */
export async function awaitSameTaskQueues(
  client: Client,
  routing: DeploymentRouting,
  target: WorkerBuild,
  io: DeployIo,
): Promise<void> {
  if (!routing.current || routing.current === target.buildId) return;
  const current = await describeBuild(client, { deploymentName: routing.deploymentName, buildId: routing.current });
  const needed = current?.taskQueues ?? [];
  const deadline = Date.now() + (io.registerWaitMs ?? 60_000);
  for (;;) {
    const polled = new Set((await describeBuild(client, target))?.taskQueues ?? []);
    const missing = needed.filter((q) => !polled.has(q));
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new DeployError(
        `build ${target.buildId}: no worker of it polls ${missing.join(', ')}, which build ${routing.current} ` +
          'polls; start its workers on every queue first',
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A routing change refused because another change was made since the step read routing: nothing was changed. */
export class RoutingChangedError extends DeployError {}

/** A routing change: a build made current, or the ramp set (undefined: ended). */
export type RoutingMove = { current: string } | { ramp: { buildId: string; percentage: number } | undefined };

/**
 * Makes one routing change only if routing is still as `routing` read it (its conflict token): the gate takes
 * minutes between reading and changing, and a change another deploy made meanwhile must not be overwritten unseen.
 * Returns the token for a following change of the same step.
 */
export async function moveNewRuns(
  client: Client,
  routing: DeploymentRouting,
  move: RoutingMove,
  by: { identity: string },
): Promise<DeploymentRouting> {
  try {
    const token =
      'current' in move
        ? await setCurrentBuild(
            client,
            { deploymentName: routing.deploymentName, buildId: move.current },
            by,
            routing.conflictToken,
          )
        : await setRampingBuild(client, routing.deploymentName, move.ramp, by, routing.conflictToken);
    const { conflictToken: _read, ...rest } = routing;
    return { ...rest, ...(token ? { conflictToken: token } : {}) };
  } catch (err) {
    if (/conflict token/i.test((err as Error).message ?? '')) {
      throw new RoutingChangedError(
        `deployment ${routing.deploymentName}: its routing changed since this step read it (another deploy, or a ` +
          'person in the Web UI or CLI); nothing was changed by this step. Read `status`, then run the step again',
      );
    }
    throw err;
  }
}
