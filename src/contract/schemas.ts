/**
 * The contract's shapes: zod schemas beside their types, for the booking's input, state and outcome.
 *
 * Node code only (client, activities, CLI, tests). Workflow code must not import values from here:
 * building these schemas costs ~3 MB and ~40 ms per workflow in the workflow sandbox, where every
 * cached workflow evaluates its own copy of each module (bench: parked). It imports types only, and
 * the workflow's input is validated by a local activity instead (src/activities/booking.ts).
 */
import { z } from 'zod';
import { Guest, Holder, Money, Phone } from '../values';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  BookingStages,
  minimumDeadlineSeconds,
  OrderStages,
  RECOVERY_BOUNDS,
  RECOVERY_DEFAULTS,
  resendPollOffsetSeconds,
} from './definitions';
import { describeIssues } from '../values/issues';

// --- Input ------------------------------------------------------------------------------------

export const PriceChangePolicy = z.object({
  /** Largest accepted increase, in percent of the expected price. Unset: no percentage allowance. */
  maxIncreasePercent: z.number().nonnegative().optional(),
  /** Largest accepted increase, in the expected price's currency. Unset: no amount allowance. */
  maxIncreaseAmount: z.number().nonnegative().optional(),
  /** Beyond the allowance: give up (`reject`) or wait for `approvePriceChange` (`ask`). */
  onExceeded: z.enum(['reject', 'ask']).default('reject'),
  /** How long `ask` waits for an answer before giving up. */
  approvalTimeoutSeconds: z
    .number()
    .int()
    .positive()
    .default(15 * 60),
});
export type PriceChangePolicy = z.infer<typeof PriceChangePolicy>;

/**
 * The most a caller may send in each text and list field of a request. The spec sets none; these are far above any
 * real name, address or header, and low enough that a request cannot carry megabytes into history, logs and the
 * supplier's fields. A field over its bound is refused by name, before anything is sent.
 */
export const REQUEST_LIMITS = {
  /** A person's first or last name. */
  name: 100,
  /** RFC 5321's longest address. */
  email: 254,
  /** A country or currency code, a phone's country code. */
  code: 8,
  /** A phone number, without its country code. */
  phoneNumber: 32,
  /** Ids the caller passes through: rate package, session. */
  id: 256,
  /** A header value passed to the supplier (language, IP address, Test). */
  header: 256,
  /** Guests in one booking. */
  guests: 50,
  /** Rooms in one booking (a guest's roomIndex is below this). */
  rooms: 20,
} as const;

const bounded = (max: number) => z.string().min(1).max(max);

/** The holder as a caller sends it: the shared Holder, each text bounded. */
const RequestHolder = Holder.extend({
  firstName: bounded(REQUEST_LIMITS.name),
  lastName: bounded(REQUEST_LIMITS.name),
  email: z.email().max(REQUEST_LIMITS.email),
  phone: Phone.extend({
    countryCode: bounded(REQUEST_LIMITS.code),
    number: bounded(REQUEST_LIMITS.phoneNumber),
  }),
});

/** A guest as a caller sends it: the shared Guest, each text and number bounded. */
const RequestGuest = Guest.extend({
  roomIndex: z.number().int().nonnegative().lt(REQUEST_LIMITS.rooms),
  firstName: bounded(REQUEST_LIMITS.name),
  lastName: bounded(REQUEST_LIMITS.name),
  nationalityCode: bounded(REQUEST_LIMITS.code),
  age: z.number().int().nonnegative().max(150),
});

/** Headers passed to the supplier on this booking's calls. None is secret. */
export const RequestContext = z.object({
  currency: bounded(REQUEST_LIMITS.code).optional(),
  language: bounded(REQUEST_LIMITS.header).optional(),
  ip: bounded(REQUEST_LIMITS.header).optional(),
  /** The supplier's `Test` header (test environments and the sandbox only). */
  test: z.string().max(REQUEST_LIMITS.header).optional(),
});
export type RequestContext = z.infer<typeof RequestContext>;

