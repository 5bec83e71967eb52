/**
 * The patch ids of orderWorkflow. Each guards a change of commands: runs started before it replay on the old
 * path. Remove the old path (and deprecate the patch) once no run from before it can be open.
 */
export const ORDER_PATCHES = {
  /**
   * 2026-11-24: the order workflow runs on demand, one run per piece of work (a cancellation, a quote, a check),
   * instead of waiting from confirmation until check-in. Runs started before keep ./legacy, which open orders
   * need until the last check-in of a booking confirmed before the deploy.
   */
  onDemand: 'order-on-demand',
  /**
   * 2026-11-24: a re-sent Cancel answered with a refusal (400 "cannot be cancelled" after a send that may have
   * acted) ends the sends: the order is followed with QueryOrders to Cancelled or the deadline, and Cancel is not
   * sent again. Before, such a re-send did not count, and Cancel went out every 10 minutes until the deadline.
   */
  refusedResendEndsSends: 'cancel-refused-resend-ends-sends',
  /**
   * 2026-11-24: while following a cancellation, a supplier hint brings a poll forward at most once a minute
   * (src/workflows/hint-spacing.ts), as in the booking.
   */
  hintPollsSpaced: 'hint-polls-spaced',
} as const;
