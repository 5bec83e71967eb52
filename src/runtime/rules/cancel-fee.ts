/**
 * The cancellation fee that applies at a moment, from an order's cancel policy, as pure arithmetic: the
 * order workflow quotes it, the sandbox supplier charges it, the tests check it. Zod-free (workflow code).
 *
 * The spec: "each CancelFee item gives the fee that applies up to the `until` time". So at time t the fee
 * is that of the earliest item whose `until` is still ahead; before the room's `refundableUntil` nothing
 * is charged; after the last `until` the policy says nothing, and the fee is unknown (a person decides),
 * never guessed as zero. An order's rooms are charged one by one and added up. A time without an offset is read at
 * the earliest instant it can mean (parseDeadline): quoting "free" minutes after a hotel's free window closed is
 * the mistake that costs a guest money.
 */
import type { Money } from '../../api/values/index';
import { parseDeadline } from '../../api/values/timestamp';

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

/**
 * The fee at `atMs`. `currency` is the order's own (its price's): a free cancellation is quoted as 0 in it, not
 * in some other currency a caller would then have to echo back.
 */
export function cancelFeeAt(policy: RoomCancelPolicy[] | undefined, atMs: number, currency?: string): CancelFeeQuote {
  if (!policy || policy.length === 0) return { fee: null, basis: 'unknown' };
  let total: Money | undefined;
  let changesAtMs = Infinity;
  let allFree = true;
  for (const room of policy) {
    const refundableUntilMs = room.refundableUntil ? parseDeadline(room.refundableUntil) : NaN;
    if (!Number.isNaN(refundableUntilMs) && atMs <= refundableUntilMs) {
      changesAtMs = Math.min(changesAtMs, refundableUntilMs);
      continue;
    }
    const items = room.fees
      .map((f) => ({ untilMs: parseDeadline(f.until), fee: f.fee }))
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
    return {
      fee: { currency: currency ?? policy.find((r) => r.fees[0])?.fees[0]?.fee.currency ?? 'USD', amount: 0 },
      basis: 'free',
      ...changesAt,
    };
  return { fee: total ?? null, basis: 'policy', ...changesAt };
}

/**
 * The fee a send made at `atMs` may be charged besides `quote`'s: when the fee changes within `marginMs`, the one
 * after the change (a send can land after it: the supplier's clock, the trip, its processing). Undefined when no
 * change is that close.
 */
export function feeAfterChange(
  policy: RoomCancelPolicy[] | undefined,
  quote: CancelFeeQuote,
  atMs: number,
  marginMs: number,
  currency?: string,
): CancelFeeQuote | undefined {
  if (!quote.changesAt) return undefined;
  const changesAtMs = Date.parse(quote.changesAt);
  if (changesAtMs - atMs > marginMs) return undefined;
  return cancelFeeAt(policy, changesAtMs + 1, currency);
}

/** Whether two fees are the same (both unknown, both nothing in whatever currency, or the same amount and currency). */
export function sameFee(a: Money | null | undefined, b: Money | null | undefined): boolean {
  if (a == null || b == null) return a == null && b == null;
  if (isZero(a) && isZero(b)) return true;
  return a.currency === b.currency && Math.abs(a.amount - b.amount) < 0.005;
}

/** What a cancellation was agreed at: a fee (null: an unknown one), only while free, or at any fee. */
export type AcceptedFee = { kind: 'fee'; fee: Money | null } | { kind: 'free' } | { kind: 'any' };

/**
 * Whether a quote is within what was accepted; checked before every Cancel send and re-send, since a fee deadline
 * may pass between them. A fee accepted as unknown (null) accepts whatever applies; a known fee accepts that fee or
 * less in its currency (or nothing at all), never an unknown one.
 */
export function feeWithin(accepted: AcceptedFee, quote: CancelFeeQuote): boolean {
  switch (accepted.kind) {
    case 'any':
      return true;
    case 'free':
      return quote.basis === 'free';
    case 'fee': {
      const { fee } = accepted;
      const now = quote.fee;
      if (fee === null) return true;
      if (now === null) return false;
      if (isZero(now)) return true;
      return now.currency === fee.currency && now.amount <= fee.amount + 0.005;
    }
  }
}

/**
 * Whether the service fee a supplier answered a Cancel with is within what was accepted: the same rule as a quote
 * (feeWithin), read as a quote of that fee. Nothing charged is free.
 */
export function chargedWithin(accepted: AcceptedFee, charged: Money): boolean {
  return feeWithin(accepted, { fee: charged, basis: isZero(charged) ? 'free' : 'policy' });
}

function isZero(m: Money): boolean {
  return Math.abs(m.amount) < 0.005;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