/**
 * The recovery schedule after an ambiguous Book. Defaults are the spec's (section 8): poll at once,
 * then after 30 s, 1, 2, 4, 8 min, then every 10 min. A request may change it within RECOVERY_BOUNDS (see
 * RecoveryOptions); tests, chaos runs and benchmarks scale it down with `recovery.testing`.
 */
export const RecoveryPolicy = z.object({
  /** Waits between the first polls, in seconds; the first poll is always immediate. */
  delaysSeconds: z.array(z.number().positive()).default([...RECOVERY_DEFAULTS.delaysSeconds]),
  /** Wait between polls once `delaysSeconds` is used up. */
  repeatEverySeconds: z.number().positive().default(RECOVERY_DEFAULTS.repeatEverySeconds),
  /** A poll at least this long after a Book that still finds no order sends Book again. */
  rebookAfterSeconds: z.number().positive().default(RECOVERY_DEFAULTS.rebookAfterSeconds),
  /** Book calls that may reach the supplier, in all (the first included). */
  maxBookAttempts: z.number().int().min(1).default(RECOVERY_DEFAULTS.maxBookAttempts),
  /** After this long since the first ambiguous Book, give up as `unresolved` and tell a person. */
  deadlineSeconds: z.number().positive().default(RECOVERY_DEFAULTS.deadlineSeconds),
  /** Continue-as-new once the history has this many events (state is carried). */
  continueAsNewAfterEvents: z.number().int().min(100).default(RECOVERY_DEFAULTS.continueAsNewAfterEvents),
  /**
   * No Cancel goes out this close to a change of the cancellation fee unless the fee after the change is accepted
   * too: the supplier's clock, the request's trip and its processing may put the send past the change.
   */
  feeChangeMarginSeconds: z.number().min(0).max(3600).default(RECOVERY_DEFAULTS.feeChangeMarginSeconds),
});
export type RecoveryPolicy = z.infer<typeof RecoveryPolicy>;

/** A recovery setting outside RECOVERY_BOUNDS, as zod reports it (path within `recovery`). */
type BoundIssue = { path: (string | number)[]; message: string };

/** Why each bound is there, as a refusal says it. */
const BOUND_REASONS = {
  rebookAfterSeconds: {
    min: 'Book is never re-sent sooner than 10 minutes after the last Book ended',
    max: 'a later re-send would not come before the default deadline; maxBookAttempts: 1 sends none',
  },
  maxBookAttempts: { max: 'each Book after the first is a guess that the earlier ones never reached the supplier' },
  delaysSeconds: {
    min: 'QueryOrders is rate-limited for all bookings together, and an order takes minutes',
    max: 'a settled order is seen within the hour',
  },
  repeatEverySeconds: {
    min: 'in a recovery storm every recovering booking polls at this pace against the shared QueryOrders limit',
    max: 'a settled order is seen within the hour',
  },
  deadlineSeconds: { max: '7 days: a booking still unknown then needs a person' },
};

/** What a refused bound tells a test author (production callers stay within the bounds). */
const TESTING_HINT = {
  floor: 'set recovery.testing on a test worker for faster schedules',
  cap: 'set recovery.testing on a test worker to go beyond it',
};

function outside(
  path: BoundIssue['path'],
  value: number,
  bound: { min?: number; max?: number },
  why: { min?: string; max?: string },
): BoundIssue[] {
  // A value that is not positive is refused by RecoveryPolicy's own check already: a bound adds nothing.
  if (value <= 0) return [];
  if (bound.min !== undefined && value < bound.min)
    return [{ path, message: `must be at least ${bound.min} (${why.min}); ${TESTING_HINT.floor}` }];
  if (bound.max !== undefined && value > bound.max)
    return [{ path, message: `must be at most ${bound.max} (${why.max}); ${TESTING_HINT.cap}` }];
  return [];
}

