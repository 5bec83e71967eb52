/**
 * The booking contract's names: task queue, workflow type and id, search-attribute keys, stages, bounds (the
 * query/update/signal definitions are in ./messages). No zod here: workflow code imports this module, and each
 * cached workflow evaluates its own copy of it (see ./schemas for why that matters).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Default task queue; deployments may set BOOKING_TASK_QUEUE. */
export const DEFAULT_TASK_QUEUE = 'hotel-booking';
export const WORKFLOW_TYPE = 'bookingWorkflow';

/** One workflow per booking reference: starting the same booking twice finds the same workflow. */
export function bookingWorkflowId(customerReferenceNo: string): string {
  return `booking:${customerReferenceNo}`;
}

/**
 * A confirmed booking's order, followed until check-in (cancellation, supplier callbacks): the booking
 * workflow ends at Confirmed with its outcome and hands the order to this workflow, on the same task queue.
 */
export const ORDER_WORKFLOW_TYPE = 'orderWorkflow';
export function orderWorkflowId(customerReferenceNo: string): string {
  return `order:${customerReferenceNo}`;
}

/** The reconciliation sweep (a Temporal Schedule runs it; see src/runtime/namespace/sweep-schedule.ts). */
export const SWEEP_WORKFLOW_TYPE = 'reconciliationSweepWorkflow';
export function sweepScheduleId(bookingTaskQueue: string): string {
  return `reconciliation:${bookingTaskQueue}`;
}

/**
 * The companion task queue that carries a booking queue's QueryOrders activities. Booking workers
 * poll both; the companion has Temporal's task-queue activity rate limit set to the supplier's
 * QueryOrders limit, so recovery polls of any number of workers together stay under it.
 */
export function queryOrdersTaskQueue(bookingTaskQueue: string): string {
  return `${bookingTaskQueue}-query-orders`;
}

/**
 * A supplier account's id (`SUPPLIER_ACCOUNTS_FILE`): what a booking names in `supplier`. Lower-case letters, digits
 * and `-`, so it reads the same in a task queue's name, a metric's label and a log line.
 */
export const SUPPLIER_ACCOUNT_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

/**
 * The task queue of one supplier account's calls that may act upstream (Book, Cancel), polled by the workers that
 * hold the account; its QueryOrders go to `queryOrdersTaskQueue` of it, with the account's own rate limit. Each
 * account has its own queues so one that answers slowly, refuses or is down holds only its own activity slots.
 */
export function supplierTaskQueue(bookingTaskQueue: string, account: string): string {
  return `${bookingTaskQueue}@${account}`;
}

// --- Search attributes (registered on the dev server and in docker-compose) -------------------

