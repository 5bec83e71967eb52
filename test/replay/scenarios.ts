/**
 * The workflow scenarios whose histories are recorded from real runs on the dev server
 * (scripts/record-histories.ts) and replayed by test/replay/replay.test.ts.
 *
 * The recovery schedule is scaled down (seconds instead of minutes) so recording takes about a minute;
 * the code paths, and so the commands in the history, are those of the full schedule.
 */
import type { BookingRequest } from '../../src/contract';

export interface ReplayScenario {
  name: string;
  test: string;
  request?: Partial<BookingRequest>;
  /** Steps the recorder performs while the workflow runs. */
  steer?: 'approve-price' | 'refuse-price' | 'cancel-in-recovery' | 'hint-after-first-poll';
}

const fastRecovery = { delaysSeconds: [1, 1, 2], repeatEverySeconds: 2, rebookAfterSeconds: 3, deadlineSeconds: 20 };

export const replayScenarios: ReplayScenario[] = [
  { name: 'confirmed-at-once', test: 'confirmAfterMs=0' },
  { name: 'sold-out', test: 'scenario=soldOut' },
  { name: 'book-credit-limit', test: 'book=creditLimit' },
  { name: 'book-429-then-confirmed', test: 'book=429&bookTimes=1&confirmAfterMs=0' },
  { name: 'checkavail-503-then-confirmed', test: 'checkAvail=503&checkAvailTimes=1&confirmAfterMs=0' },
  { name: 'price-within-policy', test: 'scenario=priceChanged&priceDeltaPercent=5&confirmAfterMs=0', request: { priceChangePolicy: { maxIncreasePercent: 10, onExceeded: 'reject' } } },
  { name: 'price-rejected', test: 'scenario=priceChanged&priceDeltaPercent=20', request: { priceChangePolicy: { maxIncreasePercent: 10, onExceeded: 'reject' } } },
  { name: 'price-approved', test: 'scenario=priceChanged&priceDeltaPercent=20&confirmAfterMs=0', request: { priceChangePolicy: { onExceeded: 'ask' } }, steer: 'approve-price' },
  { name: 'price-refused', test: 'scenario=priceChanged&priceDeltaPercent=20', request: { priceChangePolicy: { onExceeded: 'ask' } }, steer: 'refuse-price' },
  { name: 'book-504-confirmed-at-poll-3', test: 'book=504AfterCreate&confirmAfterQueries=3', request: { recovery: fastRecovery } },
  { name: 'pending-then-failed', test: 'outcome=failed&confirmAfterQueries=2', request: { recovery: fastRecovery } },
  { name: 'not-found-rebooked', test: 'book=504BeforeCreate&bookTimes=1&confirmAfterMs=0', request: { recovery: fastRecovery } },
  { name: 'unresolved-at-deadline', test: 'book=504AfterCreate&outcome=pending', request: { recovery: { ...fastRecovery, deadlineSeconds: 8 } } },
  { name: 'cancelled-during-recovery', test: 'book=504AfterCreate&confirmAfterQueries=3', request: { recovery: fastRecovery }, steer: 'cancel-in-recovery' },
  { name: 'hint-short-circuits-wait', test: 'book=504AfterCreate&confirmAfterQueries=2', request: { recovery: { ...fastRecovery, delaysSeconds: [30] } }, steer: 'hint-after-first-poll' },
];
