/**
 * The `Test` request header: `key=value&key2=value2`, unknown keys ignored (as the real supplier does).
 * The supplier documents `scenario`; the other keys are the sandbox's own, for faults tests need.
 */
export type Scenario = 'available' | 'soldOut' | 'priceChanged' | 'serviceUnavailable' | 'unknownInternalError';
export type CheckAvailFault = '429' | '500' | '503' | '400' | '403' | 'hang' | 'malformed' | 'reset' | 'ariChanged';
export type BookFault =
  | '429'
  | '400'
  | '403'
  | 'creditLimit'
  | '504BeforeCreate'
  | '504AfterCreate'
  | '500AfterCreate'
  | 'hangBeforeCreate'
  | 'hangAfterCreate'
  | 'resetBeforeCreate'
  | 'resetAfterCreate'
  | 'malformedAfterCreate'
  /** HTTP 200 with an envelope code no profile lists, after the order was made (seen from a live supplier). */
  | 'unknownCodeAfterCreate';
export type OrderOutcome = 'confirmed' | 'failed' | 'cancelled' | 'pending';
/**
 * How a Cancel goes: `failed` ends it CancelFailed, `refuse` answers 400 (nothing cancelled), `429`,
 * `504AfterAccept` (taken, then a gateway timeout), `lost` (a gateway timeout, nothing taken: the request never
 * reached the hotel) and `unknownCode` (taken, then HTTP 200 with an envelope code no profile lists) for the first
 * `cancelTimes` Cancels, `pending` never settles. Read from the Cancel's Test header, else from the Book's.
 */
export type CancelFault = 'failed' | 'refuse' | '429' | '504AfterAccept' | 'lost' | 'unknownCode' | 'pending';

export interface TestFlags {
  scenario: Scenario;
  priceDeltaPercent: number;
  checkAvail?: CheckAvailFault;
  checkAvailTimes?: number;
  book?: BookFault;
  bookTimes?: number;
  outcome: OrderOutcome;
  confirmAfterMs?: number;
  confirmAfterQueries?: number;
  /** Book answers after this many milliseconds (the order is made first): a slow supplier. */
  bookDelayMs?: number;
  /** The `msg` of a CheckAvail fault answer: a supplier that echoes request data (a guest's name) in errors. */
  faultMsg?: string;
  cancel?: CancelFault;
  cancelTimes?: number;
  /**
   * `cancelRepeat=refuse`: a Cancel for an order already taken for cancellation (or cancelled) answers 400 "cannot be
   * cancelled", as a live supplier does ("do not cancel orders already in status 2–5 again"); by default a repeat
   * answers as the first did.
   */
  cancelRepeat?: 'refuse';
  /** Free cancellation ends this many milliseconds after the order was made (then its cancelFees apply). */
  freeCancelForMs?: number;
  /** When a taken Cancel settles: after a delay (default: the order's settle delay), or after N QueryOrders answers. */
  cancelAfterMs?: number;
  cancelAfterQueries?: number;
  /** `freeCancel=0` on Book: the order's free cancellation ended before it was made (its cancelFees apply at once). */
  freeCancel: boolean;
  /**
   * Every Book after the first for a reference answers this (`resend=429`: rate limited; `resend=400`: bad
   * request; `resend=unknownCode`: HTTP 200 with an envelope code no profile lists), whatever the first one did
   * and without making anything: a supplier rate-limiting re-sends in a storm, refusing them, or inventing codes.
   */
  resend?: ResendFault;
  /**
   * The order is made at once but QueryOrders lists it late: from the Nth QueryOrders naming it
   * (`listAfterQueries`), or this many milliseconds after it was made (`listAfterMs`). A lagging order index.
   */
  listAfterQueries?: number;
  listAfterMs?: number;
  /**
   * A listing that lags behind a confirmation already read: for this many milliseconds after QueryOrders first
   * answered the order Confirmed, it answers it as `relistAs` says (`unlisted`: not listed at all, the default;
   * `pending`: listed Confirming). A read replica behind the primary: whoever reads next (an order run following up
   * on the booking that read it Confirmed) meets the lag.
   */
  lagAfterConfirmedMs?: number;
  relistAs?: ListingLag;
  /**
   * The `Retry-After` sent with a 429 that this header's Book or Cancel fault asks for: delta seconds as given
   * (`retryAfter=86400`), or `retryAfter=date:N`, an HTTP date N seconds after the sandbox's clock (a supplier that
   * asks to come back tomorrow, in either of the header's forms). Absent: the sandbox's runtime setting, if any.
   */
  retryAfter?: string;
}