/** Where the booking is now; see BookingStage. Keyword, so operators filter `BookingStage = "recovering"`. */
export const BookingStageKey = defineSearchAttributeKey('BookingStage', SearchAttributeType.KEYWORD);
/** The caller's reference: the one id shared by the partner, this workflow and the supplier. */
export const CustomerReferenceNoKey = defineSearchAttributeKey('CustomerReferenceNo', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [
  { name: 'BookingStage', type: 'Keyword' },
  { name: 'CustomerReferenceNo', type: 'Keyword' },
] as const;

// --- State ------------------------------------------------------------------------------------

export const BookingStages = [
  'checking-availability',
  'awaiting-price-approval',
  'booking',
  'recovering',
  'completed',
] as const;

/** Where an order is (the order workflow's `BookingStage` while it runs, prefixed `order-`). */
export const OrderStages = [
  'checking',
  'cancelling',
  'cancelled',
  'cancel-failed',
  'cancel-unresolved',
  'quoted',
  'cancel-refused',
  'cancel-stopped',
  'checked',
  'changed-by-supplier',
  'not-cancellable',
  'cancel-waiting',
  'cancel-not-done',
] as const;
export type OrderStage = (typeof OrderStages)[number];

/**
 * Order outcomes a person must follow up: each is an ERROR line and the alert on order_outcomes_total; the console
 * lists the runs that ended so, and the CLI exits 4 on them. One list for the workflow, the console and the CLI.
 */
export const ORDER_OUTCOMES_NEEDING_A_PERSON = [
  'cancel-failed',
  'cancel-unresolved',
  'cancel-stopped',
  'changed-by-supplier',
  'cancel-not-done',
] as const satisfies readonly OrderStage[];
export type BookingStage = (typeof BookingStages)[number];

// --- Workflow signatures ----------------------------------------------------------------------

/**
 * The recovery policy's defaults (spec section 8's schedule), in this zod-free module so the workflow can
 * apply them without loading the schemas; RecoveryPolicy in ./schemas takes its defaults from here.
 */
export const RECOVERY_DEFAULTS = {
  delaysSeconds: [30, 60, 120, 240, 480],
  repeatEverySeconds: 600,
  rebookAfterSeconds: 600,
  maxBookAttempts: 2,
  deadlineSeconds: 24 * 3600,
  continueAsNewAfterEvents: 5_000,
  feeChangeMarginSeconds: 120,
} as const;

/**
 * A supplier hint (an order-status callback) brings a QueryOrders forward at most once in this many seconds per
 * reference: callbacks are unsigned by time on body-only schemes, so a captured one can be replayed at will, and
 * each replay must not cost a QueryOrders from the fleet's shared budget. The workflows space hint-triggered polls
 * by it (durably: from their poll log), and the callback receiver starts no new order check for a reference whose
 * last order run ended less than this long ago.
 */
export const HINT_POLL_SPACING_SECONDS = 60;

/**
 * The activities' own timeouts (start to close) set by the workflow. Each is above the supplier client's
 * timeout for that call, so the client classifies a slow answer first (the config schema checks the
 * supplier profile against these).
 */
export const ACTIVITY_TIMEOUT_SECONDS = {
  checkAvail: 30,
  book: 120,
  queryOrders: 30,
  /** orderWorkflow's sendCancel: a timed-out try must not leave its request running. */
  cancel: 30,
  /** The reconciliation sweep's QueryOrders listing by booking time. */
  listOrders: 30,
} as const;

/**
 * How long a Cancel's activity may wait for a worker to start it: one not started by then was never sent, and the
 * workflow re-quotes before it tries again (the order workflow's proxies).
 */
export const CANCEL_START_WITHIN_SECONDS = 60;

/**
 * How long a Book's activity may wait for a worker to start it. One not started by then was never sent (its account
 * taken off every worker, a backlog): the booking reads it as refused before any work, and sends it again within the
 * first Book's refusal window or ends honestly (no order made), instead of waiting with no ceiling on a queue nobody
 * polls.
 */
export const BOOK_START_WITHIN_SECONDS = 60;

/**
 * Floors and caps on the recovery settings a booking request may set, so a caller can neither defeat the
 * re-send rule nor end a booking before recovery had its chance. `recovery.testing`, honoured only by a worker
 * with RECOVERY_TESTING=on, lifts them (tests, the sandbox, chaos runs and benchmarks scale the schedule down).
 */
export const RECOVERY_BOUNDS = {
  /**
   * Book takes 3-10 minutes at the supplier (spec) and the first may still be at work: never re-sent sooner than
   * 10 minutes after the last Book ended. At most a day: past the default deadline a re-send would never come
   * (a caller who wants none sets maxBookAttempts: 1), and it keeps the shortest deadline under its cap.
   */
  rebookAfterSeconds: { min: 600, max: 24 * 3600 },
  /** Each send after the first is a guess that the earlier ones never arrived: two guesses are enough. */
  maxBookAttempts: { min: 1, max: 3 },
  /**
   * At least minimumDeadlineSeconds, computed from the policy itself. At most a week: a booking still unknown
   * then needs a person anyway, and a workflow patch is kept until the longest deadline has passed (see
   * docs/testing.md, "Changing the workflow safely").
   */
  deadlineSeconds: { max: 7 * 24 * 3600 },
  /**
   * The first polls after Book. QueryOrders is rate-limited for all bookings together and an order takes minutes:
   * polls closer than 5 s only spend that budget. At most an hour apart, so a settled order is seen within the
   * hour; at most 20 of them (the spec's schedule has 5), so the schedule stays readable at a glance.
   */
  delaysSeconds: { min: 5, max: 3600, maxEntries: 20 },
  /**
   * The pace of the long tail, for up to the deadline. At least a minute: in a recovery storm every recovering
   * booking polls at this pace against the shared QueryOrders limit. At most an hour, as delaysSeconds.
   */
  repeatEverySeconds: { min: 60, max: 3600 },
  /**
   * No Cancel goes out this close to a change of fee: at least as long as a Cancel may take to land once quoted (a
   * worker has CANCEL_START_WITHIN_SECONDS to start it, and it runs up to its start-to-close timeout), so a Cancel
   * quoted free just before the change cannot land after it. At most an hour.
   */
  feeChangeMarginSeconds: { min: CANCEL_START_WITHIN_SECONDS + ACTIVITY_TIMEOUT_SECONDS.cancel, max: 3600 },
} as const;

/**
 * Seconds after a Book at which poll `index` is due: 0, then the running sum of the delays (30, 90, 210,
 * 450, 930 with the defaults), then every `repeatEverySeconds` (1530, 2130, …). Pure arithmetic, here in the
 * zod-free contract so the workflow (src/runtime/rules/schedule.ts) and the request's bounds share one copy.
 */
export function pollOffsetSeconds(
  index: number,
  policy: { delaysSeconds: readonly number[]; repeatEverySeconds: number },
): number {
  const { delaysSeconds, repeatEverySeconds } = policy;
  let offset = 0;
  for (let i = 0; i < index; i++) offset += delaysSeconds[i] ?? repeatEverySeconds;
  return offset;
}

/** Seconds after a Book at which the first poll at or after `rebookAfterSeconds` is due: where a re-send can happen. */
export function resendPollOffsetSeconds(policy: {
  delaysSeconds: readonly number[];
  repeatEverySeconds: number;
  rebookAfterSeconds: number;
}): number {
  // pollOffsetSeconds(k) for k = 0, 1, … as one running sum, until it reaches rebookAfterSeconds.
  let offset = 0;
  for (let i = 0; offset < policy.rebookAfterSeconds; i++)
    offset += policy.delaysSeconds[i] ?? policy.repeatEverySeconds;
  return offset;
}

/**
 * The shortest deadline a policy may have: time for the schedule to reach a re-send and a poll after it. The
 * deadline runs from the first Book's start and the schedule from its end; the re-send poll comes
 * resendPollOffsetSeconds later, then the re-send, then at once a poll. Both Books may take Book's whole timeout
 * (an ambiguous Book often is one that timed out), so each is counted at it.
 */
export function minimumDeadlineSeconds(policy: Parameters<typeof resendPollOffsetSeconds>[0]): number {
  return resendPollOffsetSeconds(policy) + 2 * ACTIVITY_TIMEOUT_SECONDS.book;
}

/** Error types the workflow fails with (everything else is an outcome value). */
export const BookingErrorTypes = ['InvalidBookingRequest'] as const;
export type BookingErrorType = (typeof BookingErrorTypes)[number];