/** Each recovery setting outside RECOVERY_BOUNDS (unset ones take RECOVERY_DEFAULTS), naming the bound and why. */
function recoveryBoundIssues(options: Partial<RecoveryPolicy>): BoundIssue[] {
  const p = { ...RECOVERY_DEFAULTS, ...options };
  const b = RECOVERY_BOUNDS;
  const why = BOUND_REASONS;
  const tooManyDelays = p.delaysSeconds.length > b.delaysSeconds.maxEntries;
  const issues = [
    ...outside(['rebookAfterSeconds'], p.rebookAfterSeconds, b.rebookAfterSeconds, why.rebookAfterSeconds),
    ...outside(['maxBookAttempts'], p.maxBookAttempts, b.maxBookAttempts, why.maxBookAttempts),
    ...(tooManyDelays
      ? [
          {
            path: ['delaysSeconds'],
            message: `must have at most ${b.delaysSeconds.maxEntries} entries (then repeatEverySeconds paces the polls); ${TESTING_HINT.cap}`,
          },
        ]
      : []),
    ...p.delaysSeconds.flatMap((delay, i) => outside(['delaysSeconds', i], delay, b.delaysSeconds, why.delaysSeconds)),
    ...outside(['repeatEverySeconds'], p.repeatEverySeconds, b.repeatEverySeconds, why.repeatEverySeconds),
    ...outside(['deadlineSeconds'], p.deadlineSeconds, b.deadlineSeconds, why.deadlineSeconds),
  ];
  // The deadline's floor is computed from the schedule, so only from one in bounds: that is what the caller
  // corrects first, and it keeps the sum short.
  const schedule = [p.rebookAfterSeconds, p.repeatEverySeconds, ...p.delaysSeconds];
  const scheduleRefused = issues.some((i) => i.path[0] !== 'deadlineSeconds' && i.path[0] !== 'maxBookAttempts');
  if (scheduleRefused || [...schedule, p.deadlineSeconds].some((v) => v <= 0)) return issues;
  return [...issues, ...deadlineFloorIssues(p)];
}

/** The deadline's floor, computed from the policy's own schedule (minimumDeadlineSeconds). */
function deadlineFloorIssues(
  policy: Parameters<typeof minimumDeadlineSeconds>[0] & { deadlineSeconds: number },
): BoundIssue[] {
  const minimum = minimumDeadlineSeconds(policy);
  if (policy.deadlineSeconds >= minimum) return [];
  const why =
    `time to re-send Book and poll after it: the first poll at or after rebookAfterSeconds is ` +
    `${resendPollOffsetSeconds(policy)} s after Book, and the first Book and the re-send may each take ` +
    `${ACTIVITY_TIMEOUT_SECONDS.book} s`;
  return [{ path: ['deadlineSeconds'], message: `must be at least ${minimum} (${why}); ${TESTING_HINT.floor}` }];
}

/**
 * The recovery settings a booking request may set: RecoveryPolicy's, each optional, within RECOVERY_BOUNDS
 * unless `testing` is set. The client helper accepts `testing`; the worker honours it only with RECOVERY_TESTING=on.
 */
export const RecoveryOptions = RecoveryPolicy.partial()
  .extend({
    /** A test schedule: lifts RECOVERY_BOUNDS. Refused by a worker without RECOVERY_TESTING=on. */
    testing: z.boolean().optional(),
  })
  .superRefine((options, ctx) => {
    if (options.testing === true) return;
    for (const { path, message } of recoveryBoundIssues(options)) ctx.addIssue({ code: 'custom', path, message });
  });
export type RecoveryOptions = z.input<typeof RecoveryOptions>;

