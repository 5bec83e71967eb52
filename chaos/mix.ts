/**
 * The chaos run's booking mix: a seeded PRNG, the fault classes, and a plan that gives every class its
 * quota of bookings (at least 10 % each), shuffled by the seed, so a run is reproducible from its seed
 * and no class can be starved by bad luck.
 *
 * Faults reach the sandbox supplier through each booking's `context.test` header (dev/sandbox/scenario.ts).
 * A booking carries up to three independent faults: one on CheckAvail's first calls, one on Book, and how
 * its supplier order settles; a Book fault is only given to bookings that will reach Book.
 */
import type { BookingOutcomeKind, BookingRequest, RecoveryPolicy } from '../src/api/contract/index';
import { basePriceFor } from '../dev/sandbox/server';

/** A small, fast, seedable PRNG (mulberry32): the only source of randomness in the mix. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: readonly T[]): T[];
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    shuffle(items) {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

/** A seed from `--seed`: a number as is, any other text hashed (FNV-1a), so every seed is a 32-bit integer. */
export function parseSeed(text: string): number {
  if (/^\d+$/.test(text)) return Number(BigInt(text) % 4294967296n);
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** Derives an independent stream from the run's seed, so the schedule of kills does not shift the mix. */
export function substream(seed: number, name: string): Rng {
  return createRng(parseSeed(`${seed}:${name}`));
}

export const CHECK_AVAIL_CLASSES = ['checkAvail429', 'checkAvail5xx', 'checkAvailHang', 'checkAvailMalformed'] as const;
export const SCENARIO_CLASSES = ['priceChanged', 'soldOut'] as const;
export const BOOK_CLASSES = [
  'book504AfterCreate',
  'bookHangAfterCreate',
  'bookHangBeforeCreate',
  'bookResetAfterCreate',
  'book429',
  'bookMalformedAfterCreate',
  'orderNeverFound',
] as const;
export const SETTLE_CLASSES = ['pendingThenConfirmed', 'pendingThenFailed'] as const;
/**
 * Among bookings whose first Book made the order but gave no answer: QueryOrders lists the order only after
 * the point where Book is re-sent, and every re-send is rate-limited (429). The booking must still learn
 * the order's fate, never end `failed` while it exists.
 */
export const LISTING_CLASSES = ['listedLateResendRateLimited'] as const;
/**
 * After confirmation, on demand: the chaos client quotes the cancellation fee and cancels (cancelBooking's
 * Update-With-Start on `order:<ref>`), with one of the Cancel faults of CANCEL_KINDS planned in the Book's Test
 * header (the sandbox reads Cancel faults there when the Cancel carries none).
 */
export const CANCEL_CLASSES = ['cancelAfterConfirm', 'cancelOverlaps'] as const;

/**
 * Cancellations that overlap something else (class `cancelOverlaps`, the kinds of OVERLAP_KINDS): a cancellation
 * asked while the booking still recovers its order, two confirms at once, a listing that lags behind the
 * booking's Confirmed when the system's own cancellation reads it.
 */
/** Every fault a single booking can carry; QueryOrders faults are global (see the injector in run.ts). */
export const FAULT_CLASSES = [
  ...CHECK_AVAIL_CLASSES,
  ...SCENARIO_CLASSES,
  ...BOOK_CLASSES,
  ...SETTLE_CLASSES,
  ...LISTING_CLASSES,
  ...CANCEL_CLASSES,
] as const;

/** Book faults that make the order and leave its outcome unknown: recovery, and maybe a re-send, follow. */
const UNANSWERED_AFTER_CREATE = new Set<FaultClass>([
  'book504AfterCreate',
  'bookHangAfterCreate',
  'bookResetAfterCreate',
  'bookMalformedAfterCreate',
]);
export type FaultClass = (typeof FAULT_CLASSES)[number];

/** The smallest share of bookings each class gets: 10 % asked, a little more so rounding never drops below. */
export const MIN_CLASS_SHARE = 0.105;

/** Every booking accepts a price rise up to this; the sandbox's priceChanged rises below or above it. */
export const MAX_INCREASE_PERCENT = 10;

/**
 * How a planned cancellation goes, and what the order run should end as:
 *  - `taken`: Cancel taken and answered (half of them past free cancellation, `freeCancel=0`: a policy fee is
 *    quoted, accepted and charged) → `cancelled`;
 *  - `refused`: the first Cancel answered 400 (nothing done) → `cancel-refused`, and no Cancel after it;
 *  - `lostAnswerRepeatRefused`: the first Cancel taken but answered 504, the order still Confirmed at the re-send
 *    point (it settles 20–28 s after the take), the re-send answered 400 "cannot be cancelled" → `cancelled`;
 *  - `unknownCode`: taken, answered HTTP 200 with an envelope code no profile lists → `cancelled`;
 *  - `freeWindowClosesBeforeConfirm`: free cancellation ends (`freeCancelForMs`) between the caller's free quote
 *    and its `{confirm: true, acceptedFee: 0}` → the update is refused (FeeChanged), nothing sent (`quoted`);
 *  - `freeWindowClosesBeforeResend`: the caller confirms the free quote; the first Cancel is lost (504, nothing
 *    taken) and free cancellation ends before the re-send point → re-quoted, `cancel-stopped`, nothing charged.
 */
export const CANCEL_KINDS = [
  'taken',
  'refused',
  'lostAnswerRepeatRefused',
  'unknownCode',
  'freeWindowClosesBeforeConfirm',
  'freeWindowClosesBeforeResend',
] as const;
export type CancelKind = (typeof CANCEL_KINDS)[number];

/** The order run's outcome kind each cancellation kind should end in (`quoted`: the confirm was refused). */
export const CANCEL_EXPECTED: Record<CancelKind, string> = {
  taken: 'cancelled',
  refused: 'cancel-refused',
  lostAnswerRepeatRefused: 'cancelled',
  unknownCode: 'cancelled',
  freeWindowClosesBeforeConfirm: 'quoted',
  freeWindowClosesBeforeResend: 'cancel-stopped',
};

/**
 * How an overlapping cancellation goes (class `cancelOverlaps`), and what it should end as:
 *  - `cancelDuringRecovery`: Book made the order but its answer was lost (an unanswered-after-create Book fault), the
 *    order settles 20–30 s later; while the booking recovers, the chaos client asks cancelBooking through
 *    `order:<ref>` (refused `BookingInProgress`, nothing sent), then cancels the booking workflow itself
 *    (`onCancelAfterBook: 'cancel'`) → booking `confirmed` with `cancelRequested`, its order run (origin `auto`)
 *    `cancelled`; never a booking `failed` over an order that exists;
 *  - `cancelDuringRecoveryListingLags`: the same, and once QueryOrders has answered the order Confirmed (the
 *    booking's read), it lags 6–12 s: not listed, or listed Confirming (`lagAs`), so the order run's first reads miss
 *    it → `cancelled`;
 *  - `duplicateConfirm`: a confirmed booking, quoted, then two `{confirm: true}` at the quoted fee: at once, or (half
 *    of them, `secondAfterMs`) the second 2 s after the first whose Cancel answer was lost (taken, 504) → one taken,
 *    one refused, `cancelled`, one Cancel taken by the supplier.
 */
export const OVERLAP_KINDS = ['cancelDuringRecovery', 'duplicateConfirm', 'cancelDuringRecoveryListingLags'] as const;
export type OverlapKind = (typeof OVERLAP_KINDS)[number];
/** Any planned cancellation's kind. */
export type AnyCancelKind = CancelKind | OverlapKind;

/** The order run's outcome kind each overlapping cancellation should end in. */
export const OVERLAP_EXPECTED: Record<OverlapKind, string> = {
  cancelDuringRecovery: 'cancelled',
  duplicateConfirm: 'cancelled',
  cancelDuringRecoveryListingLags: 'cancelled',
};

/** What each planned cancellation kind should end in, both classes. */
export const EXPECTED_BY_KIND: Record<AnyCancelKind, string> = { ...CANCEL_EXPECTED, ...OVERLAP_EXPECTED };

/** The overlap kinds cancelled through the booking workflow while it recovers (the system's own cancellation). */
export const DURING_RECOVERY = new Set<AnyCancelKind>(['cancelDuringRecovery', 'cancelDuringRecoveryListingLags']);

export interface PlannedCancel {
  kind: AnyCancelKind;
  /** `cancelDuringRecoveryListingLags`: how the lagging listing shows the order. */
  lagAs?: 'unlisted' | 'pending';
  /** `duplicateConfirm`: the second confirm this long after the first (absent: both at once). */
  secondAfterMs?: number;
  /** Free cancellation ends this long after the order was made (the window kinds). */
  freeCancelForMs?: number;
  /** `taken`: past free cancellation already (a policy fee is quoted and accepted). */
  feeCharged?: boolean;
}

export interface PlannedBooking {
  index: number;
  request: BookingRequest;
  /** The faults given to this booking. */
  classes: FaultClass[];
  /** Whether a priceChanged booking's new price is within the policy. */
  priceAccepted?: boolean;
  /** What the booking should end as when nothing else (a worker killed mid-Book, say) gets in the way. */
  expected: BookingOutcomeKind;
  /** Values that must never appear in clear in history or logs. */
  personal: string[];
  /** The run terminates this booking's workflow once Book has made its order (markOrphanTargets). */
  orphanTarget?: boolean;
  /** Once confirmed (or while it recovers), the chaos client cancels it this way (classes `cancelAfterConfirm`, `cancelOverlaps`). */
  cancel?: PlannedCancel;
}

export interface MixOptions {
  n: number;
  seed: number;
  recovery: Partial<RecoveryPolicy>;
}

export const RATE_PACKAGES = ['pkg-chaos-standard', 'pkg-chaos-deluxe', 'pkg-chaos-suite', 'pkg-chaos-family'];

/** Plans `n` bookings. Pure: the same options always give the same plan. */
export function planBookings({ n, seed, recovery }: MixOptions): PlannedBooking[] {
  const rng = substream(seed, 'mix');
  const quota = Math.max(1, Math.ceil(MIN_CLASS_SHARE * n));
  const indices = Array.from({ length: n }, (_, i) => i);
  const classes = indices.map(() => new Set<FaultClass>());

  // Scenario first: it decides who reaches Book (sold out and rejected prices never do).
  const byScenario = rng.shuffle(indices);
  const soldOut = byScenario.slice(0, quota);
  const rejected = byScenario.slice(quota, 2 * quota);
  const accepted = byScenario.slice(2 * quota, 3 * quota);
  for (const i of soldOut) classes[i]!.add('soldOut');
  for (const i of [...rejected, ...accepted]) classes[i]!.add('priceChanged');
  const priceAccepted = new Set(accepted);
  const neverBooks = new Set([...soldOut, ...rejected]);
  const reachesBook = indices.filter((i) => !neverBooks.has(i));

  // Book faults, quota each, among the bookings that reach Book; any left over book cleanly.
  const byBook = rng.shuffle(reachesBook);
  BOOK_CLASSES.forEach((cls, k) => {
    for (const i of byBook.slice(k * quota, (k + 1) * quota)) classes[i]!.add(cls);
  });

  // How the order settles, among bookings whose Book makes an order.
  const makesOrder = rng.shuffle(reachesBook.filter((i) => !classes[i]!.has('orderNeverFound')));
  SETTLE_CLASSES.forEach((cls, k) => {
    for (const i of makesOrder.slice(k * quota, (k + 1) * quota)) classes[i]!.add(cls);
  });

  // Listed late, re-sends refused: among the bookings whose first Book made the order unanswered.
  const unanswered = rng.shuffle(
    reachesBook.filter((i) => [...classes[i]!].some((c) => UNANSWERED_AFTER_CREATE.has(c))),
  );
  LISTING_CLASSES.forEach((cls, k) => {
    for (const i of unanswered.slice(k * quota, (k + 1) * quota)) classes[i]!.add(cls);
  });

  // CheckAvail faults hit its first calls only, so they combine with any scenario.
  const byCheck = rng.shuffle(indices);
  CHECK_AVAIL_CLASSES.forEach((cls, k) => {
    for (const i of byCheck.slice(k * quota, (k + 1) * quota)) classes[i]!.add(cls);
  });

  const plan = indices.map((index) => {
    const own = classes[index]!;
    const { header, expected } = testHeader(own, priceAccepted.has(index), rng);
    const { personal, ...booking } = chaosBooking(rng, index);
    const request: BookingRequest = { ...booking, context: { test: header }, recovery };
    return {
      index,
      request,
      classes: FAULT_CLASSES.filter((c) => own.has(c)),
      ...(own.has('priceChanged') ? { priceAccepted: priceAccepted.has(index) } : {}),
      expected,
      personal,
    };
  });
  return planOverlaps(planCancels(plan, quota, seed), quota, seed);
}

/**
 * Gives the `cancelAfterConfirm` class its quota among the bookings planned to end confirmed whose order settles
 * at once (not `pendingThenConfirmed`, the orphan targets' pool, nor listed late): the kinds of CANCEL_KINDS in
 * turn, their Cancel faults appended to the Test header. A separate stream of the seed, so the rest of the plan is
 * the one it was before cancellations.
 */
function planCancels(plan: PlannedBooking[], quota: number, seed: number): PlannedBooking[] {
  const rng = substream(seed, 'cancels');
  const eligible = plan.filter(
    (b) =>
      b.expected === 'confirmed' &&
      !b.classes.includes('pendingThenConfirmed') &&
      !b.classes.includes('listedLateResendRateLimited'),
  );
  const chosen = rng.shuffle(eligible).slice(0, quota);
  const kindOf = new Map(chosen.map((b, k) => [b.index, CANCEL_KINDS[k % CANCEL_KINDS.length]!]));
  return plan.map((b) => {
    const kind = kindOf.get(b.index);
    if (!kind) return b;
    const { keys, cancel } = cancelFaults(kind, rng);
    const test = [b.request.context?.test ?? '', ...keys].filter(Boolean).join('&');
    return {
      ...b,
      classes: FAULT_CLASSES.filter((c) => c === 'cancelAfterConfirm' || b.classes.includes(c)),
      cancel,
      request: { ...b.request, context: { ...b.request.context, test } },
    };
  });
}

/**
 * Gives the `cancelOverlaps` class its quota, the kinds of OVERLAP_KINDS in turn, among the bookings planned to end
 * confirmed that have no cancellation yet and whose order settles at once (as planCancels). The kinds cancelled during
 * recovery take bookings whose first Book makes the order unanswered; their order settles 20–30 s after it was made
 * (so the booking recovers for a while) and they ask `onCancelAfterBook: 'cancel'`. Its own stream of the seed: the
 * rest of the plan is the one it was before this class.
 */
function planOverlaps(plan: PlannedBooking[], quota: number, seed: number): PlannedBooking[] {
  const rng = substream(seed, 'overlaps');
  const free = rng.shuffle(
    plan.filter(
      (b) =>
        b.expected === 'confirmed' &&
        !b.cancel &&
        !b.classes.includes('pendingThenConfirmed') &&
        !b.classes.includes('listedLateResendRateLimited'),
    ),
  );
  const unanswered = free.filter((b) => b.classes.some((c) => UNANSWERED_AFTER_CREATE.has(c)));
  const chosen = new Map<number, OverlapKind>();
  for (let k = 0; k < quota; k++) {
    const kind = OVERLAP_KINDS[k % OVERLAP_KINDS.length]!;
    const pool = DURING_RECOVERY.has(kind) ? unanswered : free;
    const pick = pool.find((b) => !chosen.has(b.index)) ?? free.find((b) => !chosen.has(b.index));
    if (!pick) break;
    // A pool run dry: the booking still gets a kind it can carry (no unanswered Book: a duplicate confirm).
    const fits = DURING_RECOVERY.has(kind) && !unanswered.includes(pick) ? 'duplicateConfirm' : kind;
    chosen.set(pick.index, fits);
  }
  return plan.map((b) => {
    const kind = chosen.get(b.index);
    if (!kind) return b;
    const { keys, cancel, settleMs } = overlapFaults(kind, rng);
    let test = b.request.context?.test ?? '';
    if (settleMs !== undefined) test = test.replace(/confirmAfterMs=\d+/, `confirmAfterMs=${settleMs}`);
    test = [test, ...keys].filter(Boolean).join('&');
    return {
      ...b,
      classes: FAULT_CLASSES.filter((c) => c === 'cancelOverlaps' || b.classes.includes(c)),
      cancel,
      request: {
        ...b.request,
        context: { ...b.request.context, test },
        ...(DURING_RECOVERY.has(kind) ? { onCancelAfterBook: 'cancel' as const } : {}),
      },
    };
  });
}

/** The Test header keys of an overlapping cancellation, and when its order settles (the recovery kinds). */
function overlapFaults(kind: OverlapKind, rng: Rng): { keys: string[]; cancel: PlannedCancel; settleMs?: number } {
  const settle = `cancelAfterMs=${rng.int(1_000, 5_000)}`;
  switch (kind) {
    case 'cancelDuringRecovery':
      return { keys: [settle], cancel: { kind }, settleMs: rng.int(20_000, 30_000) };
    case 'cancelDuringRecoveryListingLags': {
      const lagAs = rng.next() < 0.5 ? ('unlisted' as const) : ('pending' as const);
      const lag = `lagAfterConfirmedMs=${rng.int(6_000, 12_000)}&relistAs=${lagAs}`;
      return { keys: [lag, settle], cancel: { kind, lagAs }, settleMs: rng.int(20_000, 30_000) };
    }
    case 'duplicateConfirm': {
      if (rng.next() < 0.5) return { keys: [settle], cancel: { kind } };
      // The first Cancel taken but its answer lost; the order settles after the re-send point, which is refused.
      const lost = [
        'cancel=504AfterAccept',
        'cancelTimes=1',
        'cancelRepeat=refuse',
        `cancelAfterMs=${rng.int(20_000, 28_000)}`,
      ];
      return { keys: lost, cancel: { kind, secondAfterMs: 2_000 } };
    }
  }
}

/** The Test header keys for a cancellation kind (read by the sandbox's Cancel from the Book's header). */
function cancelFaults(kind: CancelKind, rng: Rng): { keys: string[]; cancel: PlannedCancel } {
  // When a taken Cancel settles (status 3): explicit, so the check can tell when a QueryOrders answer said so.
  const settle = (min: number, max: number) => `cancelAfterMs=${rng.int(min, max)}`;
  switch (kind) {
    case 'taken': {
      const feeCharged = rng.next() < 0.5;
      return { keys: [...(feeCharged ? ['freeCancel=0'] : []), settle(1_000, 5_000)], cancel: { kind, feeCharged } };
    }
    case 'refused':
      return { keys: ['cancel=refuse', 'cancelTimes=1', settle(1_000, 5_000)], cancel: { kind } };
    case 'lostAnswerRepeatRefused':
      // Still Confirmed at the re-send point (the first poll ≥ 10 s after the send: 15.5 s), settled soon after.
      return {
        keys: ['cancel=504AfterAccept', 'cancelTimes=1', 'cancelRepeat=refuse', settle(20_000, 28_000)],
        cancel: { kind },
      };
    case 'unknownCode':
      // Settled before the re-send point: one Cancel only.
      return { keys: ['cancel=unknownCode', 'cancelTimes=1', settle(1_000, 8_000)], cancel: { kind } };
    case 'freeWindowClosesBeforeConfirm':
    case 'freeWindowClosesBeforeResend': {
      const freeCancelForMs = rng.int(45_000, 60_000);
      const lost = kind === 'freeWindowClosesBeforeResend' ? ['cancel=lost', 'cancelTimes=1'] : [];
      return {
        keys: [`freeCancelForMs=${freeCancelForMs}`, ...lost, settle(1_000, 5_000)],
        cancel: { kind, freeCancelForMs },
      };
    }
  }
}

/** The `Test` header for a booking's faults, and the outcome they lead to. */
function testHeader(
  own: ReadonlySet<FaultClass>,
  priceAccepted: boolean,
  rng: Rng,
): { header: string; expected: BookingOutcomeKind } {
  const keys: string[] = [];
  if (own.has('checkAvail429')) keys.push(`checkAvail=429&checkAvailTimes=${rng.int(1, 2)}`);
  if (own.has('checkAvail5xx')) keys.push(`checkAvail=${rng.pick(['500', '503'])}&checkAvailTimes=${rng.int(1, 2)}`);
  if (own.has('checkAvailHang')) keys.push('checkAvail=hang&checkAvailTimes=1');
  if (own.has('checkAvailMalformed')) keys.push('checkAvail=malformed&checkAvailTimes=1');

  if (own.has('soldOut')) return { header: [...keys, 'scenario=soldOut'].join('&'), expected: 'unavailable' };
  if (own.has('priceChanged')) {
    // Rounding to cents can push a rise of exactly the allowance over it, so stay clear of the boundary.
    const delta = priceAccepted ? rng.int(1, MAX_INCREASE_PERCENT - 1) : rng.int(MAX_INCREASE_PERCENT + 2, 30);
    keys.push(`scenario=priceChanged&priceDeltaPercent=${delta}`);
    if (!priceAccepted) return { header: keys.join('&'), expected: 'price-rejected' };
  }

  // The first Book only, so the re-sends meet the rate limit below rather than the same fault.
  const firstOnly = own.has('listedLateResendRateLimited') ? '&bookTimes=1' : '';
  if (own.has('book504AfterCreate')) keys.push(`book=504AfterCreate${firstOnly}`);
  if (own.has('bookHangAfterCreate')) keys.push(`book=hangAfterCreate${firstOnly}`);
  // Only the first Book hangs: the re-sent Book after `rebookAfterSeconds` without an order makes it.
  if (own.has('bookHangBeforeCreate')) keys.push('book=hangBeforeCreate&bookTimes=1');
  if (own.has('bookResetAfterCreate')) keys.push(`book=resetAfterCreate${firstOnly}`);
  // A few refusals: the workflow re-sends Book itself after 1, 2, 4 s.
  if (own.has('book429')) keys.push(`book=429&bookTimes=${rng.int(1, 3)}`);
  if (own.has('bookMalformedAfterCreate')) keys.push(`book=malformedAfterCreate${firstOnly}`);
  // Listed from 20 to 40 s after it was made: past the re-send point (15.5 s into the scaled schedule,
  // the first poll at or after rebookAfterSeconds), with every re-send answered 429.
  if (own.has('listedLateResendRateLimited')) keys.push(`resend=429&listAfterMs=${rng.int(20_000, 40_000)}`);
  // Every Book answers 504 before making the order: it is never found, and the deadline ends it.
  if (own.has('orderNeverFound'))
    return { header: [...keys, 'book=504BeforeCreate&bookTimes=99'].join('&'), expected: 'unresolved' };

  if (own.has('pendingThenFailed')) {
    keys.push(`outcome=failed&confirmAfterMs=${rng.int(0, 20_000)}`);
    return { header: keys.join('&'), expected: 'failed' };
  }
  keys.push(`confirmAfterMs=${own.has('pendingThenConfirmed') ? rng.int(5_000, 40_000) : rng.int(0, 2_000)}`);
  return { header: keys.join('&'), expected: 'confirmed' };
}

/**
 * What every chaos class's booking request holds before its faults and schedule: a rate package at its base price,
 * synthetic people and a reference, drawn from `rng` in that order (each class's plan is what it was before this was shared, seed for seed).
 */
export function chaosBooking(
  rng: Rng,
  index: number,
): Omit<BookingRequest, 'context' | 'recovery'> & { personal: string[] } {
  const ratePkgId = rng.pick(RATE_PACKAGES);
  const { holder, guests, personal } = people(rng, index);
  const customerReferenceNo = uuidFrom(rng);
  return {
    customerReferenceNo,
    ratePkgId,
    // Set, not derived, so the sandbox's CheckAvail calls map back to the booking by session.
    sessionId: `chaos-${customerReferenceNo}`,
    holder,
    guests,
    expectedPrice: basePriceFor(ratePkgId),
    priceChangePolicy: { maxIncreasePercent: MAX_INCREASE_PERCENT, onExceeded: 'reject' },
    personal,
  };
}

/**
 * Synthetic people, unique per booking. Names are 8+ letters so that finding one by chance in encrypted
 * bytes or base64 text is practically impossible (the secrets scan must not cry wolf).
 */
export function people(rng: Rng, index: number): Pick<BookingRequest, 'holder' | 'guests'> & { personal: string[] } {
  const first = name(rng);
  const last = name(rng);
  const guestFirst = name(rng);
  const email = `${first}.${last}.${index}@example.org`.toLowerCase();
  const number = String(rng.int(2_000_000_000, 9_999_999_999));
  const holder = { firstName: first, lastName: last, email, phone: { countryCode: 'GB', countryNumber: 44, number } };
  const guests = [
    { roomIndex: 0, firstName: first, lastName: last, nationalityCode: 'GB', age: rng.int(18, 80), isChild: false },
    ...(rng.next() < 0.5
      ? [
          {
            roomIndex: 0,
            firstName: guestFirst,
            lastName: last,
            nationalityCode: 'FR',
            age: rng.int(2, 17),
            isChild: true,
          },
        ]
      : []),
  ];
  const personal = [first, last, email, number, ...(guests.length > 1 ? [guestFirst] : [])];
  return { holder, guests, personal };
}

function name(rng: Rng): string {
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  let out = '';
  for (let i = 0; i < 4; i++) out += rng.pick([...consonants]) + rng.pick([...vowels]);
  return out[0]!.toUpperCase() + out.slice(1);
}

/** A version-4 UUID from the PRNG, so references are reproducible from the seed. */
export function uuidFrom(rng: Rng): string {
  const bytes = Array.from({ length: 16 }, () => rng.int(0, 255));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Picks `count` bookings to be made orphans: their workflow is terminated once their Book has made an order,
 * before the order is confirmed. Chosen among the bookings that settle late (pendingThenConfirmed), those
 * without a Book fault first; their order then stays Confirming for 30 s after Book made it, long enough to
 * terminate the workflow while it still polls, through a worker kill or a server restart. A separate stream
 * of the seed: the rest of the plan is the same with or without orphans.
 */
export function markOrphanTargets(plan: PlannedBooking[], count: number, seed: number): PlannedBooking[] {
  const rng = substream(seed, 'orphans');
  const bookFaults = new Set<FaultClass>(BOOK_CLASSES);
  const late = rng.shuffle(plan.filter((b) => b.classes.includes('pendingThenConfirmed') && !b.cancel));
  const clean = (b: PlannedBooking) => !b.classes.some((c) => bookFaults.has(c));
  const eligible = [...late.filter(clean), ...late.filter((b) => !clean(b))];
  const chosen = new Set(eligible.slice(0, Math.max(0, count)).map((b) => b.index));
  return plan.map((b) => {
    if (!chosen.has(b.index)) return b;
    const test = (b.request.context?.test ?? '').replace(/confirmAfterMs=\d+/, 'confirmAfterMs=30000');
    return { ...b, orphanTarget: true, request: { ...b.request, context: { ...b.request.context, test } } };
  });
}

/**
 * How long a booking's planned faults keep it (or its cancellation) open, at the least: the recovery deadline for an
 * order never found, else the longest delay its Test header names (a late listing, a late settlement, a cancellation
 * window). A rough order for `--start-order longest-first`, not a promise.
 */
export function expectedOpenMs(booking: PlannedBooking, deadlineSeconds: number): number {
  if (booking.classes.includes('orderNeverFound')) return deadlineSeconds * 1000;
  const delays = [...(booking.request.context?.test ?? '').matchAll(/\w+Ms=(\d+)/g)].map((m) => Number(m[1]));
  return Math.max(0, ...delays);
}

/** The plan in the order its bookings are started: as planned, or those open longest first (stable). */
export function startOrder(
  plan: PlannedBooking[],
  order: 'plan' | 'longest-first',
  deadlineSeconds: number,
): PlannedBooking[] {
  if (order === 'plan') return plan;
  const open = new Map(plan.map((b) => [b.index, expectedOpenMs(b, deadlineSeconds)]));
  return [...plan].sort((a, b) => open.get(b.index)! - open.get(a.index)! || a.index - b.index);
}
