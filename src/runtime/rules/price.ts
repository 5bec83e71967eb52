/** The price-change decision, as a pure function of what the user saw, what CheckAvail says, and the policy. */
import type { PriceChangePolicy } from '../../api/contract/index';
import type { Money } from '../../api/values/index';

export type PriceVerdict = 'accept' | 'reject' | 'ask';

/**
 * A decrease or an equal price is accepted; an increase within every allowance set by the policy is
 * accepted; anything else (an increase beyond it, another currency, no price to compare) goes to the
 * policy's `onExceeded`. Without an expected price there is nothing to compare, so any price is accepted.
 */
export function judgePrice(
  expected: Money | undefined,
  current: Money | undefined,
  policy: Partial<PriceChangePolicy> | undefined,
): PriceVerdict {
  if (!expected) return 'accept';
  const exceeded = policy?.onExceeded ?? 'reject';
  if (!current || current.currency !== expected.currency) return exceeded;
  const increase = current.amount - expected.amount;
  if (increase <= 0) return 'accept';
  const pct = expected.amount > 0 ? (increase / expected.amount) * 100 : Infinity;
  const { maxIncreasePercent, maxIncreaseAmount } = policy ?? {};
  if (maxIncreasePercent === undefined && maxIncreaseAmount === undefined) return exceeded;
  const withinPct = maxIncreasePercent === undefined || pct <= maxIncreasePercent + 1e-9;
  const withinAmount = maxIncreaseAmount === undefined || increase <= maxIncreaseAmount + 1e-9;
  return withinPct && withinAmount ? 'accept' : exceeded;
}

/** Rounding a supplier may do between the price it quotes and the order it confirms: not an increase. */
const ROUNDING = 0.01;

/**
 * Whether the price an order was confirmed at is above what the booking accepted, beyond the caller's own
 * allowance (the policy judgePrice applies) and a cent of rounding. Only a price in the accepted currency is
 * compared: another currency says nothing either way (`undefined`), and neither does a missing price.
 */
export function confirmedAboveAccepted(
  accepted: Money | undefined,
  confirmed: Money | undefined,
  policy: Partial<PriceChangePolicy> | undefined,
): boolean | undefined {
  if (!accepted || !confirmed || confirmed.currency !== accepted.currency) return undefined;
  if (confirmed.amount <= accepted.amount + ROUNDING) return false;
  return judgePrice(accepted, confirmed, { ...policy, onExceeded: 'reject' }) !== 'accept';
}
