/**
 * One booking as its page in the console shows it: the booking workflow and the order's latest run, each with its
 * status, stage and the build it runs on, read from describe() (no results, so no guest data); and for a booking
 * still running, what it waits for (its next Book or poll, its deadline), read from its state query.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { BookingStageKey, bookingStateQuery, bookingWorkflowId, orderWorkflowId } from '../../api/contract/index';
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
  /** What a running booking waits for; absent when it runs no wait or its workers did not answer in time. */
  waits?: BookingWaits;
  /** The supplier account the booking is on (its memo, written by its first step); absent on a single supplier. */
  supplier?: string;
}

/** The times a running booking waits for (ISO), from its state: never guest data. */
export interface BookingWaits {
  /** A first Book refused before any work (429, connection refused) is sent again then. */
  nextBookAt?: string;
  /** The next QueryOrders poll of its recovery. */
  nextPollAt?: string;
  /** When its recovery gives up and a person is told. */
  deadlineAt?: string;
}

/** How long the page waits for a booking's workers to answer its state query: a page never hangs on a worker. */
const STATE_WITHIN_MS = 3_000;

/** The booking of `ref`, or undefined when it has neither a booking workflow nor an order run. */
export async function readBookingDetail(client: Client, ref: string): Promise<BookingDetail | undefined> {
  const [booking, order] = await Promise.all([
    describeOrNull(client, bookingWorkflowId(ref)),
    describeOrNull(client, orderWorkflowId(ref)),
  ]);
  if (!booking && !order) return undefined;
  const waits = booking?.run.status === 'RUNNING' ? await waitsOf(client, ref) : undefined;
  // The account the booking's first step chose, from its memo: an id, shown as text, never a credential.
  const supplier = booking?.memo?.['supplier'];
  return {
    customerReferenceNo: ref,
    booking: booking?.run ?? null,
    order: order?.run ?? null,
    ...(waits ? { waits } : {}),
    ...(typeof supplier === 'string' ? { supplier } : {}),
  };
}

/** The waits a running booking's state shows, or undefined when it shows none or does not answer in time. */
async function waitsOf(client: Client, ref: string): Promise<BookingWaits | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STATE_WITHIN_MS)));
  try {
    const state = await Promise.race([
      client.workflow.getHandle(bookingWorkflowId(ref)).query(bookingStateQuery),
      late,
    ]).catch(() => undefined);
    if (!state) return undefined;
    const waits: BookingWaits = {
      ...(state.nextBookAt ? { nextBookAt: state.nextBookAt } : {}),
      ...(state.nextPollAt ? { nextPollAt: state.nextPollAt } : {}),
      ...(state.deadlineAt ? { deadlineAt: state.deadlineAt } : {}),
    };
    return Object.keys(waits).length > 0 ? waits : undefined;
  } finally {
    clearTimeout(timer);
  }
}

async function describeOrNull(
  client: Client,
  workflowId: string,
): Promise<{ run: RunSummary; memo?: Record<string, unknown> } | null> {
  let d: WorkflowExecutionDescription;
  try {
    d = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  const stage = d.typedSearchAttributes.get(BookingStageKey);
  const run: RunSummary = {
    workflowId: d.workflowId,
    runId: d.runId,
    type: d.type,
    status: d.status.name,
    ...(stage ? { stage } : {}),
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    build: runBuildOf(d) ?? null,
  };
  return { run, ...(d.memo ? { memo: d.memo } : {}) };
}
