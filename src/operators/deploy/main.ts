/**
 * `npm run deploy -- <step> [flags]`: moves a Worker Deployment's new runs from one build to another, with the replay
 * gate first. The new build's workers must already be polling (started beside the old ones: `npm run worker` with
 * WORKER_DEPLOYMENT_NAME and its WORKER_BUILD_ID); this command moves traffic, never processes.
 *
 * The steps (status, gate, ramp, rollout, drain, rollback) and flags are in DEPLOY_USAGE below, which `--help`
 * prints. Gate, ramp and rollout default to this checkout's or image's own build, as its workers compute it. The
 * Temporal connection and payload keys are the CLI's (TEMPORAL_ADDRESS, TEMPORAL_TLS_*, PAYLOAD_ENCRYPTION_KEYS): an
 * operator's. docs/operations.md, "Deploying a new build", has the whole sequence.
 */
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { connectClient } from '../../api/client/index';
import { DEFAULT_TASK_QUEUE } from '../../api/contract/index';
import { operatorIdentity } from '../shared/identity';
import { withStackKeys } from '../shared/stack-keys';
import { workflowBundlerOptions } from '../../workflow-bundle';
import { describeGate, runReplayGate, type GateReport } from './gate';
import {
  describeBuild,
  describeDeployment,
  lastPolls,
  openRunsOn,
  setCurrentBuild,
  setRampingBuild,
  type DeploymentRouting,
} from './routing';
import {
  BUILD_ID_PATTERN,
  defaultBuildId,
  DEPLOYMENT_NAME_PATTERN,
  type WorkerBuild,
} from '../../runtime/config/build';

export const DEPLOY_STEPS = ['status', 'gate', 'rollout', 'ramp', 'drain', 'rollback'] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

/** The server's own visibility grace period for drainage (matching.wv.VersionDrainageStatusVisibilityGracePeriod). */
export const DEFAULT_GRACE_SECONDS = 180;

export class DeployError extends Error {
  override readonly name = 'DeployError';
}

export interface DeployArgs {
  step: DeployStep;
  deploymentName: string;
  taskQueue: string;
  buildId?: string;
  percent?: number;
  bundle?: string;
  strict: boolean;
  wait: boolean;
  json: boolean;
  /** Seconds a build must have stopped taking new runs before drain says it may stop (default 180: visibility lags). */
  graceSeconds?: number;
}

/** What `--help` prints: the steps and flags of the header above, for a person at a terminal. */
export const DEPLOY_USAGE = `npm run deploy -- <step> [flags]

Steps:
  status                             the deployment's current and ramping builds, each build's open runs
  gate     [--build-id B]            the replay gate alone (exit 1 when refused)
  ramp     [--build-id B] --percent P  the gate, then P % of new runs to B; --percent 0 ends the ramp
  rollout  [--build-id B]            the gate, then B current: every new run starts on B
  drain    --build-id A [--wait] [--grace S]
                                     open runs still pinned to A; A may stop once none is open and either the
                                     server says drained or A stopped taking new runs S seconds ago (default 180);
                                     with --wait, until then
  rollback [--build-id A]            the gate for A, then A current again (default: the build that was current
                                     just before the present one, never one that only ramped; needs A's --bundle)

Before ramp, rollout and rollback change routing, every task queue of the target build must have been polled by
one of its workers within the last 90 s (else refused, naming the queue), and the change carries the conflict token
read before the gate (a change another deploy made meanwhile refuses it; nothing changes).

Flags:
  --deployment NAME   the Worker Deployment (default WORKER_DEPLOYMENT_NAME)
  --task-queue QUEUE  default BOOKING_TASK_QUEUE, else hotel-booking
  --build-id ID       gate, ramp and rollout default to this checkout's own build (WORKER_BUILD_ID, else version+commit)
  --bundle FILE       the target build's \`npm run bundle\` output; without it the gate bundles this checkout's
                      src/workflows, and refuses a build id that is not this checkout's own (a rollback needs it)
  --strict            every divergence refuses
  --json              one JSON line on stdout
  --help              this text

The connection is the CLI's (TEMPORAL_ADDRESS, TEMPORAL_TLS_*, PAYLOAD_ENCRYPTION_KEYS). docs/operations.md,
"Deploying a new build", has the whole sequence.`;

/** Whether the command line asks for the usage text (then nothing else is read or checked). */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help';
}

