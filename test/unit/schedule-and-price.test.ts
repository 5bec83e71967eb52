/** The recovery schedule and the price-change decision are pure functions: checked here exhaustively. */
import { RecoveryPolicy } from '../../src/api/contract/index';
import { pollOffsetSeconds } from '../../src/runtime/rules/schedule';
import { confirmedAboveAccepted, judgePrice } from '../../src/runtime/rules/price';

describe('recovery schedule', () => {
  const policy = RecoveryPolicy.parse({});

  test('polls at once, after 30 s, 1, 2, 4 and 8 min, then every 10 min (spec section 8)', () => {
    const offsets = Array.from({ length: 9 }, (_, i) => pollOffsetSeconds(i, policy));
    expect(offsets).toEqual([0, 30, 90, 210, 450, 930, 1530, 2130, 2730]);
  });

  test('a scaled schedule keeps its shape', () => {
    const scaled = RecoveryPolicy.parse({ delaysSeconds: [3, 6, 12], repeatEverySeconds: 60 });
    expect([0, 1, 2, 3, 4, 5].map((i) => pollOffsetSeconds(i, scaled))).toEqual([0, 3, 9, 21, 81, 141]);
  });
});

describe('price-change decision', () => {
  const usd = (amount: number) => ({ currency: 'USD', amount });

  test('no expected price: any current price is accepted', () => {
    expect(judgePrice(undefined, usd(999), undefined)).toBe('accept');
  });
  test('same or lower price is accepted whatever the policy', () => {
    expect(judgePrice(usd(100), usd(100), undefined)).toBe('accept');
    expect(judgePrice(usd(100), usd(80), { onExceeded: 'ask' })).toBe('accept');
  });
  test('an increase without allowance goes to onExceeded (reject by default)', () => {
    expect(judgePrice(usd(100), usd(100.01), undefined)).toBe('reject');
    expect(judgePrice(usd(100), usd(101), { onExceeded: 'ask' })).toBe('ask');
  });
  test('an increase within every allowance set is accepted; beyond one of them is not', () => {
    expect(judgePrice(usd(100), usd(105), { maxIncreasePercent: 5 })).toBe('accept');
    expect(judgePrice(usd(100), usd(105.5), { maxIncreasePercent: 5 })).toBe('reject');
    expect(judgePrice(usd(100), usd(108), { maxIncreaseAmount: 10 })).toBe('accept');
    expect(judgePrice(usd(100), usd(108), { maxIncreaseAmount: 10, maxIncreasePercent: 5 })).toBe('reject');
    expect(judgePrice(usd(100), usd(104), { maxIncreaseAmount: 10, maxIncreasePercent: 5, onExceeded: 'ask' })).toBe(
      'accept',
    );
  });
  test('another currency or a missing price cannot be compared: treated as exceeded', () => {
    expect(judgePrice(usd(100), { currency: 'EUR', amount: 90 }, { maxIncreasePercent: 50 })).toBe('reject');
    expect(judgePrice(usd(100), undefined, { onExceeded: 'ask' })).toBe('ask');
  });
});

describe('the confirmed price against the accepted one', () => {
  const usd = (amount: number) => ({ currency: 'USD', amount });

  test('the accepted price, a lower one, or a cent of rounding over it: not above', () => {
    expect(confirmedAboveAccepted(usd(240), usd(240), undefined)).toBe(false);
    expect(confirmedAboveAccepted(usd(240), usd(200), undefined)).toBe(false);
    expect(confirmedAboveAccepted(usd(240), usd(240.01), undefined)).toBe(false);
  });
  test("above it, beyond the caller's allowance: above", () => {
    expect(confirmedAboveAccepted(usd(240), usd(240.02), undefined)).toBe(true);
    expect(confirmedAboveAccepted(usd(240), usd(300), { maxIncreasePercent: 10, onExceeded: 'ask' })).toBe(true);
  });
  test("within the caller's own allowance: not above", () => {
    expect(confirmedAboveAccepted(usd(240), usd(250), { maxIncreasePercent: 10 })).toBe(false);
  });
  test('nothing to compare (no price, another currency): no verdict', () => {
    expect(confirmedAboveAccepted(undefined, usd(300), undefined)).toBeUndefined();
    expect(confirmedAboveAccepted(usd(240), undefined, undefined)).toBeUndefined();
    expect(confirmedAboveAccepted(usd(240), { currency: 'EUR', amount: 300 }, undefined)).toBeUndefined();
  });
});
