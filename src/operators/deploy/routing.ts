/**
 * Where new runs go: a Worker Deployment's routing (its current build, and a build ramping up with a share of new
 * runs), read and changed through the server's own API, and what each build still has to finish.
 *
 * A pinned run never moves, so a build may stop only when no open run is pinned to it. The server says so itself
 * (drainage DRAINED, refreshed every few minutes); `openRunsOn` asks visibility directly, which answers at once.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { WorkerBuild } from '../../runtime/config/build';

const { TaskQueueKind, TaskQueueType, VersionDrainageStatus, WorkerDeploymentVersionStatus } = temporal.api.enums.v1;

export interface BuildSummary {
  buildId: string;
  /** current, ramping, draining (no new runs, open runs left), drained, inactive (never current) */
  status: 'current' | 'ramping' | 'draining' | 'drained' | 'inactive' | 'unknown';
  /**
   * When the build last stopped taking new runs (else, when it last became current; absent: never took any): the
   * rollback goes to the latest of these. Server 1.29 fills the first only.
   */
  lastActiveMs?: number;
  createMs?: number;
  /** Since when the build is current, exactly as the server wrote it (`<seconds>.<nanos>`): absent unless current. */
  currentSince?: string;
  /** When the build last stopped taking new runs, exactly as the server wrote it (`<seconds>.<nanos>`). */
  deactivatedAt?: string;
}

export interface DeploymentRouting {
  deploymentName: string;
  current?: string;
  ramping?: { buildId: string; percentage: number };
  builds: BuildSummary[];
  /** Passed back with a change, so two operators' changes at once cannot both land on a stale view. */
  conflictToken?: Uint8Array;
}

function ms(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  const seconds = Number(t.seconds);
  return seconds > 0 ? seconds * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined;
}

/** A timestamp as an exact key: two routing changes of one update carry the very same time. */
function exact(t: { seconds?: unknown; nanos?: number | null } | null | undefined): string | undefined {
  if (!t || t.seconds === undefined || t.seconds === null || Number(t.seconds) <= 0) return undefined;
  return `${String(t.seconds)}.${t.nanos ?? 0}`;
}

function statusOf(
  status: temporal.api.enums.v1.WorkerDeploymentVersionStatus | null | undefined,
): BuildSummary['status'] {
  switch (status) {
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT:
      return 'current';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING:
      return 'ramping';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING:
      return 'draining';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED:
      return 'drained';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE:
      return 'inactive';
    default:
      return 'unknown';
  }
}

/** The deployment's routing and builds; undefined when no worker of it has polled yet. */
export async function describeDeployment(
  client: Client,
  deploymentName: string,
): Promise<DeploymentRouting | undefined> {
  let response: temporal.api.workflowservice.v1.IDescribeWorkerDeploymentResponse;
  try {
    response = await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName,
    });
  } catch (err) {
    if ((err as { code?: number }).code === 5 /* NOT_FOUND */) return undefined;
    throw err;
  }
  const info = response.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || undefined;
  const rampingId = routing?.rampingDeploymentVersion?.buildId || undefined;
  return {
    deploymentName,
    ...(current ? { current } : {}),
    ...(rampingId ? { ramping: { buildId: rampingId, percentage: routing?.rampingVersionPercentage ?? 0 } } : {}),
    builds: (info?.versionSummaries ?? []).map((v) => {
      const lastActiveMs = ms(v.lastDeactivationTime) ?? ms(v.lastCurrentTime);
      const createMs = ms(v.createTime);
      const currentSince = exact(v.currentSinceTime);
      const deactivatedAt = exact(v.lastDeactivationTime);
      return {
        buildId: v.deploymentVersion?.buildId ?? '',
        status: statusOf(v.status),
        ...(lastActiveMs ? { lastActiveMs } : {}),
        ...(createMs ? { createMs } : {}),
        ...(currentSince ? { currentSince } : {}),
        ...(deactivatedAt ? { deactivatedAt } : {}),
      };
    }),
    ...(response.conflictToken?.length ? { conflictToken: response.conflictToken } : {}),
  };
}

