/** The activities as orderWorkflow calls them. */
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities } from '../../activities/types';
import type { OrderActivities } from '../../activities/types';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  CANCEL_START_WITHIN_SECONDS,
  queryOrdersTaskQueue,
  supplierTaskQueue,
} from '../../api/contract/definitions';

/**
 * Cancel, sent once per call: never retried by Temporal, because a retry after a lost answer is a second Cancel
 * whose refusal ("cannot be cancelled": the first worked) must not be read as the first's. Every ending comes
 * back as the Cancel rule's value (src/runtime/rules/cancel.ts); a worker lost mid-send times out, which the workflow
 * reads as ambiguous. A Cancel no worker started within CANCEL_START_WITHIN_SECONDS (a backlog, no worker) was never
 * sent: it ends, so the workflow re-quotes before it tries again, instead of going out minutes after "free" was
 * quoted, at a fee nobody accepted. The fee margin's floor counts that minute (RECOVERY_BOUNDS).
 */
const cancelOptions = {
  scheduleToStartTimeout: `${CANCEL_START_WITHIN_SECONDS} seconds`,
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.cancel} seconds`,
  retry: { maximumAttempts: 1 },
} as const;
const { sendCancel } = proxyActivities<OrderActivities>(cancelOptions);

/** Cancel on the queue of the order's supplier account (src/worker.ts), or the run's own on a single-account worker. */
export function cancelActivity(supplier: string | undefined): OrderActivities['sendCancel'] {
  if (!supplier) return sendCancel;
  return proxyActivities<OrderActivities>({
    ...cancelOptions,
    taskQueue: supplierTaskQueue(workflowInfo().taskQueue, supplier),
  }).sendCancel;
}

/**
 * Whether `booking:<reference>` still runs: one describe of Temporal, read-only, so a local activity (run again after
 * a lost worker at no risk, and no trip through a task queue); retried a little, and failing it decides nothing.
 */
export const { bookingInProgress } = proxyLocalActivities<OrderActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * The run's first step: its input within the worker's bounds and whose order it is (reads of Temporal only, so a
 * local activity, run again at no risk). Failing it, the run acts on nothing.
 */
export const { checkOrderStart } = proxyLocalActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

/**
 * Whether an earlier run of the order left a Cancel that may have acted unsettled: reads of Temporal only (a list by
 * workflow id, each run's end), so a local activity; asked only when a run's first Cancel is refused.
 */
export const { earlierCancelSends } = proxyLocalActivities<OrderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** The worker's clock, for a fee quote (see the activity): a local activity, recorded as a marker. */
export const { clockForFees } = proxyLocalActivities<OrderActivities>({
  startToCloseTimeout: '5 seconds',
  retry: { maximumAttempts: 3 },
});

/**
 * The sweep's rule for one order (src/activities/sweep.ts), as a check calls it: the activity reads the booking and
 * the last ended order run from Temporal itself.
 */
interface JudgeOrderActivity {
  judgeOrder(input: {
    customerReferenceNo: string;
    status: number;
  }): Promise<{ verdict: 'ok' | 'orphan' | 'mismatch'; reason?: string }>;
}

/** Whether an order agrees with what its booking reported (the sweep's rule), for a check. */
export const { judgeOrder } = proxyActivities<JudgeOrderActivity>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** QueryOrders on the rate-limited companion queue (the fleet-wide cap), as the booking's polls. */
export function orderQueryActivity(supplier: string | undefined): BookingActivities['queryOrder'] {
  const calls = supplier ? supplierTaskQueue(workflowInfo().taskQueue, supplier) : workflowInfo().taskQueue;
  return proxyActivities<BookingActivities>({
    startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.queryOrders} seconds`,
    scheduleToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
    taskQueue: queryOrdersTaskQueue(calls),
  }).queryOrder;
}