/** The `Retry-After` value a `retryAfter` flag asks for, at the sandbox's `nowMs`; undefined without one. */
export function retryAfterValue(flags: Pick<TestFlags, 'retryAfter'>, nowMs: number): string | undefined {
  const v = flags.retryAfter;
  if (v === undefined) return undefined;
  const date = /^date:(\d+)$/.exec(v);
  return date ? new Date(nowMs + Number(date[1]) * 1000).toUTCString() : v;
}

export type ListingLag = 'unlisted' | 'pending';

export type ResendFault = '429' | '400' | 'unknownCode';
const RESEND_FAULTS: ResendFault[] = ['429', '400', 'unknownCode'];

const SCENARIOS: Scenario[] = ['available', 'soldOut', 'priceChanged', 'serviceUnavailable', 'unknownInternalError'];
const CHECK_AVAIL_FAULTS: CheckAvailFault[] = [
  '429',
  '500',
  '503',
  '400',
  '403',
  'hang',
  'malformed',
  'reset',
  'ariChanged',
];
const BOOK_FAULTS: BookFault[] = [
  '429',
  '400',
  '403',
  'creditLimit',
  '504BeforeCreate',
  '504AfterCreate',
  '500AfterCreate',
  'hangBeforeCreate',
  'hangAfterCreate',
  'resetBeforeCreate',
  'resetAfterCreate',
  'malformedAfterCreate',
  'unknownCodeAfterCreate',
];
const OUTCOMES: OrderOutcome[] = ['confirmed', 'failed', 'cancelled', 'pending'];
const CANCEL_FAULTS: CancelFault[] = ['failed', 'refuse', '429', '504AfterAccept', 'lost', 'unknownCode', 'pending'];

function oneOf<T extends string>(value: string | null, allowed: T[]): T | undefined {
  return value !== null && (allowed as string[]).includes(value) ? (value as T) : undefined;
}

function count(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

export function parseTestHeader(header: string | undefined): TestFlags {
  const p = new URLSearchParams(header ?? '');
  const delta = Number(p.get('priceDeltaPercent'));
  return {
    scenario: oneOf(p.get('scenario'), SCENARIOS) ?? 'available',
    priceDeltaPercent: p.has('priceDeltaPercent') && Number.isFinite(delta) ? delta : 10,
    checkAvail: oneOf(p.get('checkAvail'), CHECK_AVAIL_FAULTS),
    checkAvailTimes: count(p.get('checkAvailTimes')),
    book: oneOf(p.get('book'), BOOK_FAULTS),
    bookTimes: count(p.get('bookTimes')),
    outcome: oneOf(p.get('outcome'), OUTCOMES) ?? 'confirmed',
    confirmAfterMs: count(p.get('confirmAfterMs')),
    confirmAfterQueries: count(p.get('confirmAfterQueries')),
    faultMsg: p.get('faultMsg') ?? undefined,
    bookDelayMs: count(p.get('bookDelayMs')),
    cancel: oneOf(p.get('cancel'), CANCEL_FAULTS),
    cancelTimes: count(p.get('cancelTimes')),
    cancelRepeat: p.get('cancelRepeat') === 'refuse' ? 'refuse' : undefined,
    freeCancelForMs: count(p.get('freeCancelForMs')),
    cancelAfterMs: count(p.get('cancelAfterMs')),
    cancelAfterQueries: count(p.get('cancelAfterQueries')),
    freeCancel: p.get('freeCancel') !== '0',
    resend: oneOf(p.get('resend'), RESEND_FAULTS),
    listAfterQueries: count(p.get('listAfterQueries')),
    listAfterMs: count(p.get('listAfterMs')),
    lagAfterConfirmedMs: count(p.get('lagAfterConfirmedMs')),
    relistAs: p.get('relistAs') === 'pending' ? 'pending' : p.has('lagAfterConfirmedMs') ? 'unlisted' : undefined,
    retryAfter: /^(\d+|date:\d+)$/.test(p.get('retryAfter') ?? '') ? p.get('retryAfter')! : undefined,
  };
}