/** Reads the command line; every mistake is a DeployError naming the flag. */
export function parseDeployArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): DeployArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        deployment: { type: 'string' },
        'task-queue': { type: 'string' },
        'build-id': { type: 'string' },
        percent: { type: 'string' },
        bundle: { type: 'string' },
        strict: { type: 'boolean', default: false },
        wait: { type: 'boolean', default: false },
        grace: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    // node:util's own words ("Unknown option '--x'"), and where the list of flags is.
    throw new DeployError(`${(err as Error).message} (npm run deploy -- --help lists the steps and flags)`);
  }
  const { values, positionals } = parsed;
  const step = positionals[0] as DeployStep | undefined;
  if (!step || !DEPLOY_STEPS.includes(step)) {
    throw new DeployError(`step: one of ${DEPLOY_STEPS.join(', ')}, got ${step ?? 'none'}`);
  }
  const deploymentName = values.deployment ?? env.WORKER_DEPLOYMENT_NAME;
  if (!deploymentName || !DEPLOYMENT_NAME_PATTERN.test(deploymentName)) {
    throw new DeployError('--deployment (or WORKER_DEPLOYMENT_NAME): the Worker Deployment, letters, digits, - and _');
  }
  // The build a gate, ramp or rollout is for: named, else this checkout's (or image's) own, as its workers compute it.
  const buildId =
    values['build-id'] ??
    (['gate', 'rollout', 'ramp'].includes(step) ? (env.WORKER_BUILD_ID ?? defaultBuildId(env)) : undefined);
  if (buildId !== undefined && !BUILD_ID_PATTERN.test(buildId)) {
    throw new DeployError(`--build-id: letters, digits and . _ + - only, got "${buildId}"`);
  }
  if (step === 'drain' && !buildId) throw new DeployError('--build-id: drain needs the build it waits for');
  const percentText = values.percent;
  let percent: number | undefined;
  if (percentText !== undefined) {
    percent = Number(percentText);
    if (!Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw new DeployError(`--percent: 0 to 100, got "${percentText}"`);
    }
  } else if (step === 'ramp') {
    throw new DeployError('--percent: the share of new runs the build takes, 0 to 100');
  }
  const graceText = values.grace ?? String(DEFAULT_GRACE_SECONDS);
  const graceSeconds = Number(graceText);
  if (!/^\d+$/.test(graceText) || graceSeconds > 86_400) {
    throw new DeployError(`--grace: whole seconds, 0 to 86400, got "${graceText}"`);
  }
  return {
    step,
    deploymentName,
    graceSeconds,
    taskQueue: values['task-queue'] ?? env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    ...(buildId ? { buildId } : {}),
    ...(percent !== undefined ? { percent } : {}),
    ...(values.bundle ? { bundle: values.bundle } : {}),
    strict: values.strict!,
    wait: values.wait!,
    json: values.json!,
  };
}

export interface DeployIo {
  say(line: string): void;
  identity: string;
  /** How long `drain --wait` waits between two counts. */
  pollMs?: number;
  /** How long a move waits for the new build's workers to poll every queue the current build polls (default 60 s). */
  registerWaitMs?: number;
  /** How recent a poll must be for a queue to count as served (default 90 s: an idle long poll lasts a minute). */
  liveWithinMs?: number;
}

/**
 * Where the gate gets the target build's workflow code: the `--bundle` given, else this checkout's own src/workflows,
 * but only when the target is this checkout's own build (the id its workers compute). Replaying against other code
 * than the target's would prove nothing about it: a build id named from another checkout, or a rollback to an older
 * build, needs that build's bundle.
 */
export function gateCodeSource(
  args: Pick<DeployArgs, 'bundle'>,
  targetBuildId: string,
  ownBuildId: string,
): { codePath: string } | 'this-checkout' {
  if (args.bundle) return { codePath: args.bundle };
  if (targetBuildId === ownBuildId) return 'this-checkout';
  throw new DeployError(
    `build ${targetBuildId} is not this checkout's code (this checkout is build ${ownBuildId}): the gate would replay ` +
      `other code than the build it routes to. Give that build's workflow bundle (--bundle FILE, its \`npm run bundle\` ` +
      'output), or run the step from its checkout or image',
  );
}

/** The bundle the gate replays against: see gateCodeSource. */
async function gateBundle(args: DeployArgs, targetBuildId: string): Promise<{ codePath: string } | { code: string }> {
  const source = gateCodeSource(args, targetBuildId, process.env.WORKER_BUILD_ID ?? defaultBuildId(process.env));
  if (source !== 'this-checkout') return source;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    ...workflowBundlerOptions(),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  return { code };
}

async function gate(client: Client, args: DeployArgs, build: WorkerBuild, io: DeployIo): Promise<GateReport> {
  const report = await runReplayGate({
    client,
    workflowBundle: await gateBundle(args, build.buildId),
    dataConverter: client.options.dataConverter,
    build,
    taskQueue: args.taskQueue,
    strict: args.strict,
    log: io.say,
  });
  for (const line of describeGate(report)) io.say(line);
  return report;
}

async function routingOf(client: Client, name: string): Promise<DeploymentRouting> {
  const routing = await describeDeployment(client, name);
  if (!routing) throw new DeployError(`deployment ${name}: no worker of it has polled this namespace yet`);
  return routing;
}

/** The build must have polled: moving new runs to a build no worker runs would leave them waiting. */
function known(routing: DeploymentRouting, buildId: string): void {
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
async function assertServed(client: Client, target: WorkerBuild, io: DeployIo): Promise<void> {
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
async function awaitSameTaskQueues(
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
      throw new DeployError(
        `deployment ${routing.deploymentName}: its routing changed since this step read it (another deploy, or a ` +
          'person in the Web UI or CLI); nothing was changed by this step. Read `status`, then run the step again',
      );
    }
    throw err;
  }
}

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

