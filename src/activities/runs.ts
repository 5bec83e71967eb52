/**
 * The runs of one workflow id, read from Temporal: what an order run needs to know of the runs before it (did one
 * send a Cancel that may have acted; how did the last one end). Every run is listed, page by page, newest first, and
 * the ones a decision reads are described by run id, since a listing can lag behind a run's end or carry no search
 * attributes at all. Servers without list queries (the Java test server) answer through the older list of closed runs.
 */
import { temporal } from '@temporalio/proto';
import { BookingStageKey } from '../api/contract/index';

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;
type Execution = temporal.api.workflow.v1.IWorkflowExecutionInfo;
const Status = temporal.api.enums.v1.WorkflowExecutionStatus;

const GRPC_UNIMPLEMENTED = 12;
const PAGE_SIZE = 100;

/** One run as a decision reads it: its id, status and stage, and when it started and closed. */
export interface RunView {
  runId: string;
  status: 'running' | 'completed' | 'continued-as-new' | 'ended-otherwise';
  /** The `BookingStage` search attribute as the run left it (`order-<stage>`); undefined when none was readable. */
  stage?: string;
  startedAtMs: number;
  closedAtMs?: number;
}

/** More runs than this under one id is not an order's life: the caller reads it as unknown. */
export class TooManyRuns extends Error {
  override readonly name = 'TooManyRuns';
}

/**
 * Every run of `workflowId` but `exceptRunId`, newest first, each as the server describes it by its run id (a listed
 * run that still reads as running is asked again: visibility lags behind a run's end). Throws when they cannot be read
 * whole: a run missed is a Cancel missed.
 */
export async function everyRunOf(
  service: Pick<
    WorkflowService,
    'listWorkflowExecutions' | 'listClosedWorkflowExecutions' | 'describeWorkflowExecution'
  >,
  namespace: string,
  workflowId: string,
  { exceptRunId, ceiling = 1_000 }: { exceptRunId?: string; ceiling?: number } = {},
): Promise<RunView[]> {
  if (/['"\\]/.test(workflowId)) throw new Error('a workflow id with quotes cannot be listed');
  const listed = await listAll(service, namespace, workflowId, ceiling);
  const views: RunView[] = [];
  for (const execution of listed) {
    const runId = execution.execution?.runId;
    if (!runId || runId === exceptRunId) continue;
    let view = viewOf(execution);
    if (view.status === 'running' || view.stage === undefined) {
      const described = await service.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
      if (described.workflowExecutionInfo) view = viewOf(described.workflowExecutionInfo);
    }
    views.push(view);
  }
  return views.sort((a, b) => b.startedAtMs - a.startedAtMs);
}

async function listAll(
  service: Pick<WorkflowService, 'listWorkflowExecutions' | 'listClosedWorkflowExecutions'>,
  namespace: string,
  workflowId: string,
  ceiling: number,
): Promise<Execution[]> {
  const out: Execution[] = [];
  let token: Uint8Array | undefined;
  let closedOnly = false;
  for (;;) {
    let page: { executions?: Execution[] | null; nextPageToken?: Uint8Array | null };
    try {
      page = closedOnly
        ? await service.listClosedWorkflowExecutions({
            namespace,
            executionFilter: { workflowId },
            maximumPageSize: PAGE_SIZE,
            ...(token ? { nextPageToken: token } : {}),
          })
        : await service.listWorkflowExecutions({
            namespace,
            query: `WorkflowId = '${workflowId}'`,
            pageSize: PAGE_SIZE,
            ...(token ? { nextPageToken: token } : {}),
          });
    } catch (err) {
      if (closedOnly || (err as { code?: unknown })?.code !== GRPC_UNIMPLEMENTED || out.length > 0) throw err;
      closedOnly = true;
      continue;
    }
    out.push(...(page.executions ?? []));
    if (out.length > ceiling) throw new TooManyRuns(`more than ${ceiling} runs of ${workflowId}`);
    token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    if (!token) break;
  }
  return out;
}

function viewOf(e: Execution): RunView {
  const status =
    e.status === Status.WORKFLOW_EXECUTION_STATUS_RUNNING
      ? 'running'
      : e.status === Status.WORKFLOW_EXECUTION_STATUS_COMPLETED
        ? 'completed'
        : e.status === Status.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
          ? 'continued-as-new'
          : 'ended-otherwise';
  const closedAtMs = millis(e.closeTime);
  return {
    runId: e.execution?.runId ?? '',
    status,
    ...withStage(stageOf(e.searchAttributes?.indexedFields?.[BookingStageKey.name]?.data)),
    startedAtMs: millis(e.startTime) ?? 0,
    ...(closedAtMs !== undefined ? { closedAtMs } : {}),
  };
}

function withStage(stage: string | undefined): { stage?: string } {
  return stage === undefined ? {} : { stage };
}

function millis(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/** A Keyword search attribute's value: JSON text of a string (or a one-element list). */
export function stageOf(data: Uint8Array | null | undefined): string | undefined {
  if (!data) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(data).toString('utf8'));
    const s = Array.isArray(value) ? value[0] : value;
    return typeof s === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}
