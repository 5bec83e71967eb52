/** The activities as bookingWorkflow calls them, each with the options its role needs. */
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities } from '../../activities/types';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  BOOK_START_WITHIN_SECONDS,
  queryOrdersTaskQueue,
  supplierTaskQueue,
} from '../../api/contract/definitions';

/**
 * CheckAvail reads only: retried by Temporal with backoff for about 10 minutes of waits (16 attempts: 1, 2, 4, ... 32 s,
 * then a minute apart), as long as refusals of a first Book are: a supplier account down or answering 429 for minutes
 * delays its bookings, which go on once it answers. Used-up retries, or an answer no retry changes (bad request,
 * credentials), become a `failed` outcome, nothing booked. Before, 8 attempts (about 2 minutes) failed every booking
 * that began while its account was down for longer. Counted in attempts, not a schedule-to-close time: a local
 * activity's is measured on the worker's clock, where its waits are the workflow's timers.
 */
const checkAvailOptions = {
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.checkAvail} seconds`,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 16 },
} as const;

/**
 * CheckAvail as the run calls it: a local activity. It only reads, so running it again after a lost worker costs
 * one request and no risk, and it saves a workflow task and a trip through the server's queues per booking. A
 * retry waits in the worker only for the first, short backoff; longer ones are durable timers, so a worker is not
 * held in one workflow task for minutes and the wait survives the worker.
 */
export const { checkAvail } = proxyLocalActivities<BookingActivities>({
  ...checkAvailOptions,
  localRetryThreshold: '1 second',
});

/**
 * A new booking's first step: the input check and CheckAvail in one local activity, with CheckAvail's options
 * (its retries re-run the check, which costs microseconds).
 */
export const { checkRequestAndAvail } = proxyLocalActivities<BookingActivities>({
  ...checkAvailOptions,
  localRetryThreshold: '1 second',
});

/**
 * Book is never retried by Temporal: an activity that timed out may have reached the supplier, so the
 * workflow decides (the Book rule's value), and sends Book again itself only where no order can exist.
 * The timeout is above the client's Book timeout (the config checks it), so the client classifies first;
 * the activity heartbeats every 2 s, so a worker lost mid-Book is noticed after 15 s and recovery starts then.
 *
 * Book stays an activity, not a local one, although that costs the happy path its second workflow task:
 * a local activity lost with its worker is run again by the next worker as soon as the workflow task
 * times out, so a second Book would go out while the first may still be in flight at the supplier, with
 * only the supplier's idempotency by reference between the two; and its start is nowhere in the history
 * until it ends. As an activity, a lost Book is an `ambiguous` ending and the order is looked up with
 * QueryOrders before anything is sent again. What that costs is measured in docs/performance.md.
 * A Book no worker started within BOOK_START_WITHIN_SECONDS was never sent (book.ts reads it as refused).
 */
const bookOptions = {
  scheduleToStartTimeout: `${BOOK_START_WITHIN_SECONDS} seconds`,
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.book} seconds`,
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
} as const;
const { book } = proxyActivities<BookingActivities>(bookOptions);

/**
 * Book as this booking sends it: on the queue of its supplier account (each account's calls on queues of their own,
 * src/worker.ts), or on the booking's own queue where the worker has a single supplier.
 */
export function bookActivity(supplier: string | undefined): BookingActivities['book'] {
  if (!supplier) return book;
  return proxyActivities<BookingActivities>({
    ...bookOptions,
    taskQueue: supplierTaskQueue(workflowInfo().taskQueue, supplier),
  }).book;
}

/**
 * The input check (contract schemas, no I/O) runs as a local activity, in the worker's main thread
 * where the schemas exist once, instead of in every cached workflow (see ../../contract/schemas).
 */
export const { validateBookingRequest } = proxyLocalActivities<BookingActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** A failing QueryOrders is retried with backoff and is not a poll; after 5 minutes it counts as an error poll. */
const queryOrderOptions = {
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.queryOrders} seconds`,
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;

/**
 * The QueryOrders activity of this run: on the booking queue's rate-limited companion queue (the fleet-wide cap,
 * see src/worker.ts). Call once, at the start of a run.
 */
export function queryOrderActivity(supplier: string | undefined): BookingActivities['queryOrder'] {
  const calls = supplier ? supplierTaskQueue(workflowInfo().taskQueue, supplier) : workflowInfo().taskQueue;
  return proxyActivities<BookingActivities>({
    ...queryOrderOptions,
    taskQueue: queryOrdersTaskQueue(calls),
  }).queryOrder;
}