export interface DeployResult {
  exitCode: 0 | 1;
  value: Record<string, unknown>;
}

/** One step; the value is what `--json` prints. Exit 1: the gate refused, or drain found open runs (without --wait). */
export async function runDeployStep(client: Client, args: DeployArgs, io: DeployIo): Promise<DeployResult> {
  const by = { identity: io.identity };
  const build = (buildId: string): WorkerBuild => ({ deploymentName: args.deploymentName, buildId });
  switch (args.step) {
    case 'status': {
      const routing = await routingOf(client, args.deploymentName);
      const builds = await Promise.all(
        routing.builds.map(async (b) => ({ ...b, openRuns: await openRunsOn(client, build(b.buildId)) })),
      );
      io.say(`Deployment ${routing.deploymentName}: current ${routing.current ?? 'none'}`);
      if (routing.ramping) io.say(`  ramping ${routing.ramping.buildId} at ${routing.ramping.percentage} %`);
      for (const b of builds) io.say(`  ${b.buildId.padEnd(28)} ${b.status.padEnd(9)} ${b.openRuns} open runs`);
      return {
        exitCode: 0,
        value: {
          deployment: routing.deploymentName,
          current: routing.current ?? null,
          ramping: routing.ramping ?? null,
          builds,
        },
      };
    }
    case 'gate': {
      const report = await gate(client, args, build(args.buildId!), io);
      return { exitCode: report.verdict === 'pass' ? 0 : 1, value: { gate: report } };
    }
    case 'ramp':
    case 'rollout': {
      const target = build(args.buildId!);
      const routing = await routingOf(client, args.deploymentName);
      known(routing, target.buildId);
      const report = await gate(client, args, target, io);
      if (report.verdict === 'refuse') return { exitCode: 1, value: { gate: report, moved: false } };
      await awaitSameTaskQueues(client, routing, target, io);
      if (args.step === 'rollout' || (args.percent ?? 0) > 0) await assertServed(client, target, io);
      if (args.step === 'ramp') {
        const percent = args.percent!;
        const ramp = percent > 0 ? { buildId: target.buildId, percentage: percent } : undefined;
        await moveNewRuns(client, routing, { ramp }, by);
        io.say(percent > 0 ? `Build ${target.buildId} takes ${percent} % of new runs` : 'Ramp ended');
        return { exitCode: 0, value: { gate: report, ramping: percent } };
      }
      await moveNewRuns(client, routing, { current: target.buildId }, by);
      io.say(`Build ${target.buildId} is current: every new run starts on it; open runs finish on their own build`);
      return { exitCode: 0, value: { gate: report, current: target.buildId, previous: routing.current ?? null } };
    }
    case 'rollback': {
      const routing = await routingOf(client, args.deploymentName);
      const target = build(rollbackTarget(routing, args.buildId));
      known(routing, target.buildId);
      const report = await gate(client, args, target, io);
      if (report.verdict === 'refuse') return { exitCode: 1, value: { gate: report, moved: false } };
      await awaitSameTaskQueues(client, routing, target, io);
      await assertServed(client, target, io);
      const after = routing.ramping ? await moveNewRuns(client, routing, { ramp: undefined }, by) : routing;
      await moveNewRuns(client, after, { current: target.buildId }, by);
      io.say(`Rolled back: build ${target.buildId} is current; runs started on ${routing.current} finish there`);
      return { exitCode: 0, value: { gate: report, current: target.buildId, previous: routing.current ?? null } };
    }
    case 'drain': {
      const target = build(args.buildId!);
      const routing = await routingOf(client, args.deploymentName);
      if (routing.current === target.buildId || routing.ramping?.buildId === target.buildId) {
        throw new DeployError(`build ${target.buildId} still takes new runs (current or ramping): move them first`);
      }
      let verdict = await drainage(client, routing, target, args.graceSeconds ?? DEFAULT_GRACE_SECONDS);
      io.say(verdict.line);
      while (args.wait && !verdict.mayStop) {
        await new Promise((r) => setTimeout(r, io.pollMs ?? 15_000));
        verdict = await drainage(client, routing, target, args.graceSeconds ?? DEFAULT_GRACE_SECONDS);
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
  }
}

async function main(): Promise<number> {
  if (asksForHelp(process.argv.slice(2))) {
    console.log(DEPLOY_USAGE);
    return 0;
  }
  const args = parseDeployArgs(process.argv.slice(2));
  const say = (line: string) => {
    if (!args.json) console.log(line);
  };
  const client = await connectClient(withStackKeys(process.env));
  try {
    const { exitCode, value } = await runDeployStep(client, args, { say, identity: operatorIdentity() });
    if (args.json) console.log(JSON.stringify(value));
    return exitCode;
  } finally {
    await client.connection.close().catch(() => undefined);
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof DeployError ? err.message : err instanceof Error ? err.message : String(err));
      process.exit(2);
    },
  );
}
