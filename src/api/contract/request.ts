/**
 * The booking's input: the request a caller starts a booking with, its recovery policy and bounds, and the
 * worker's check of it.
 * Node code only, like every shape of the contract (./schemas says why).
 */
import { z } from 'zod';
import { Guest, Holder, Money, Phone } from '../values/index';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  minimumDeadlineSeconds,
  RECOVERY_BOUNDS,
  RECOVERY_DEFAULTS,
  resendPollOffsetSeconds,
  SUPPLIER_ACCOUNT_PATTERN,
} from './definitions';
import { describeIssues } from '../values/issues';

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
  feeChangeMarginSeconds: {
    min: 'a Cancel quoted before a change of fee may take this long to start and land',
    max: 'an hour',
  },
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
  { zeroAllowed = false }: { zeroAllowed?: boolean } = {},
): BoundIssue[] {
  // A value the schema refuses (not positive, or below 0 where 0 is a value) is refused by RecoveryPolicy's own
  // check already: a bound adds nothing.
  if (zeroAllowed ? value < 0 : value <= 0) return [];
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
    // 0 is a margin, and the least of them: below the floor like any other.
    ...outside(
      ['feeChangeMarginSeconds'],
      p.feeChangeMarginSeconds,
      b.feeChangeMarginSeconds,
      why.feeChangeMarginSeconds,
      { zeroAllowed: true },
    ),
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
  /**
   * The supplier account to book on (its id in the worker's SUPPLIER_ACCOUNTS_FILE). Absent: the partner's default
   * account, the first one that lists the partner's namespace. An account the partner may not use is refused before
   * anything is sent.
   */
  supplier: z
    .string()
    .regex(SUPPLIER_ACCOUNT_PATTERN, 'a supplier account id: lower-case letters, digits and -')
    .optional(),
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
