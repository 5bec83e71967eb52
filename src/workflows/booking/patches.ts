/**
 * The patch ids of bookingWorkflow. Each guards a change of commands: runs started before it replay on
 * the old path. A patch may be deprecated (`deprecatePatch`) once no run from before it can be open, that
 * is, after its date plus the longest recovery deadline any booking was started with (24 h by default;
 * `request.recovery.deadlineSeconds` may be longer), and removed one release after that.
 */
export const PATCHES = {
  /** 2026-11-23: the input is checked by a local activity, not in workflow code (zod out of the sandbox). */
  validateInLocalActivity: 'validate-request-in-local-activity',
  /** 2026-11-23: QueryOrders runs on the rate-limited companion queue (the fleet-wide cap). */
  queryOrdersOnRateLimitedQueue: 'query-orders-on-rate-limited-queue',
  /** 2026-11-23: a confirmed booking starts its order workflow (cancellation, callbacks) before it ends. */
  orderWorkflowAfterConfirm: 'order-workflow-after-confirm',
  /**
   * 2026-11-23: the happy path in two workflow tasks instead of four: CheckAvail and the order hand-off as
   * local activities (Book stays an activity: see ./activities.ts), search attributes upserted only where
   * they change. A run with this marker takes the three paths above without their markers: one marker, not three.
   */
  fewerTasks: 'fewer-workflow-tasks',
  /**
   * 2026-11-23: a re-sent Book decides only when its answer carries the order. A refusal or rejection of a
   * re-send shows only that this send made nothing, not that the first made nothing, so recovery polls on
   * (it no longer ends `failed`); a refused re-send is not retried in place; Book is never re-sent after a
   * Book answered with an order.
   */
  resendDecidesOnlyOnOrder: 'resend-decides-only-on-order',
  /**
   * 2026-11-24: a confirmed booking no longer hands its order to a workflow that waits until check-in: order
   * workflows start on demand (a cancelBooking, a supplier callback, the sweep). Only a booking whose caller
   * asked for a cancellation meanwhile (onCancelAfterBook `cancel`, `cancel-if-free`) starts one, to cancel.
   */
  orderOnDemand: 'order-on-demand',
  /**
   * 2026-11-24: a supplier hint brings a poll forward at most once a minute (src/workflows/hint-spacing.ts): a
   * replayed or repeated callback no longer costs a QueryOrders each.
   */
  hintPollsSpaced: 'hint-polls-spaced',
  /**
   * 2026-11-24: one marker for a new run. A run that records it takes every path above without asking its patch
   * (a marker and a TemporalChangeVersion upsert each), except hintPollsSpaced, still asked where a hint arrives
   * (src/workflows/hint-spacing.ts is shared with the order workflow); and a new booking checks its input in the
   * same local activity as its first CheckAvail (one marker and one workflow activation fewer). Asked right after
   * `current`, so runs from before it (no marker) ask the older patches exactly where they did.
   */
  oneMarker: 'booking-one-marker-checked-with-availability',
  /**
   * 2026-11-25, the newest marker; a run that records it takes every path of `oneMarker` without asking it, and:
   *  - which search attributes a stage upserts is decided from the run's own record of what it upserted, never from
   *    workflowInfo().searchAttributes. That map is how the server presents the start's attributes, and a frontend
   *    node just restarted can present them under other names: a run then upserted the reference once more, and its
   *    replay on another worker, seeing the names, sent one upsert fewer (TMPRL1100, the booking stuck after Book).
   *    The starting stage is never upserted (the start carries it); the run's first upsert carries the reference too;
   *  - Book is never sent again once any order was seen for the reference, by a poll or in a Book answer: a listing
   *    that showed it and then did not (an eventually consistent one) is no sign that no order exists;
   *  - an order in CancelFailed ends the booking `unresolved` at once, a person told, not `failed`: nobody asked to
   *    cancel it, so the supplier's rollback failed and the order may stand and be charged.
   */
  current: 'booking-own-record-orders-seen-cancel-failed',
} as const;
