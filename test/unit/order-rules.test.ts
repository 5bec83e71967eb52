/** The pure rules of an order's life: the cancellation fee at a moment, and the reconciliation verdict. */
import { cancelFeeAt, chargedWithin, feeAfterChange, sameFee } from '../../src/runtime/rules/cancel-fee';
import { classifyOrder, slices, type BookingView } from '../../src/runtime/rules/sweep-classify';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';

const usd = (amount: number) => ({ currency: 'USD', amount });
const at = (iso: string) => Date.parse(iso);

describe('cancelFeeAt', () => {
  const room = {
    refundableUntil: '2026-12-01T00:00:00Z',
    fees: [
      { until: '2026-12-10T00:00:00Z', fee: usd(100) },
      { until: '2026-12-05T00:00:00Z', fee: usd(40) },
    ],
  };

  test('free until refundableUntil, then the earliest item still ahead, then unknown', () => {
    expect(cancelFeeAt([room], at('2026-11-30T00:00:00Z'))).toEqual({
      fee: usd(0),
      basis: 'free',
      changesAt: '2026-12-01T00:00:00.000Z',
    });
    expect(cancelFeeAt([room], at('2026-12-03T00:00:00Z'))).toEqual({
      fee: usd(40),
      basis: 'policy',
      changesAt: '2026-12-05T00:00:00.000Z',
    });
    expect(cancelFeeAt([room], at('2026-12-05T00:00:00Z')).fee).toEqual(usd(40));
    expect(cancelFeeAt([room], at('2026-12-07T00:00:00Z')).fee).toEqual(usd(100));
    expect(cancelFeeAt([room], at('2026-12-11T00:00:00Z'))).toEqual({ fee: null, basis: 'unknown' });
  });

  test('rooms add up; a free room adds nothing; no policy or mixed currencies is unknown', () => {
    const free = { refundableUntil: '2027-01-01T00:00:00Z', fees: [] };
    expect(cancelFeeAt([room, room, free], at('2026-12-03T00:00:00Z')).fee).toEqual(usd(80));
    expect(cancelFeeAt(undefined, 0)).toEqual({ fee: null, basis: 'unknown' });
    const eur = { fees: [{ until: '2026-12-10T00:00:00Z', fee: { currency: 'EUR', amount: 5 } }] };
    expect(cancelFeeAt([room, eur], at('2026-12-03T00:00:00Z')).basis).toBe('unknown');
  });

  test('feeAfterChange: the fee after a change within the margin, nothing when the change is further away', () => {
    const margin = 120_000;
    const freeNow = cancelFeeAt([room], at('2026-11-30T23:59:00Z'));
    expect(feeAfterChange([room], freeNow, at('2026-11-30T23:59:00Z'), margin)).toMatchObject({ fee: usd(40) });
    const earlier = cancelFeeAt([room], at('2026-11-30T23:57:00Z'));
    expect(feeAfterChange([room], earlier, at('2026-11-30T23:57:00Z'), margin)).toBeUndefined();
    // Past the last item the fee is unknown: the change to it counts like any other.
    const last = cancelFeeAt([room], at('2026-12-09T23:59:30Z'));
    expect(feeAfterChange([room], last, at('2026-12-09T23:59:30Z'), margin)).toEqual({ fee: null, basis: 'unknown' });
  });

  test('sameFee: amounts to the cent, currencies, and unknown only equals unknown', () => {
    expect(sameFee(usd(10), usd(10.001))).toBe(true);
    expect(sameFee(usd(10), { currency: 'EUR', amount: 10 })).toBe(false);
    expect(sameFee(null, null)).toBe(true);
    expect(sameFee(null, usd(0))).toBe(false);
  });
});