export const BookingRequest = z.object({
  /** The caller's reference (uuid): the idempotency key at the supplier and the workflow id. */
  customerReferenceNo: z.uuid(),
  ratePkgId: bounded(REQUEST_LIMITS.id),
  holder: RequestHolder,
  guests: z.array(RequestGuest).min(1).max(REQUEST_LIMITS.guests),
  /** Session-Id for CheckAvail and Book; derived from the reference when absent. */
  sessionId: bounded(REQUEST_LIMITS.id).optional(),
  /** The price the user saw in HotelRates. Without it any current price is accepted. */
  expectedPrice: Money.optional(),
  priceChangePolicy: PriceChangePolicy.optional(),
  context: RequestContext.optional(),
  recovery: RecoveryOptions.optional(),
  /**
   * What to do when the booking was cancelled (workflow cancellation) after Book was sent and the order
   * was then confirmed anyway: `report` it (`cancelRequested: true` in the outcome), or cancel the order at
   * once, whatever the fee (`cancel`) or only while it is free (`cancel-if-free`). Default `report`.
   */
  onCancelAfterBook: z.enum(['report', 'cancel-if-free', 'cancel']).optional(),
});
export type BookingRequest = z.input<typeof BookingRequest>;
export type ParsedBookingRequest = z.output<typeof BookingRequest>;

/** A request checked against BookingRequest, as a value: invalid input is an expected outcome. */
export type RequestValidation =
  { valid: true; request: ParsedBookingRequest; recovery: RecoveryPolicy } | { valid: false; issues: string[] };

/**
 * Where a request is checked: a worker with RECOVERY_TESTING accepts `recovery.testing`; others refuse it. A worker
 * whose supplier profile refuses the `Test` header (`testHeader: 'refuse'`, an account that books for real) refuses
 * a `context.test`.
 */
export interface ValidationOptions {
  recoveryTesting?: boolean;
  testHeader?: 'send' | 'refuse';
}

/** The issue a `context.test` meets on a worker whose supplier profile refuses the `Test` header. */
export const TEST_HEADER_REFUSED =
  "context.test: test flags go to a supplier's test environment only, and this worker's supplier profile refuses " +
  'them (testHeader: refuse)';

/**
 * The worker's check of a booking request. `recovery.testing` passes only where the worker's switch is on: a test
 * schedule must never reach a worker that books for real.
 */
export function validateBookingRequest(input: unknown, options: ValidationOptions = {}): RequestValidation {
  const parsed = BookingRequest.safeParse(input);
  if (!parsed.success) return { valid: false, issues: describeIssues(parsed.error) };
  if (parsed.data.context?.test !== undefined && options.testHeader === 'refuse') {
    return { valid: false, issues: [TEST_HEADER_REFUSED] };
  }
  const recovery = parsed.data.recovery;
  if (recovery?.testing === true && options.recoveryTesting !== true) {
    // With the bounds the request would meet without `testing`, so one answer says all there is to change.
    const bounded = RecoveryOptions.safeParse({ ...recovery, testing: false });
    return {
      valid: false,
      issues: [
        'recovery.testing: honoured only by a worker with RECOVERY_TESTING=on, and this worker has it off ' +
          '(test schedules must never reach a worker that books for real)',
        ...(bounded.success ? [] : describeIssues(bounded.error, 'recovery')),
      ],
    };
  }
  return { valid: true, request: parsed.data, recovery: RecoveryPolicy.parse(recovery ?? {}) };
}

// --- State and outcome ------------------------------------------------------------------------

/** One room's cancel policy, from the order's rooms: free until `refundableUntil`, then `fees` (spec CancelFee items). */
export const RoomCancelPolicy = z.object({
  refundableUntil: z.string().optional(),
  fees: z.array(z.object({ until: z.string(), fee: Money })),
});
export type RoomCancelPolicy = z.infer<typeof RoomCancelPolicy>;

/** What we keep of a supplier order: references, status and price. No personal data. */
export const OrderSummary = z.object({
  customerReferenceNo: z.string(),
  status: z.number().int(),
  statusRemark: z.string().optional(),
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  hotelConfirmNo: z.string().optional(),
  hotelId: z.string().optional(),
  checkIn: z.string().optional(),
  checkOut: z.string().optional(),
  price: Money.optional(),
  /** Per room, what cancelling costs when (the order workflow quotes from it). */
  cancelPolicy: z.array(RoomCancelPolicy).optional(),
});
export type OrderSummary = z.infer<typeof OrderSummary>;

