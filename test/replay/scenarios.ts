/**
 * The workflow scenarios whose histories are recorded from real runs on the dev server
 * (test/replay/record-histories.ts) and replayed by test/replay/replay.test.ts.
 *
 * The recovery schedule is scaled down (seconds instead of minutes) so recording takes about a minute;
 * the code paths, and so the commands in the history, are those of the full schedule. Each history is
 * the scenario's last run (for a continue-as-new chain, the run that resumed).
 */
import type { BookingRequest } from '../../src/api/contract/index';
import { basePriceFor } from '../../dev/sandbox/store';

export interface ReplayScenario {
  name: string;
  /** The outcome kind the recording must end with; the recorder refuses to write anything else. */
  expected: string;
  test: string;
  request?: Partial<BookingRequest>;
  /** Steps the recorder performs while the workflow runs. */
  steer?: 'approve-price' | 'refuse-price' | 'cancel-in-recovery' | 'hint-after-first-poll' | 'hints-flood';
}

/** The price the user saw: the sandbox's base price for the harness's default rate package. */
const expectedPrice = basePriceFor('pkg-standard-double');
/** Below the production bounds: a test schedule (`testing`), which the recorder's worker accepts (RECOVERY_TESTING). */
const fastRecovery = {
  delaysSeconds: [1, 1, 2],
  repeatEverySeconds: 2,
  rebookAfterSeconds: 3,
  deadlineSeconds: 20,
  testing: true,
};

export const replayScenarios: ReplayScenario[] = [
  { name: 'confirmed-at-once', expected: 'confirmed', test: 'confirmAfterMs=0' },
  { name: 'sold-out', expected: 'unavailable', test: 'scenario=soldOut' },
  { name: 'book-credit-limit', expected: 'failed', test: 'book=creditLimit' },
  { name: 'book-429-then-confirmed', expected: 'confirmed', test: 'book=429&bookTimes=1&confirmAfterMs=0' },
  {
    name: 'checkavail-503-then-confirmed',
    expected: 'confirmed',
    test: 'checkAvail=503&checkAvailTimes=1&confirmAfterMs=0',
  },
  {
    name: 'price-within-policy',
    expected: 'confirmed',
    test: 'scenario=priceChanged&priceDeltaPercent=5&confirmAfterMs=0',
    request: { expectedPrice, priceChangePolicy: { maxIncreasePercent: 10, onExceeded: 'reject' } },
  },
  {
    name: 'price-rejected',
    expected: 'price-rejected',
    test: 'scenario=priceChanged&priceDeltaPercent=20',
    request: { expectedPrice, priceChangePolicy: { maxIncreasePercent: 10, onExceeded: 'reject' } },
  },
  {
    name: 'price-approved',
    expected: 'confirmed',
    test: 'scenario=priceChanged&priceDeltaPercent=20&confirmAfterMs=0',
    request: { expectedPrice, priceChangePolicy: { onExceeded: 'ask' } },
    steer: 'approve-price',
  },
  {
    name: 'price-refused',
    expected: 'price-rejected',
    test: 'scenario=priceChanged&priceDeltaPercent=20',
    request: { expectedPrice, priceChangePolicy: { onExceeded: 'ask' } },
    steer: 'refuse-price',
  },
  {
    name: 'book-504-confirmed-at-poll-3',
    expected: 'confirmed',
    test: 'book=504AfterCreate&confirmAfterQueries=3',
    request: { recovery: fastRecovery },
  },
  {
    name: 'pending-then-failed',
    expected: 'failed',
    test: 'outcome=failed&confirmAfterQueries=2',
    request: { recovery: fastRecovery },
  },
  {
    name: 'not-found-rebooked',
    expected: 'confirmed',
    test: 'book=504BeforeCreate&bookTimes=1&confirmAfterMs=0',
    request: { recovery: fastRecovery },
  },
  {
    name: 'unresolved-at-deadline',
    expected: 'unresolved',
    test: 'book=504AfterCreate&outcome=pending',
    request: { recovery: { ...fastRecovery, deadlineSeconds: 8 } },
  },
  {
    name: 'cancelled-during-recovery',
    expected: 'confirmed',
    test: 'book=504AfterCreate&confirmAfterQueries=3',
    request: { recovery: fastRecovery },
    steer: 'cancel-in-recovery',
  },
  {
    name: 'hint-short-circuits-wait',
    expected: 'confirmed',
    test: 'book=504AfterCreate&confirmAfterQueries=2',
    request: { recovery: { ...fastRecovery, delaysSeconds: [30] } },
    steer: 'hint-after-first-poll',
  },
  {
    // The re-send (after the 4th poll, at 4 s) is refused, and the
    // order the first Book made is listed from the 5th query: confirmed, not failed.
    name: 'resend-429-listed-late-confirmed',
    expected: 'confirmed',
    test: 'book=504AfterCreate&bookTimes=1&resend=429&listAfterQueries=5&confirmAfterMs=0',
    request: { recovery: fastRecovery },
  },
  {
    name: 'resend-400-listed-late-confirmed',
    expected: 'confirmed',
    test: 'book=504AfterCreate&bookTimes=1&resend=400&listAfterQueries=5&confirmAfterMs=0',
    request: { recovery: fastRecovery },
  },
  {
    // Book answered with a pending order that QueryOrders lists only from its 6th query: never re-sent.
    name: 'pending-not-listed-not-resent',
    expected: 'confirmed',
    test: 'confirmAfterQueries=6&listAfterQueries=6',
    request: { recovery: fastRecovery },
  },
  {
    // A hint after the first poll is polled at once; the next, seconds later, waits
    // for the scheduled poll (due before the minute is up), which confirms.
    name: 'hints-spaced',
    expected: 'confirmed',
    test: 'book=504AfterCreate&confirmAfterQueries=3',
    request: { recovery: { ...fastRecovery, delaysSeconds: [5] } },
    steer: 'hints-flood',
  },
  {
    // Recorded as its last run: the one that resumed from continue-as-new (input carries `resume`).
    name: 'continued-as-new-then-confirmed',
    expected: 'confirmed',
    test: 'book=504AfterCreate&confirmAfterQueries=14',
    request: {
      recovery: {
        delaysSeconds: [1],
        repeatEverySeconds: 1,
        deadlineSeconds: 300,
        continueAsNewAfterEvents: 100,
        testing: true,
      },
    },
  },
];
