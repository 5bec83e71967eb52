/**
 * The gate run: before any routing change, a short workflow of ours (deployGateWorkflow, src/workflows/gate) is
 * started pinned to the target build by a versioning override, as Temporal's Worker Controller runs its gate
 * workflow on a new version before any traffic. Only that build's workers may take it. It passes when the run
 * completes on that very build; it is refused when the build fails its first workflow task (a bundle that does not
 * load, a workflow that throws), when an activity of the gate fails, or when no worker of the build takes the task
 * within the ceiling (no live worker). The replay gate proves the code given to the command; this proves the code the
 * build's workers actually run. The run is terminated whenever it did not complete, so nothing is left waiting.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { WorkerBuild } from '../../runtime/config/build';

/** The gate workflow's type and id prefix (src/workflows/gate; not imported: operator code loads no workflow code). */
export const GATE_WORKFLOW_TYPE = 'deployGateWorkflow';
export const GATE_ID_PREFIX = 'deploy-gate:';

/** What the SDK says when a build's bundle exports no such workflow: a build made before the gate workflow. */
const NOT_EXPORTED = 'no such function is exported by the workflow bundle';

export interface GateRunOptions {
  client: Client;
  build: WorkerBuild;
  /** The booking task queue: the build's workflow queue. */
  taskQueue: string;
  /** How long the run may take before the build is refused (default 60 s: a worker's long poll answers at once). */
  timeoutMs?: number;
  pollMs?: number;
  /** A build older than the gate workflow is refused too (otherwise passed with a warning). */
  strict?: boolean;
}

export interface GateRunReport {
  verdict: 'pass' | 'refuse';
  workflowId: string;
  /** Why the build was refused, or why it passed without the whole proof. */
  reason?: string;
  /** The build that ran it, as the run saw it. */
  ranOn?: { deploymentName: string; buildId: string };
}

interface Progress {
  status: string;
  /** The first line of the latest failed workflow task's failure, if any. */
  taskFailure?: string;
  /** Whether any worker ever started a workflow task of it. */
  taskStarted: boolean;
}

async function progress(client: Client, handle: WorkflowHandle): Promise<Progress> {
  const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
  let failure: temporal.api.failure.v1.IFailure | undefined;
  let taskStarted = false;
  for (const event of history.events ?? []) {
    if (event.workflowTaskStartedEventAttributes) taskStarted = true;
    const failed = event.workflowTaskFailedEventAttributes;
    if (failed) failure = failed.failure ?? { message: 'no message' };
  }
  // Workers that encrypt payloads encrypt a failure's message too ("Encoded failure"): decoded with the same keys.
  const decoded = failure
    ? await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, failure).catch(() => undefined)
    : undefined;
  const taskFailure = failure ? (decoded?.message ?? failure.message ?? '').split('\n')[0]!.slice(0, 500) : undefined;
  return { status: description.status.name, ...(taskFailure !== undefined ? { taskFailure } : {}), taskStarted };
}

/** Starts the gate run on `build` and judges it; never throws for what the build did, only for the server's errors. */
export async function runGateWorkflow(options: GateRunOptions): Promise<GateRunReport> {
  const { client, build } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const nonce = randomUUID().slice(0, 12);
  const workflowId = `${GATE_ID_PREFIX}${build.deploymentName}:${build.buildId}:${nonce}`;
  const handle = await client.workflow.start(GATE_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: options.taskQueue,
    args: [{ deploymentName: build.deploymentName, buildId: build.buildId, nonce }],
    versioningOverride: { pinnedTo: { deploymentName: build.deploymentName, buildId: build.buildId } },
    // Its own ceiling too: a run the command could not end (the command killed) ends by itself.
    workflowExecutionTimeout: Math.max(2 * timeoutMs, 120_000),
  });
  const refuse = async (reason: string): Promise<GateRunReport> => {
    await handle.terminate(`deploy gate: ${reason}`.slice(0, 500)).catch(() => undefined);
    return { verdict: 'refuse', workflowId, reason };
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await progress(client, handle);
    if (seen.status === 'COMPLETED') {
      const result = (await handle.result()) as { ranOn?: GateRunReport['ranOn'] };
      return { verdict: 'pass', workflowId, ...(result?.ranOn ? { ranOn: result.ranOn } : {}) };
    }
    if (seen.status !== 'RUNNING') {
      const why = await handle.result().then(
        () => seen.status,
        (err: unknown) => {
          const e = err as { cause?: { message?: string }; message?: string };
          return e.cause?.message ?? e.message ?? String(err);
        },
      );
      return { verdict: 'refuse', workflowId, reason: `the gate run ended ${seen.status}: ${why}` };
    }
    if (seen.taskFailure?.includes(NOT_EXPORTED)) {
      // Its bundle loaded and its worker answered, but it predates the gate workflow: the activities are unproven.
      const reason = `build ${build.buildId} has no gate workflow (a build made before it): its workers loaded their code, its activities were not tried`;
      if (options.strict) return refuse(reason);
      await handle.terminate('deploy gate: the build has no gate workflow').catch(() => undefined);
      return { verdict: 'pass', workflowId, reason };
    }
    if (seen.taskFailure !== undefined)
      return refuse(`build ${build.buildId} failed its first workflow task: ${seen.taskFailure}`);
    if (Date.now() > deadline) {
      return refuse(
        seen.taskStarted
          ? `build ${build.buildId} did not complete the gate run in ${Math.round(timeoutMs / 1000)} s`
          : `no worker of build ${build.buildId} took the gate run's first task in ${Math.round(timeoutMs / 1000)} s: no live worker`,
      );
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}

/** The gate run in a line for a person. */
export function describeGateRun(report: GateRunReport, build: WorkerBuild): string {
  if (report.verdict === 'refuse') return `Gate run on build ${build.buildId}: REFUSED: ${report.reason}`;
  return (
    `Gate run on build ${build.buildId}: PASS` + (report.reason ? ` (${report.reason})` : ` (${report.workflowId})`)
  );
}
