/**
 * The code the replay gate proves: the target build's own workflow bundle, never another's, and the gate run on it.
 */
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { defaultBuildId, type WorkerBuild } from '../../runtime/config/build';
import { workflowBundlerOptions } from '../../workflow-bundle';
import { GateRefusedError, type DeployArgs, type DeployIo } from './command';
import { describeGate, runReplayGate, type GateReport } from './gate';
import { describeGateRun, runGateWorkflow, type GateRunReport } from './gate-run';
import { assertServed } from './moves';

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
  if (args.bundle) return { codePath: readableBundle(args.bundle) };
  if (targetBuildId === ownBuildId) return 'this-checkout';
  throw new GateRefusedError(
    `build ${targetBuildId} is not this checkout's code (this checkout is build ${ownBuildId}): the gate would replay ` +
      `other code than the build it routes to. Give that build's workflow bundle (--bundle FILE, its \`npm run bundle\` ` +
      'output), or run the step from its checkout or image',
  );
}

/**
 * The --bundle file, when it reads as a workflow bundle (`npm run bundle`'s output: the SDK's bundle declares
 * `importWorkflows` and the `__TEMPORAL__` global); else the gate is refused naming the flag and the file, rather than
 * failing later in the replayer with a library's message that names neither.
 */
function readableBundle(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GateRefusedError(
      `--bundle ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): the gate has no code ` +
        'of the build to prove',
    );
  }
  if (!text.includes('importWorkflows') || !text.includes('__TEMPORAL__')) {
    throw new GateRefusedError(
      `--bundle ${file}: not a workflow bundle (\`npm run bundle\`'s output): the gate has no code of the build to prove`,
    );
  }
  return file;
}

/** The bundle the gate replays against: see gateCodeSource. */
export async function gateBundle(
  args: DeployArgs,
  targetBuildId: string,
): Promise<{ codePath: string } | { code: string }> {
  const source = gateCodeSource(args, targetBuildId, process.env.WORKER_BUILD_ID ?? defaultBuildId(process.env));
  if (source !== 'this-checkout') return source;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    ...workflowBundlerOptions(),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  return { code };
}

/** The replay gate's report, and the gate run's when one was made (absent: the replay gate refused first). */
export type DeployGateReport = GateReport & { run?: GateRunReport };

/**
 * The whole gate for `build`: the replay gate on its own code, then, when that passes and `run` is not false, the
 * build's workers checked live (every queue polled lately: a stopped build is refused at once, naming the queue) and
 * the gate run executed on them (./gate-run.ts). The verdict is refuse when either refuses.
 */
export async function gate(
  client: Client,
  args: DeployArgs,
  build: WorkerBuild,
  io: DeployIo,
  options: { run?: boolean } = {},
): Promise<DeployGateReport> {
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
  if (report.verdict === 'refuse' || options.run === false) return report;
  await assertServed(client, build, io);
  const run = await runGateWorkflow({
    client,
    build,
    taskQueue: args.taskQueue,
    timeoutMs: (args.gateTimeoutSeconds ?? 60) * 1000,
    ...(io.pollMs !== undefined ? { pollMs: Math.min(io.pollMs, 1000) } : {}),
    strict: args.strict,
  });
  io.say(describeGateRun(run, build));
  if (run.verdict === 'pass') return { ...report, run };
  return { ...report, run, verdict: 'refuse', reasons: [...report.reasons, `gate run: ${run.reason}`] };
}