/** Who made a change, as the server records it (the deployment's `lastModifierIdentity`). */
export interface Actor {
  identity: string;
}

/**
 * Sends every new run to `build`; the ramp, if any, ends. With a conflict token, only if routing is still as read
 * then; the token for the next change comes back. Refused by the server when the build has no poller
 * (`allow_no_pollers` is never set: a build no worker runs would take runs nobody starts).
 */
export async function setCurrentBuild(
  client: Client,
  build: WorkerBuild,
  by: Actor,
  conflictToken?: Uint8Array,
): Promise<Uint8Array | undefined> {
  const response = await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: build.deploymentName,
    buildId: build.buildId,
    identity: by.identity,
    ...(conflictToken ? { conflictToken } : {}),
  });
  return response.conflictToken?.length ? response.conflictToken : undefined;
}

/** Sends `percentage` of new runs to `build` (the rest to the current build); 0 % with no build ends a ramp. */
export async function setRampingBuild(
  client: Client,
  deploymentName: string,
  ramp: { buildId: string; percentage: number } | undefined,
  by: Actor,
  conflictToken?: Uint8Array,
): Promise<Uint8Array | undefined> {
  const response = await client.workflowService.setWorkerDeploymentRampingVersion({
    namespace: client.options.namespace,
    deploymentName,
    buildId: ramp?.buildId ?? '',
    percentage: ramp?.percentage ?? 0,
    identity: by.identity,
    ...(conflictToken ? { conflictToken } : {}),
  });
  return response.conflictToken?.length ? response.conflictToken : undefined;
}

export interface BuildState {
  /** The server's drainage view: drained once no open run is pinned to the build (refreshed every few minutes). */
  drainage?: 'draining' | 'drained';
  /** Task queues the build's workers poll. */
  taskQueues: string[];
  /** Each task queue and kind of task (workflow, activity) the build registered: what must have live pollers. */
  queues: Array<{ name: string; type: 'workflow' | 'activity' | 'nexus' }>;
}

/** What the server knows of one build; undefined when no worker of it ever polled. */
export async function describeBuild(client: Client, build: WorkerBuild): Promise<BuildState | undefined> {
  let response: temporal.api.workflowservice.v1.IDescribeWorkerDeploymentVersionResponse;
  try {
    response = await client.workflowService.describeWorkerDeploymentVersion({
      namespace: client.options.namespace,
      deploymentVersion: { deploymentName: build.deploymentName, buildId: build.buildId },
    });
  } catch (err) {
    if ((err as { code?: number }).code === 5 /* NOT_FOUND */) return undefined;
    throw err;
  }
  const drainage = response.workerDeploymentVersionInfo?.drainageInfo?.status;
  return {
    ...(drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING ? { drainage: 'draining' as const } : {}),
    ...(drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED ? { drainage: 'drained' as const } : {}),
    taskQueues: [...new Set((response.versionTaskQueues ?? []).map((q) => q.name ?? ''))].filter(Boolean),
    queues: (response.versionTaskQueues ?? [])
      .filter((q) => q.name)
      .map((q) => ({ name: q.name!, type: queueTypeName(q.type) })),
  };
}

function queueTypeName(
  type: temporal.api.enums.v1.TaskQueueType | null | undefined,
): 'workflow' | 'activity' | 'nexus' {
  if (type === TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY) return 'activity';
  if (type === TaskQueueType.TASK_QUEUE_TYPE_NEXUS) return 'nexus';
  return 'workflow';
}

const QUEUE_TYPES = {
  workflow: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  activity: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  nexus: TaskQueueType.TASK_QUEUE_TYPE_NEXUS,
} as const;

/** The server's default read partitions of a queue (matching.numTaskqueueReadPartitions): the root and 1..3. */
const PARTITIONS = 4;

/** A queue's partitions by the names the server gives them (`/_sys/<queue>/<n>`; the root is the queue's own name). */
function partitionNames(queue: string): string[] {
  return [queue, ...Array.from({ length: PARTITIONS - 1 }, (_, i) => `/_sys/${queue}/${i + 1}`)];
}

