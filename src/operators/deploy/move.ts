/**
 * `move --from A --to B`: for the day a build is lost. Runs pinned to A never leave it by themselves, and while A has
 * no worker they wait for ever; this pins each to B by a versioning override, after proving B's own code replays
 * every one of them (one that does not replay is not moved, and none is: the operator decides). B must be served.
 */
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { WorkerBuild } from '../../runtime/config/build';
import type { DeployArgs, DeployIo, DeployResult } from './command';
import { gateBundle } from './gate-code';
import { describeGateRun, runGateWorkflow } from './gate-run';
import { assertServed, known, routingOf } from './moves';
import { pinnedRunsQuery, pinRunTo } from './routing';

interface PinnedRun {
  workflowId: string;
  runId: string;
  type: string;
}

/** Every open run pinned to `build`, at most `limit`. */
async function pinnedRuns(client: Client, build: WorkerBuild, limit: number): Promise<PinnedRun[]> {
  const runs: PinnedRun[] = [];
  for await (const info of client.workflow.list({ query: pinnedRunsQuery(build), pageSize: 1000 })) {
    runs.push({ workflowId: info.workflowId, runId: info.runId, type: info.type });
    if (runs.length >= limit) break;
  }
  return runs;
}

/** Each run's history replayed against `bundle`: the runs that do not replay, with the replayer's first line. */
async function notReplaying(
  client: Client,
  bundle: Awaited<ReturnType<typeof gateBundle>>,
  runs: PinnedRun[],
): Promise<Array<PinnedRun & { error: string }>> {
  const failed: Array<PinnedRun & { error: string }> = [];
  const pushed: PinnedRun[] = [];
  async function* histories() {
    for (const run of runs) {
      try {
        const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        pushed.push(run);
        yield { workflowId: run.workflowId, history };
      } catch (err) {
        failed.push({ ...run, error: `history not read: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
  }
  const options = { workflowBundle: bundle, dataConverter: client.options.dataConverter };
  for await (const result of Worker.runReplayHistories(options, histories())) {
    const run = pushed.shift();
    if (run && result.error) failed.push({ ...run, error: result.error.message.split('\n')[0]!.slice(0, 500) });
  }
  return failed;
}

/** Exit 1 when a run does not replay on the target's code (nothing moved); refused when the target is not served. */
export async function moveStep(client: Client, args: DeployArgs, io: DeployIo): Promise<DeployResult> {
  const from: WorkerBuild = { deploymentName: args.deploymentName, buildId: args.from! };
  const to: WorkerBuild = { deploymentName: args.deploymentName, buildId: args.to! };
  known(await routingOf(client, args.deploymentName), to.buildId);
  const bundle = await gateBundle(args, to.buildId);
  const runs = await pinnedRuns(client, from, 100_000);
  io.say(`Build ${from.buildId}: ${runs.length} open runs pinned to it; replaying each against build ${to.buildId}`);
  const failed = await notReplaying(client, bundle, runs);
  if (failed.length > 0) {
    for (const f of failed.slice(0, 20)) io.say(`  refused: ${f.workflowId} (${f.type}) does not replay: ${f.error}`);
    io.say(`Nothing moved: build ${to.buildId}'s code does not continue ${failed.length} of them`);
    return { exitCode: 1, value: { from: from.buildId, to: to.buildId, moved: 0, refused: failed } };
  }
  await assertServed(client, to, io);
  // B's own workers proved live on B's code before any run is pinned to it (./gate-run.ts).
  const run = await runGateWorkflow({
    client,
    build: to,
    taskQueue: args.taskQueue,
    strict: args.strict,
    timeoutMs: (args.gateTimeoutSeconds ?? 60) * 1000,
  });
  io.say(describeGateRun(run, to));
  if (run.verdict === 'refuse') {
    io.say(`Nothing moved: build ${to.buildId} did not pass its gate run`);
    return { exitCode: 1, value: { from: from.buildId, to: to.buildId, moved: 0, gateRun: run } };
  }
  let moved = 0;
  for (const run of runs) if (await pinRunTo(client, run, to, { identity: io.identity })) moved += 1;
  io.say(
    `Moved ${moved} runs from build ${from.buildId} to ${to.buildId} (${runs.length - moved} closed meanwhile); ` +
      `drain ${from.buildId} again: a run visibility had not listed yet is still pinned there`,
  );
  return { exitCode: 0, value: { from: from.buildId, to: to.buildId, moved, closedMeanwhile: runs.length - moved } };
}
