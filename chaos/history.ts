/**
 * What one run's raw history says about how it ran: the builds that completed its workflow tasks, when its first task
 * was handed out, and the tasks that failed (nondeterminism among them). Read by the deploy drill while it runs (its
 * gate's evidence) and by its checks after, and by any class that replays what it collected; it imports no step.
 */
import { temporal } from '@temporalio/proto';
import { parseDeploymentVersion } from '../src/runtime/config/build';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Nondeterminism as the SDK and the server word it. */
export const NONDETERMINISM = /TMPRL1100|nondetermin|non-determin|NON_DETERMINISTIC/i;

/** What one run's history says about the builds that ran it. */
export interface RunBuilds {
  workflowId: string;
  runId: string;
  type: string;
  /** Build ids of its completed workflow tasks, in order, deduplicated ('' for a task completed by no build). */
  builds: string[];
  startMs: number;
  /** When the first task that completed was handed to a worker (its WorkflowTaskStarted). */
  firstTaskMs?: number;
  closeMs?: number;
  continuedFromRunId?: string;
  taskFailures: Array<{ cause: string; message: string }>;
}

function ms(t: HistoryEvent['eventTime']): number {
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/**
 * The build id a completed workflow task carries: its deployment version, or an older field that names it. The string
 * form is read by src's one parser of `<deployment>:<buildId>`; older servers wrote `<deployment>.<buildId>`, split
 * at the first dot (a deployment name has none).
 */
function buildOfTask(a: temporal.api.history.v1.IWorkflowTaskCompletedEventAttributes): string {
  if (a.deploymentVersion?.buildId) return a.deploymentVersion.buildId;
  const v = a.workerDeploymentVersion ?? '';
  const parsed = parseDeploymentVersion(v);
  if (parsed) return parsed.buildId;
  const dot = v.indexOf('.');
  if (dot > 0) return v.slice(dot + 1);
  return a.deployment?.buildId ?? a.workerVersion?.buildId ?? '';
}

const CLOSE_EVENTS = [
  'workflowExecutionCompletedEventAttributes',
  'workflowExecutionFailedEventAttributes',
  'workflowExecutionTimedOutEventAttributes',
  'workflowExecutionCanceledEventAttributes',
  'workflowExecutionTerminatedEventAttributes',
  'workflowExecutionContinuedAsNewEventAttributes',
] as const;

/** Reads one history into the builds that ran it and the workflow tasks that failed. */
export function runBuilds(workflowId: string, runId: string, type: string, events: HistoryEvent[]): RunBuilds {
  const builds: string[] = [];
  const taskFailures: RunBuilds['taskFailures'] = [];
  const startedAt = new Map<number, number>();
  let firstTaskMs: number | undefined;
  let closeMs: number | undefined;
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) startedAt.set(Number(e.eventId), ms(e.eventTime));
    const done = e.workflowTaskCompletedEventAttributes;
    if (done) {
      const build = buildOfTask(done);
      if (builds.at(-1) !== build) builds.push(build);
      firstTaskMs ??= startedAt.get(Number(done.startedEventId));
    }
    const failed = e.workflowTaskFailedEventAttributes;
    if (failed) {
      taskFailures.push({
        cause: temporal.api.enums.v1.WorkflowTaskFailedCause[failed.cause ?? 0] ?? String(failed.cause),
        message: (failed.failure?.message ?? '').split('\n')[0]!.slice(0, 300),
      });
    }
    if (CLOSE_EVENTS.some((k) => e[k])) closeMs = ms(e.eventTime);
  }
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  return {
    workflowId,
    runId,
    type,
    builds: [...new Set(builds)],
    startMs: ms(events[0]?.eventTime),
    ...(firstTaskMs !== undefined ? { firstTaskMs } : {}),
    ...(closeMs !== undefined ? { closeMs } : {}),
    ...(started?.continuedExecutionRunId ? { continuedFromRunId: started.continuedExecutionRunId } : {}),
    taskFailures,
  };
}
