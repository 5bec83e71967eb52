/**
 * What the benchmarks do to the stack: build booking requests (the test harness's builders, so the
 * payload is the one the tests use), read bookings back from visibility, and terminate what is left.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  BookingStageKey,
  bookingWorkflowId,
  ORDER_WORKFLOW_TYPE,
  SWEEP_WORKFLOW_TYPE,
  type BookingRequest,
} from '../src/api/contract/index';
import { bookingRequest } from '../test/harness/booking';
import { forEachConcurrently, nowMs, waitFor } from './measure';

export type RecoveryOverride = NonNullable<BookingRequest['recovery']>;

/** A booking request with the sandbox's `Test` header and, optionally, a recovery schedule. */
export function benchRequest(test: string, recovery?: RecoveryOverride): BookingRequest {
  return bookingRequest({ test, ...(recovery ? { recovery } : {}) });
}

/**
 * The spec's recovery schedule (src/api/contract.ts defaults) divided by `timeScale`. Scaled, it is below the
 * production bounds: `testing` (the bench's workers run with RECOVERY_TESTING=on, see config.ts).
 */
export function scaledRecovery(timeScale: number): RecoveryOverride {
  return {
    ...(timeScale !== 1 ? { testing: true } : {}),
    delaysSeconds: [30, 60, 120, 240, 480].map((s) => s / timeScale),
    repeatEverySeconds: 600 / timeScale,
    rebookAfterSeconds: 600 / timeScale,
  };
}

/**
 * The bookings on a task queue (booking or floor workflows): not the order workflows a confirmed booking hands
 * its order to, which stay open until check-in, nor the reconciliation sweep.
 */
export const byTaskQueue = (taskQueue: string) =>
  `TaskQueue = '${taskQueue}' AND WorkflowType != '${ORDER_WORKFLOW_TYPE}' AND WorkflowType != '${SWEEP_WORKFLOW_TYPE}'`;
export const runningOn = (taskQueue: string) => `${byTaskQueue(taskQueue)} AND ExecutionStatus = 'Running'`;

export async function countWorkflows(client: Client, query: string): Promise<number> {
  return (await client.workflow.count(query)).count;
}

export interface ClosedBooking {
  workflowId: string;
  status: string;
  /** The outcome kind: bookingWorkflow writes it to BookingStage when it ends. */
  outcome?: string;
  startTime: number;
  closeTime?: number;
}

/** Every booking on the task queue as visibility sees it (start/close times from the server). */
export async function listBookings(client: Client, taskQueue: string): Promise<ClosedBooking[]> {
  const out: ClosedBooking[] = [];
  for await (const w of client.workflow.list({ query: byTaskQueue(taskQueue) })) {
    out.push({
      workflowId: w.workflowId,
      status: w.status.name,
      outcome: w.typedSearchAttributes.get(BookingStageKey),
      startTime: w.startTime.getTime(),
      closeTime: w.closeTime?.getTime(),
    });
  }
  return out;
}

/** Waits until no booking on the task queue is running, or `timeoutMs` passed; returns how many still run. */
export async function waitUntilNoneRunning(client: Client, taskQueue: string, timeoutMs: number): Promise<number> {
  let running = Infinity;
  try {
    await waitFor(
      'bookings to finish',
      async () => {
        running = await countWorkflows(client, runningOn(taskQueue));
        return running === 0 ? true : undefined;
      },
      timeoutMs,
      // A count is a cheap visibility query: ask often, so the wait ends soon after the last close.
      250,
    );
  } catch {
    // Reported by the caller as unresolved bookings.
  }
  return running;
}

/**
 * Terminates these workflows where they still run. One call per workflow, 32 at a time: the
 * server's batch operation would do it in one request, but its batcher is throttled to
 * 50 workflows/s by default (worker.batcherRPS), slower than this loop.
 */
export async function terminateWorkflows(
  client: Client,
  workflowIds: string[],
  reason: string,
): Promise<{ terminated: number; seconds: number }> {
  const t0 = nowMs();
  let terminated = 0;
  await forEachConcurrently(workflowIds.length, 32, async (i) => {
    try {
      await client.workflow.getHandle(workflowIds[i]!).terminate(reason);
      terminated++;
    } catch (err) {
      // Already ended (or never started): nothing to stop.
      if (err instanceof WorkflowNotFoundError) return;
      throw err;
    }
  });
  return { terminated, seconds: (nowMs() - t0) / 1000 };
}

/** Terminates the bookings of these references that still run. */
export function terminateBookings(client: Client, references: string[], reason: string) {
  return terminateWorkflows(client, references.map(bookingWorkflowId), reason);
}

/** References that have more than one supplier order: must be empty, whatever the load. */
export function duplicateOrders(orders: { customerReferenceNo: string }[]): string[] {
  const seen = new Map<string, number>();
  for (const o of orders) seen.set(o.customerReferenceNo, (seen.get(o.customerReferenceNo) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([ref]) => ref);
}
