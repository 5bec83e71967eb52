/**
 * One booking as its page in the console shows it: the booking workflow and the order's latest run, each with its
 * status, stage and the build it runs on. Read from describe() only: no results, so no guest data.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { BookingStageKey, bookingWorkflowId, orderWorkflowId } from '../../api/contract/index';
import { runBuildOf, type RunBuild } from '../shared/run-build';

export interface RunSummary {
  workflowId: string;
  runId: string;
  type: string;
  /** RUNNING, COMPLETED, FAILED, TERMINATED, ... */
  status: string;
  stage?: string;
  startTime: string;
  closeTime?: string;
  /** The build the run is on; null when it is unversioned. */
  build: RunBuild | null;
}

export interface BookingDetail {
  customerReferenceNo: string;
  /** Null when there is no booking workflow (an order run only: an orphan the sweep found). */
  booking: RunSummary | null;
  /** The order's latest run, or null when none ran. */
  order: RunSummary | null;
}

/** The booking of `ref`, or undefined when it has neither a booking workflow nor an order run. */
export async function readBookingDetail(client: Client, ref: string): Promise<BookingDetail | undefined> {
  const [booking, order] = await Promise.all([
    describeOrNull(client, bookingWorkflowId(ref)),
    describeOrNull(client, orderWorkflowId(ref)),
  ]);
  if (!booking && !order) return undefined;
  return { customerReferenceNo: ref, booking, order };
}

async function describeOrNull(client: Client, workflowId: string): Promise<RunSummary | null> {
  let d: WorkflowExecutionDescription;
  try {
    d = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  const stage = d.typedSearchAttributes.get(BookingStageKey);
  return {
    workflowId: d.workflowId,
    runId: d.runId,
    type: d.type,
    status: d.status.name,
    ...(stage ? { stage } : {}),
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    build: runBuildOf(d) ?? null,
  };
}