/** One QueryOrders poll of the recovery loop. */
export const PollRecord = z.object({
  /** Workflow time of the poll (ISO). */
  at: z.string(),
  /** Seconds since the Book this poll verifies. */
  sinceBookSeconds: z.number(),
  trigger: z.enum(['schedule', 'supplier-hint', 'request']),
  result: z.enum(['found', 'not-found', 'error']),
  status: z.number().int().optional(),
  error: z.string().optional(),
});
export type PollRecord = z.infer<typeof PollRecord>;

export const BookAttempt = z.object({
  at: z.string(),
  /** `refused`: a re-send refused before any work (429, connection refused): nothing made by it, not counted. */
  result: z.enum(['order', 'refused', 'rejected', 'ambiguous']),
  status: z.number().int().optional(),
  error: z.string().optional(),
});
export type BookAttempt = z.infer<typeof BookAttempt>;

/** Whether a cancel request arrived after Book was sent (the booking was still resolved). */
const cancelRequested = z.boolean();

/** Every way a booking ends. Returned, never thrown; only invalid input fails the workflow. */
export const BookingOutcome = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('confirmed'), order: OrderSummary, cancelRequested }),
  z.object({
    kind: z.literal('failed'),
    reason: z.string(),
    order: OrderSummary.optional(),
    errorType: z.string().optional(),
    cancelRequested,
  }),
  z.object({ kind: z.literal('unavailable') }),
  z.object({
    kind: z.literal('price-rejected'),
    expectedPrice: Money,
    currentPrice: Money.optional(),
    reason: z.enum(['policy', 'refused', 'approval-timeout']),
  }),
  z.object({ kind: z.literal('cancelled') }),
  /** Still unknown at the deadline: someone must follow up with these references. */
  z.object({
    kind: z.literal('unresolved'),
    customerReferenceNo: z.string(),
    sessionId: z.string(),
    lastStatus: z.number().int().optional(),
    bookAttempts: z.array(BookAttempt),
    polls: z.array(PollRecord),
    cancelRequested,
  }),
]);
export type BookingOutcome = z.infer<typeof BookingOutcome>;
export type BookingOutcomeKind = BookingOutcome['kind'];

/** What the `bookingState` query answers. */
export const BookingState = z.object({
  stage: z.enum(BookingStages),
  customerReferenceNo: z.string(),
  sessionId: z.string(),
  ratePkgId: z.string(),
  expectedPrice: Money.optional(),
  currentPrice: Money.optional(),
  acceptedPrice: Money.optional(),
  bookAttempts: z.array(BookAttempt),
  polls: z.array(PollRecord),
  /** Workflow time of the next scheduled poll (ISO), while recovering. */
  nextPollAt: z.string().optional(),
  /** When recovery gives up (ISO), while recovering. */
  deadlineAt: z.string().optional(),
  cancelRequested: z.boolean(),
  order: OrderSummary.optional(),
  outcome: BookingOutcome.optional(),
});
export type BookingState = z.infer<typeof BookingState>;

// --- Messages ---------------------------------------------------------------------------------

export const PriceApproval = z.object({
  approved: z.boolean(),
  /** The price being approved; must equal the price the workflow is waiting on, so a stale approval fails. */
  price: Money,
  approvedBy: z.string().min(1).optional(),
});
export type PriceApproval = z.infer<typeof PriceApproval>;

/** A hint from the supplier's order-status callback. Never trusted alone: it triggers a verifying poll. */
export const SupplierOrderUpdate = z.object({
  customerReferenceNo: z.string().optional(),
  status: z.number().int().optional(),
});
export type SupplierOrderUpdate = z.infer<typeof SupplierOrderUpdate>;

// --- The order after confirmation (orderWorkflow) ---------------------------------------------

/** The fee that applies now: null when the policy does not say (see src/workflows/cancel-fee.ts). */
export const CancelFeeQuote = z.object({
  fee: Money.nullable(),
  basis: z.enum(['free', 'policy', 'unknown']),
  /** When this fee stops applying (ISO). */
  changesAt: z.string().optional(),
});
export type CancelFeeQuote = z.infer<typeof CancelFeeQuote>;

