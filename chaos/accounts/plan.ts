/**
 * The class of two supplier accounts (`npm run chaos -- --accounts`): what each booking of the run is given, from the
 * seed. Half the bookings name the healthy account (`alpha`), half the failing one (`beta`), shuffled; every booking
 * books cleanly at its supplier (the order confirmed 0–3 s after Book), so what happens to it is the failing
 * account's doing and the workers' kills, nothing planned in its Test header. A quarter of each account's bookings is
 * cancelled by its caller once confirmed (quote, then confirm at the quoted fee), so Cancel and the order run's
 * QueryOrders are routed too.
 */
import type { BookingRequest, RecoveryOptions } from '../../src/api/contract/index';
import { chaosBooking, substream } from '../mix';

/** The account ids the class's workers know, the healthy one first (the default of a booking that names none). */
export const HEALTHY = 'alpha';
export const FAILING = 'beta';
export type AccountId = typeof HEALTHY | typeof FAILING;

export interface AccountBooking {
  index: number;
  account: AccountId;
  request: BookingRequest;
  /** Cancelled by its caller once it is confirmed. */
  cancel: boolean;
  personal: string[];
}

/** The plan: `n` bookings, the accounts in turn over a shuffle of the seed, every fourth of each cancelled. */
export function planAccounts({
  n,
  seed,
  recovery,
}: {
  n: number;
  seed: number;
  recovery: RecoveryOptions;
}): AccountBooking[] {
  const rng = substream(seed, 'accounts');
  const order = rng.shuffle(Array.from({ length: n }, (_, i) => i));
  const accountOf = new Map(order.map((i, k) => [i, k % 2 === 0 ? HEALTHY : FAILING] as const));
  const cancelled = new Set(order.filter((_, k) => k % 8 < 2));
  return Array.from({ length: n }, (_, index) => {
    const { personal, ...booking } = chaosBooking(rng, index);
    const account = accountOf.get(index)!;
    const request: BookingRequest = {
      ...booking,
      supplier: account,
      context: { test: `confirmAfterMs=${rng.int(0, 3_000)}` },
      recovery,
    };
    return { index, account, request, cancel: cancelled.has(index), personal };
  });
}