export interface QueuePolls {
  name: string;
  type: 'workflow' | 'activity' | 'nexus';
  /** When a worker of the build last polled this queue for this kind of task (absent: none in the server's memory). */
  lastPollMs?: number;
}

/**
 * When a worker of `build` last polled each of its task queues, as the server's matching service remembers it (the
 * pollers of the last few minutes, each with its build). A poll is recorded when it starts and when it ends, and an
 * idle worker's long poll lasts up to a minute: a live worker's last poll is at most about a minute old.
 */
export async function lastPolls(client: Client, build: WorkerBuild): Promise<QueuePolls[]> {
  const state = await describeBuild(client, build);
  return Promise.all(
    (state?.queues ?? []).map(async (q) => {
      // Each partition remembers the polls it took (the root also those the others forward): ask every one.
      const responses = await Promise.all(
        partitionNames(q.name).map((name, i) =>
          client.workflowService
            .describeTaskQueue({
              namespace: client.options.namespace,
              taskQueue: { name, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
              taskQueueType: QUEUE_TYPES[q.type],
            })
            .catch((err: unknown) => {
              if (i === 0) throw err;
              return { pollers: [] };
            }),
        ),
      );
      const times = responses
        .flatMap((r) => r.pollers ?? [])
        .filter(
          (p) =>
            p.deploymentOptions?.deploymentName === build.deploymentName &&
            p.deploymentOptions?.buildId === build.buildId,
        )
        .map((p) => ms(p.lastAccessTime) ?? 0);
      const lastPollMs = times.length > 0 ? Math.max(...times) : undefined;
      return { ...q, ...(lastPollMs ? { lastPollMs } : {}) };
    }),
  );
}

/** The visibility query for runs on a build: the server's own search attributes, on every cluster. */
export function runsOnBuildQuery(build: WorkerBuild, status?: 'Running'): string {
  const version = `${build.deploymentName}:${build.buildId}`.replace(/'/g, "\\'");
  return `TemporalWorkerDeploymentVersion = '${version}'` + (status ? ` AND ExecutionStatus = '${status}'` : '');
}

/** Open runs pinned to (or last run by) `build`, by visibility: the count a build must reach 0 before it stops. */
export async function openRunsOn(client: Client, build: WorkerBuild): Promise<number> {
  const { count } = await client.workflow.count(runsOnBuildQuery(build, 'Running'));
  return count;
}

/**
 * The server's own drainage query (its BuildIds list holds `pinned:<deployment>:<build>` for a pinned run): every open
 * run pinned to `build`, by its first task there or by a versioning override, even one whose last task ran elsewhere
 * or that never ran a task. A run pinned by override to a stopped build shows in this query only.
 */
export function pinnedRunsQuery(build: WorkerBuild): string {
  const version = `pinned:${build.deploymentName}:${build.buildId}`.replace(/'/g, "\\'");
  return `BuildIds = '${version}' AND ExecutionStatus = 'Running'`;
}

/** How many open runs are pinned to `build` (pinnedRunsQuery). */
export async function openPinnedRunsOn(client: Client, build: WorkerBuild): Promise<number> {
  const { count } = await client.workflow.count(pinnedRunsQuery(build));
  return count;
}

/**
 * Pins one run to `build` by a versioning override: its next workflow task goes to that build's workers, whatever
 * build it was pinned to before. False when the run closed meanwhile (nothing to move).
 */
export async function pinRunTo(
  client: Client,
  run: { workflowId: string; runId: string },
  build: WorkerBuild,
  by: Actor,
): Promise<boolean> {
  try {
    await client.workflowService.updateWorkflowExecutionOptions({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: run.workflowId, runId: run.runId },
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: {
            behavior:
              temporal.api.workflow.v1.VersioningOverride.PinnedOverrideBehavior.PINNED_OVERRIDE_BEHAVIOR_PINNED,
            version: { deploymentName: build.deploymentName, buildId: build.buildId },
          },
        },
      },
      updateMask: { paths: ['versioning_override'] },
      identity: by.identity,
    });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 5 /* NOT_FOUND: closed or gone */) return false;
    throw err;
  }
}
