/**
 * `npm run deploy -- <step> [flags]`: moves a Worker Deployment's new runs from one build to another, with the replay
 * gate first. The new build's workers must already be polling (started beside the old ones: `npm run worker` with
 * WORKER_DEPLOYMENT_NAME and its WORKER_BUILD_ID); this command moves traffic, never processes.
 *
 * The steps (status, gate, ramp, rollout, drain, rollback) and flags are in DEPLOY_USAGE (command.ts), which `--help`
 * prints. Gate, ramp and rollout default to this checkout's or image's own build, as its workers compute it. The
 * Temporal connection and payload keys are the CLI's (TEMPORAL_ADDRESS, TEMPORAL_TLS_*, PAYLOAD_ENCRYPTION_KEYS): an
 * operator's. docs/operations.md, "Deploying a new build", has the whole sequence.
 */
import type { Client } from '@temporalio/client';
import { connectClient } from '../../api/client/index';
import { operatorIdentity } from '../shared/identity';
import { withStackKeys } from '../shared/stack-keys';
import type { WorkerBuild } from '../../runtime/config/build';
import {
  asksForHelp,
  DEPLOY_USAGE,
  DeployError,
  GateRefusedError,
  parseDeployArgs,
  type DeployArgs,
  type DeployIo,
  type DeployResult,
} from './command';
import { drainStep } from './drain';
import { gate } from './gate-code';
import { moveStep } from './move';
import { progressiveRamp } from './ramp';
import { settingsStep } from './settings';
import { assertServed, awaitSameTaskQueues, known, moveNewRuns, rollbackTarget, routingOf } from './moves';
import { openRunsOn } from './routing';

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
      if (args.steps) return progressiveRamp(client, args, io);
    // falls through: one step of a ramp goes as a rollout does, to a share
    case 'rollout': {
      const target = build(args.buildId!);
      const routing = await routingOf(client, args.deploymentName);
      known(routing, target.buildId);
      // Ending a ramp (--percent 0) sends nothing to the build: no gate run for it.
      const ending = args.step === 'ramp' && (args.percent ?? 0) === 0;
      const report = await gate(client, args, target, io, { run: !ending });
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
    case 'drain':
      return drainStep(client, args, io);
    case 'move':
      return moveStep(client, args, io);
    case 'settings':
      return settingsStep(client, args, io);
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
      // A gate that cannot get the build's code refuses it (exit 1, as --help says); anything else is exit 2.
      process.exit(err instanceof GateRefusedError ? 1 : 2);
    },
  );
}
