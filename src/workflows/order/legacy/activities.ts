/** The activities as orderWorkflow calls them. */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities } from '../../../activities/booking';
import { ACTIVITY_TIMEOUT_SECONDS, queryOrdersTaskQueue } from '../../../contract/definitions';

/**
 * Cancel is retried by Temporal on anything that may be passing (429, 5xx, timeouts): a second Cancel of
 * the same order cancels nothing twice. After 5 minutes the workflow follows the order all the same
 * (the first Cancel may have been taken). The supplier's refusals come back as values.
 */
export const { cancelOrder } = proxyActivities<BookingActivities>({
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.cancel} seconds`,
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** QueryOrders on the rate-limited companion queue (the fleet-wide cap), as the booking's polls. */
export function orderQueryActivity(): BookingActivities['queryOrder'] {
  return proxyActivities<BookingActivities>({
    startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.queryOrders} seconds`,
    scheduleToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
    taskQueue: queryOrdersTaskQueue(workflowInfo().taskQueue),
  }).queryOrder;
}
