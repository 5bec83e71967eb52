/** The activities as orderWorkflow calls them. */
import { proxyActivities } from '@temporalio/workflow';
import type { BookingActivities } from '../../../activities/booking';
import { ACTIVITY_TIMEOUT_SECONDS } from '../../../contract/definitions';

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

/** QueryOrders as on-demand runs call it (the same options, the same rate-limited queue). */
export { orderQueryActivity } from '../activities';