export const CancelBookingRequest = z.object({
  /** false: only quote the fee; true: cancel, accepting `acceptedFee`. */
  confirm: z.boolean(),
  /** The fee the caller accepts: must equal the fee that applies now (null: the fee is unknown). */
  acceptedFee: Money.nullable().optional(),
  reason: z.string().min(1).max(500).optional(),
  requestedBy: z.string().min(1).optional(),
});
export type CancelBookingRequest = z.infer<typeof CancelBookingRequest>;

/** The update's answer: a quote, or Cancel accepted by the supplier (its fate: the order workflow's result). */
export const CancelBookingAnswer = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('quote'), quote: CancelFeeQuote }),
  z.object({
    kind: z.literal('cancel-requested'),
    quote: CancelFeeQuote,
    /** What the supplier says it charges, when its answer said (Cancel's `serviceFee`). */
    serviceFee: Money.optional(),
    /** The supplier's answer was not clear (timeout, 5xx): the order is followed all the same. */
    ambiguous: z.boolean(),
  }),
  /** The supplier refused the Cancel (e.g. 400): the order stays confirmed. */
  z.object({ kind: z.literal('cancel-refused'), quote: CancelFeeQuote, errorType: z.string(), reason: z.string() }),
]);
export type CancelBookingAnswer = z.infer<typeof CancelBookingAnswer>;

/** A cancellation in progress or done. */
export const CancellationRecord = z.object({
  requestedAt: z.string(),
  reason: z.string(),
  requestedBy: z.string().optional(),
  /** `caller`: the cancelBooking update; `auto`: onCancelAfterBook; `reconciliation`: an orphan, by the sweep. */
  origin: z.enum(['caller', 'auto', 'reconciliation']),
  quote: CancelFeeQuote,
  /**
   * What was accepted, checked again before every send and re-send: a fee (at most this much, in its currency;
   * null: an unknown fee was accepted), `free` (cancel-if-free), or `any` (onCancelAfterBook `cancel`).
   */
  accepted: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('fee'), fee: Money.nullable() }),
    z.object({ kind: z.literal('free') }),
    z.object({ kind: z.literal('any') }),
  ]),
  serviceFee: Money.optional(),
  cancelAttempts: z.array(
    z.object({
      at: z.string(),
      /**
       * The Cancel rule's value (src/activities/cancel-rule.ts). `rejected`: refused in words that prove this send
       * did nothing; `refused`: never reached the supplier (429, connection refused); `ambiguous`: may have acted.
       */
      result: z.enum(['accepted', 'refused', 'rejected', 'ambiguous', 'not-sent']),
      error: z.string().optional(),
      /** The fee quoted just before this send (every send is re-quoted). */
      quote: CancelFeeQuote.optional(),
    }),
  ),
  polls: z.array(PollRecord),
  nextPollAt: z.string().optional(),
  deadlineAt: z.string().optional(),
  /**
   * Read when this run's first Cancel was refused: whether an earlier run of the order sent a Cancel that may have
   * acted and never saw it settle (`may-have-acted`: the refusal is then no proof, and the order is followed), or
   * whether that could not be found out (`unknown`: the server keeps no list of runs).
   */
  earlierSends: z.enum(['none', 'may-have-acted', 'unknown']).optional(),
});
export type CancellationRecord = z.infer<typeof CancellationRecord>;

/**
 * How an order workflow run ends: its result. A run is started for one piece of work (a cancellation, a quote, a
 * check) and ends when it is done; a later request starts a new run under the same id.
 */
