/**
 * The class of waits and clocks (`npm run chaos -- --waits`): what each booking of the run is given, from the seed.
 *
 * Kinds, in turn over the shuffled bookings (each at least a fifth of them):
 *  - `bookRetryAfter`: the first 1–4 Books answered 429 with `Retry-After` a day away (delta seconds, or an HTTP date a
 *    day after the supplier's clock), no order made: each wait cut to the profile's ceiling, then Book again →
 *    `confirmed`, one order;
 *  - `callerCancelRetryAfter`: a confirmed booking cancelled by its caller, the first 1–2 Cancels answered 429 with
 *    `Retry-After` an hour (or a day) away: each confirm answered at once `cancel-refused` with the wait (never held
 *    past the caller's hold), the caller asks again, the last ask taken → `cancelled`;
 *  - `autoCancelRetryAfter`: Book's answer lost (the order made, confirmed 15–25 s later), the booking cancelled while
 *    it recovers (`onCancelAfterBook: 'cancel'`), the system's Cancel answered 429 with a day's `Retry-After` 1–3
 *    times: each pause cut to the ceiling → its order run `cancelled`;
 *  - `overlapsAcrossContinueAsNew`: a confirmed booking cancelled (taken, settled 30–45 s later) on an order run that
 *    continues as new after 100 events, while bursts of quotes, confirms and checks arrive at once on the same order:
 *    every request answered (taken, or refused with a reason), one Cancel taken, the run (through its new runs)
 *    `cancelled`.
 *
 * Every worker's clock runs behind or ahead of the server's (chaos/waits/clock.ts): activities read the skewed time
 * (an HTTP-date Retry-After, a fee's time), workflows the server's.
 */
import type { BookingRequest, RecoveryOptions } from '../../src/api/contract/index';
import { chaosBooking, substream } from '../mix';

export const WAIT_KINDS = [
  'bookRetryAfter',
  'callerCancelRetryAfter',
  'autoCancelRetryAfter',
  'overlapsAcrossContinueAsNew',
] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/** How long a supplier asks to wait, and how it says it: a delta in seconds, or an HTTP date that far ahead. */
export interface RetryAfterHint {
  seconds: number;
  form: 'delta' | 'date';
}

export interface WaitBooking {
  index: number;
  kind: WaitKind;
  request: BookingRequest;
  /** The 429s the supplier answers before it takes Book (bookRetryAfter) or Cancel (the cancel kinds). */
  refusals: number;
  hint: RetryAfterHint;
  personal: string[];
}

/** What the supplier's Test header says for a hint (dev/sandbox/scenario.ts, `retryAfter`). */
export function hintFlag(h: RetryAfterHint): string {
  return `retryAfter=${h.form === 'date' ? `date:${h.seconds}` : h.seconds}`;
}

/** The plan: `n` bookings, the kinds in turn over a shuffle of the seed, each with its faults in its Test header. */
export function planWaits({
  n,
  seed,
  recovery,
}: {
  n: number;
  seed: number;
  recovery: RecoveryOptions;
}): WaitBooking[] {
  const rng = substream(seed, 'waits');
  const order = rng.shuffle(Array.from({ length: n }, (_, i) => i));
  const kindOf = new Map(order.map((i, k) => [i, WAIT_KINDS[k % WAIT_KINDS.length]!]));
  return Array.from({ length: n }, (_, index) => {
    const kind = kindOf.get(index)!;
    const form = rng.next() < 0.5 ? ('delta' as const) : ('date' as const);
    const { personal, ...booking } = chaosBooking(rng, index);
    const { keys, refusals, hint } = faults(kind, form, rng);
    const request: BookingRequest = {
      ...booking,
      context: { test: keys.join('&') },
      recovery,
      ...(kind === 'autoCancelRetryAfter' ? { onCancelAfterBook: 'cancel' as const } : {}),
    };
    return { index, kind, request, refusals, hint, personal };
  });
}

function faults(
  kind: WaitKind,
  form: RetryAfterHint['form'],
  rng: ReturnType<typeof substream>,
): { keys: string[]; refusals: number; hint: RetryAfterHint } {
  const day: RetryAfterHint = { seconds: 86_400, form };
  switch (kind) {
    case 'bookRetryAfter': {
      const refusals = rng.int(1, 4);
      return { keys: ['book=429', `bookTimes=${refusals}`, hintFlag(day)], refusals, hint: day };
    }
    case 'callerCancelRetryAfter': {
      const refusals = rng.int(1, 2);
      const hint: RetryAfterHint = { seconds: rng.next() < 0.5 ? 3_600 : 86_400, form };
      const keys = ['cancel=429', `cancelTimes=${refusals}`, hintFlag(hint), `cancelAfterMs=${rng.int(1_000, 4_000)}`];
      return { keys, refusals, hint };
    }
    case 'autoCancelRetryAfter': {
      const refusals = rng.int(1, 3);
      const keys = [
        'book=504AfterCreate',
        'bookTimes=1',
        `confirmAfterMs=${rng.int(15_000, 25_000)}`,
        'cancel=429',
        `cancelTimes=${refusals}`,
        hintFlag(day),
        `cancelAfterMs=${rng.int(1_000, 4_000)}`,
      ];
      return { keys, refusals, hint: day };
    }
    case 'overlapsAcrossContinueAsNew':
      return { keys: [`cancelAfterMs=${rng.int(30_000, 45_000)}`], refusals: 0, hint: day };
  }
}
