/**
 * The cancellation fee that applies at a moment, from an order's cancel policy, as pure arithmetic: the
 * order workflow quotes it, the sandbox supplier charges it, the tests check it. Zod-free (workflow code).
 *
 * The spec: "each CancelFee item gives the fee that applies up to the `until` time". So at time t the fee
 * is that of the earliest item whose `until` is still ahead; before the room's `refundableUntil` nothing
 * is charged; after the last `until` the policy says nothing, and the fee is unknown (a person decides),
 * never guessed as zero. An order's rooms are charged one by one and added up.
 */
import type { Money } from '../values';
import { parseTimestamp } from '../values/timestamp';

/** One room's policy, as the supplier gives it on the order's rooms. */
export interface RoomCancelPolicy {
  refundableUntil?: string;
  fees: Array<{ until: string; fee: Money }>;
}

export type CancelFeeBasis =
  /** Before every room's `refundableUntil`: free. */
  | 'free'
  /** From the rooms' cancelFees items. */
  | 'policy'
  /** No policy, or past its last `until` for some room: the fee is not known. */
  | 'unknown';

export interface CancelFeeQuote {
  /** The fee that applies now; null when unknown. */
  fee: Money | null;
  basis: CancelFeeBasis;
  /** ISO time until which this fee holds (the earliest moment any room's fee changes), when known. */
  changesAt?: string;
}

export function cancelFeeAt(policy: RoomCancelPolicy[] | undefined, atMs: number): CancelFeeQuote {
  if (!policy || policy.length === 0) return { fee: null, basis: 'unknown' };
  let total: Money | undefined;
  let changesAtMs = Infinity;
  let allFree = true;
  for (const room of policy) {
    const refundableUntilMs = room.refundableUntil ? parseTimestamp(room.refundableUntil) : NaN;
    if (!Number.isNaN(refundableUntilMs) && atMs <= refundableUntilMs) {
      changesAtMs = Math.min(changesAtMs, refundableUntilMs);
      continue;
    }
    const items = room.fees
      .map((f) => ({ untilMs: parseTimestamp(f.until), fee: f.fee }))
      .filter((f) => !Number.isNaN(f.untilMs))
      .sort((a, b) => a.untilMs - b.untilMs);
    const current = items.find((f) => atMs <= f.untilMs);
    if (!current) return { fee: null, basis: 'unknown' };
    allFree = false;
    changesAtMs = Math.min(changesAtMs, current.untilMs);
    if (total && total.currency !== current.fee.currency) return { fee: null, basis: 'unknown' };
    total = { currency: current.fee.currency, amount: round2((total?.amount ?? 0) + current.fee.amount) };
  }
  const changesAt = Number.isFinite(changesAtMs) ? { changesAt: new Date(changesAtMs).toISOString() } : {};
  if (allFree)
    return { fee: { currency: policy[0]?.fees[0]?.fee.currency ?? 'USD', amount: 0 }, basis: 'free', ...changesAt };
  return { fee: total ?? null, basis: 'policy', ...changesAt };
}

/** Whether two fees are the same (both unknown, or the same amount in the same currency). */
export function sameFee(a: Money | null | undefined, b: Money | null | undefined): boolean {
  if (a == null || b == null) return a == null && b == null;
  return a.currency === b.currency && Math.abs(a.amount - b.amount) < 0.005;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