export const OrderOutcome = z.discriminatedUnion('kind', [
  /** Cancelled (status Cancelled), by us or by the supplier. */
  z.object({ kind: z.literal('cancelled'), order: OrderSummary, cancellation: CancellationRecord.optional() }),
  /** The supplier ended the cancellation in CancelFailed: the order stands; a person follows up. */
  z.object({ kind: z.literal('cancel-failed'), order: OrderSummary, cancellation: CancellationRecord }),
  /** No final status by the cancellation's deadline (or the run was cancelled mid-way): a person follows up. */
  z.object({
    kind: z.literal('cancel-unresolved'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    /** Set when an operator cancelled the run (Web UI "Request cancellation") before the order settled. */
    interrupted: z.boolean().optional(),
  }),
  /** Only a quote was asked for: nothing was sent. */
  z.object({ kind: z.literal('quoted'), order: OrderSummary, quote: CancelFeeQuote }),
  /** The supplier refused the Cancel in words that prove nothing was done: the order stays confirmed. */
  z.object({
    kind: z.literal('cancel-refused'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    errorType: z.string(),
    reason: z.string(),
  }),
  /**
   * Before a send or re-send the fee was above what was accepted (or no longer free): nothing more was sent and a
   * person decides. `feeNow` is the fee that applied then; the accepted one is `cancellation.accepted`.
   */
  z.object({
    kind: z.literal('cancel-stopped'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    feeNow: Money.nullable(),
    reason: z.string(),
  }),
  /** A check (a supplier callback for a reference no workflow followed) found the order as we reported it. */
  z.object({ kind: z.literal('checked'), order: OrderSummary }),
  /**
   * A check, or a cancel request, found that the supplier changed a booking we reported confirmed (cancelled it,
   * failed it) or that the order disagrees with its booking: ERROR line, metric, a person follows up.
   */
  z.object({ kind: z.literal('changed-by-supplier'), order: OrderSummary.optional(), reason: z.string() }),
  /** A cancellation or check was asked for a reference the supplier has no order for, or one not confirmed. */
  z.object({ kind: z.literal('not-cancellable'), order: OrderSummary.optional(), reason: z.string() }),
  /**
   * A cancellation the system asked for (`autoCancel`: onCancelAfterBook, the sweep's orphans) could not be done:
   * the supplier refused its Cancel, or the order was not cancellable (not listed, pending, CancelFailed) by the
   * deadline. Nobody else is waiting for it, so a person is told: ERROR line, metric, console item.
   */
  z.object({
    kind: z.literal('cancel-not-done'),
    origin: z.enum(['auto', 'reconciliation']),
    order: OrderSummary.optional(),
    cancellation: CancellationRecord.optional(),
    reason: z.string(),
  }),
]);
export type OrderOutcome = z.infer<typeof OrderOutcome>;

export const OrderState = z.object({
  stage: z.enum(OrderStages),
  customerReferenceNo: z.string(),
  /** The order as last read; absent until the run's first QueryOrders answered. */
  order: OrderSummary.optional(),
  cancellation: CancellationRecord.optional(),
  outcome: OrderOutcome.optional(),
});
export type OrderState = z.infer<typeof OrderState>;

/**
 * The order workflow's input: a reference, and how a cancellation is sent and followed. What to do arrives with the
 * start: a caller's cancelBooking update, or a signal only the system sends (`autoCancel`, `checkOrder`); the order
 * is read fresh with QueryOrders. A cancellation followed over continue-as-new travels beside it (internal `carry`).
 */
export const OrderWorkflowInput = z.object({
  customerReferenceNo: z.string(),
  /** The Session-Id Cancel sends; derived from the reference when absent. */
  sessionId: z.string().optional(),
  context: RequestContext.optional(),
  /** The recovery policy a cancellation follows the order with; defaults when absent. */
  recovery: RecoveryPolicy.partial().optional(),
});
export type OrderWorkflowInput = z.infer<typeof OrderWorkflowInput>;

/**
 * A check of the order now: the callback receiver's, for a supplier callback no open workflow took, or an operator's
 * (the console's "check again"). The `checkOrder` signal by signal-with-start, from those two only: what it says
 * (that a final status settles an unresolved booking) is not for a caller's start to claim.
 */
export const OrderCheck = z.object({
  reason: z.string(),
  /** The status the callback claimed: a hint, never trusted. */
  reportedStatus: z.number().int().optional(),
  /**
   * Asked by an operator for a booking that ended `unresolved` (the console's "check again"): an order in a final
   * status (confirmed, failed, cancelled) settles what the booking could not find out, and the run ends `checked`
   * with it; a pending order, or none, is still for a person. Honoured only on the operators' own signal
   * (`operatorCheckOrder`), never on the receiver's `checkOrder`.
   */
  resolvesUnresolved: z.boolean().optional(),
});
export type OrderCheck = z.infer<typeof OrderCheck>;

/**
 * A cancellation the system asks for, with no caller waiting: onCancelAfterBook (`auto`) or an orphan the sweep
 * cancels (`reconciliation`). Workers deliver it with the `autoCancel` signal by signal-with-start, so it reaches
 * the run already open for the reference (which takes it after the work in hand) or starts one; it is never an
 * input a caller's start could carry.
 */
export const AutoCancel = z.object({
  reason: z.string(),
  onlyIfFree: z.boolean(),
  origin: z.enum(['auto', 'reconciliation']),
  /** The most it may cost (the sweep's orphan fee ceiling); absent: any fee (onlyIfFree aside). */
  maxFee: Money.optional(),
});
export type AutoCancel = z.infer<typeof AutoCancel>;

/**
 * An operator's note that an item needing a person was handled (the console's "mark handled"): recorded as an
 * operatorNoteWorkflow run of its own, which ends at once with its input, so the note is in a history like
 * everything else, and the item leaves the console's list. Its id names the item: noteWorkflowId(item).
 */
export const OperatorNote = z.object({
  /** The item: the workflow (and run) that asked for a person, and the reference it concerns. */
  item: z.object({
    workflowId: z.string().min(1),
    runId: z.string().min(1),
    customerReferenceNo: z.string().optional(),
  }),
  note: z.string().min(1).max(2000),
  /** Who handled it, as the console knows them (free text: the console trusts its access rule, not this). */
  by: z.string().min(1).max(200),
});
export type OperatorNote = z.infer<typeof OperatorNote>;

// --- Reconciliation sweep (reconciliationSweepWorkflow) -----------------------------------------

export const SweepInput = z.object({
  /** How far back to look at orders, by booking time. */
  lookbackMinutes: z.number().int().positive(),
  /** Orders younger than this are left to their bookings. */
  settleMinutes: z.number().int().nonnegative(),
  /** Booking time covered by one QueryOrders request. */
  sliceMinutes: z.number().int().positive(),
  /** Cancel orphans found Confirmed (through an order workflow each). */
  cancelOrphans: z.boolean(),
  /** The most an orphan's cancellation may cost (amount 0: only free). Absent: only free. */
  orphanFeeCeiling: Money.optional(),
  /** Also list orders checking in within this many hours (still Confirmed?). Absent: 48. */
  checkInHours: z.number().int().positive().optional(),
});
export type SweepInput = z.infer<typeof SweepInput>;

export const SweepFinding = z.object({
  customerReferenceNo: z.string(),
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  status: z.number().int(),
  reason: z.string(),
  /** For an orphan cancelled automatically: the order workflow that does it. */
  cancelling: z.string().optional(),
});
export type SweepFinding = z.infer<typeof SweepFinding>;

export const SweepResult = z.object({
  window: z.object({ start: z.string(), end: z.string() }),
  requests: z.number().int(),
  ordersSeen: z.number().int(),
  /** Orders whose decision fields could not be read (drift): never judged, and a finding (the sweep is not clean). */
  unreadable: z.number().int(),
  orphans: z.array(SweepFinding),
  mismatches: z.array(SweepFinding),
  /** Listings that failed for good (e.g. a 400): what they cover was not seen; a finding. */
  failedSlices: z
    .array(z.object({ filter: z.string(), start: z.string(), end: z.string(), error: z.string() }))
    .optional(),
});
export type SweepResult = z.infer<typeof SweepResult>;