describe('classifyOrder', () => {
  const s = defaultSupplierProfile.orderStatus;
  const none = { status: 'none' } as const;
  const view = (booking: BookingView['booking'], order: BookingView['order'] = none): BookingView => ({
    booking,
    order,
  });

  test.each([
    ['no booking workflow', 2, view(none), 'orphan'],
    ['a terminated booking', 2, view({ status: 'closed', stage: 'booking' }), 'orphan'],
    ['a booking that ended price-rejected', 1, view({ status: 'completed', stage: 'price-rejected' }), 'orphan'],
    [
      'an orphan its order workflow is cancelling',
      2,
      view(none, { status: 'running', stage: 'order-cancelling' }),
      'ok',
    ],
    ['an orphan its order workflow cancelled', 3, view(none, { status: 'completed', stage: 'order-cancelled' }), 'ok'],
    ['an orphan whose cancel failed', 5, view(none, { status: 'completed', stage: 'order-cancel-failed' }), 'orphan'],
    ['a running booking', 1, view({ status: 'running', stage: 'recovering' }), 'ok'],
    ['confirmed and confirmed', 2, view({ status: 'completed', stage: 'confirmed' }), 'ok'],
    ['confirmed, order pending', 1, view({ status: 'completed', stage: 'confirmed' }), 'mismatch'],
    ['confirmed, order failed', 4, view({ status: 'completed', stage: 'confirmed' }), 'mismatch'],
    ['confirmed, cancelled by no order workflow', 3, view({ status: 'completed', stage: 'confirmed' }), 'mismatch'],
    [
      'confirmed, cancelled by its order workflow',
      3,
      view({ status: 'completed', stage: 'confirmed' }, { status: 'completed', stage: 'order-cancelled' }),
      'ok',
    ],
    [
      'confirmed, order workflow still following',
      3,
      view({ status: 'completed', stage: 'confirmed' }, { status: 'running', stage: 'order-cancelling' }),
      'ok',
    ],
    ['failed and failed', 4, view({ status: 'completed', stage: 'failed' }), 'ok'],
    ['failed but the order is confirmed', 2, view({ status: 'completed', stage: 'failed' }), 'mismatch'],
    ['unresolved', 2, view({ status: 'completed', stage: 'unresolved' }), 'mismatch'],
  ] as const)('%s → %s', (_name, status, v, verdict) => {
    expect(classifyOrder(status, v, s).verdict).toBe(verdict);
  });
});

test('slices cover the window without gaps, the last one short', () => {
  const parts = slices(at('2026-11-23T00:00:00Z'), at('2026-11-23T02:30:00Z'), 3600_000);
  expect(parts).toEqual([
    { start: '2026-11-23T00:00:00.000Z', end: '2026-11-23T01:00:00.000Z' },
    { start: '2026-11-23T01:00:00.000Z', end: '2026-11-23T02:00:00.000Z' },
    { start: '2026-11-23T02:00:00.000Z', end: '2026-11-23T02:30:00.000Z' },
  ]);
});

describe('the service fee a Cancel was charged, against what was accepted', () => {
  const usd = (amount: number) => ({ currency: 'USD', amount });
  test('nothing charged is within anything accepted', () => {
    expect(chargedWithin({ kind: 'free' }, usd(0))).toBe(true);
    expect(chargedWithin({ kind: 'fee', fee: usd(0) }, { currency: 'EUR', amount: 0 })).toBe(true);
  });
  test('a fee above the accepted one, or any fee for a free cancellation, is not', () => {
    expect(chargedWithin({ kind: 'fee', fee: usd(40) }, usd(40))).toBe(true);
    expect(chargedWithin({ kind: 'fee', fee: usd(40) }, usd(50))).toBe(false);
    expect(chargedWithin({ kind: 'free' }, usd(1))).toBe(false);
    expect(chargedWithin({ kind: 'fee', fee: usd(40) }, { currency: 'EUR', amount: 10 })).toBe(false);
  });
  test('a cancellation at any fee, or at an unknown fee accepted, takes what is charged', () => {
    expect(chargedWithin({ kind: 'any' }, usd(500))).toBe(true);
    expect(chargedWithin({ kind: 'fee', fee: null }, usd(500))).toBe(true);
  });
});
