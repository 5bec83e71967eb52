/** parseTimestamp: ISO 8601 / RFC 3339 read the same in every time zone (this tier runs under America/New_York). */
import { parseDeadline, parseTimestamp } from '../../src/api/values/timestamp';
import { cancelFeeAt } from '../../src/runtime/rules/cancel-fee';

const utc = (iso: string) => new Date(iso).getTime();

describe('parseTimestamp', () => {
  test.each([
    ['2026-12-01T14:00:00', '2026-12-01T14:00:00.000Z'],
    ['2026-12-01T14:00', '2026-12-01T14:00:00.000Z'],
    ['2026-12-01 14:00:00', '2026-12-01T14:00:00.000Z'],
    ['2026-12-01t14:00:00z', '2026-12-01T14:00:00.000Z'],
    ['2026-12-01T14:00:00Z', '2026-12-01T14:00:00.000Z'],
    ['2026-12-01T14:00:00.5Z', '2026-12-01T14:00:00.500Z'],
    ['2026-12-01T14:00:00.123456789Z', '2026-12-01T14:00:00.123Z'],
    ['2026-12-01T14:00:00,25', '2026-12-01T14:00:00.250Z'],
    ['2026-12-01T14:00:00+02:00', '2026-12-01T12:00:00.000Z'],
    ['2026-12-01T14:00:00-05:30', '2026-12-01T19:30:00.000Z'],
    ['2026-12-01T14:00:00+0200', '2026-12-01T12:00:00.000Z'],
    ['2026-12-01T14:00:00+02', '2026-12-01T12:00:00.000Z'],
    ['2026-12-01T00:30:00+01:00', '2026-11-30T23:30:00.000Z'],
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-12-01T24:00:00', '2026-12-02T00:00:00.000Z'],
    ['2026-12-31T23:59:60Z', '2027-01-01T00:00:00.000Z'],
    [' 2026-12-01T14:00:00Z ', '2026-12-01T14:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseTimestamp(text)).toBe(utc(iso));
  });

  test('a value without an offset is UTC, not the local zone Date.parse would use', () => {
    expect(parseTimestamp('2026-12-01T14:00:00')).toBe(Date.parse('2026-12-01T14:00:00Z'));
    expect(parseTimestamp('2026-12-01T14:00:00')).not.toBe(Date.parse('2026-12-01T14:00:00'));
  });

  test.each([
    '',
    'soon',
    '2026-13-01',
    '2026-02-30',
    '2025-02-29',
    '2026-12-00',
    '2026-12-01T25:00:00',
    '2026-12-01T24:00:01',
    '2026-12-01T14:60:00',
    '2026-12-01T14:00:61',
    '2026-12-01T14:00:00+24:00',
    '2026-12-01T14:00:00+02:60',
    '2026-12-01T14',
    '2026-12-01T',
    '26-12-01',
    '2026/12/01',
    '20261201',
    'Tue, 01 Dec 2026 14:00:00 GMT',
    '2026-12-01T14:00:00 UTC',
    '1796133600000',
  ])('%j is not a timestamp', (text) => {
    expect(parseTimestamp(text)).toBeNaN();
  });
});

describe("the workflow rules read a cancel policy's times the same in every zone, at the earliest instant they can mean", () => {
  const usd = (amount: number) => ({ currency: 'USD', amount });
  const room = { refundableUntil: '2026-12-01T00:00:00', fees: [{ until: '2026-12-05T12:00:00', fee: usd(40) }] };

  test("without an offset, a time is the hotel's own in a zone nobody stated: read as UTC+14, the farthest east", () => {
    // Free until midnight at the hotel: at the earliest, 10:00 UTC the day before.
    expect(cancelFeeAt([room], utc('2026-11-30T09:59:00Z'))).toMatchObject({
      basis: 'free',
      changesAt: '2026-11-30T10:00:00.000Z',
    });
    // Read as UTC (as before), 10:01 UTC would still have been quoted free; a hotel in UTC+14 would charge 40.
    expect(cancelFeeAt([room], utc('2026-11-30T10:01:00Z'))).toEqual({
      fee: usd(40),
      basis: 'policy',
      changesAt: '2026-12-04T22:00:00.000Z',
    });
    expect(cancelFeeAt([room], utc('2026-12-04T22:01:00Z'))).toEqual({ fee: null, basis: 'unknown' });
  });

  test('with an offset, or Z, a time is that instant', () => {
    const stated = {
      refundableUntil: '2026-12-01T00:00:00+01:00',
      fees: [{ until: '2026-12-05T12:00:00Z', fee: usd(40) }],
    };
    expect(cancelFeeAt([stated], utc('2026-11-30T22:59:00Z'))).toMatchObject({ basis: 'free' });
    expect(cancelFeeAt([stated], utc('2026-11-30T23:01:00Z'))).toMatchObject({
      fee: usd(40),
      changesAt: '2026-12-05T12:00:00.000Z',
    });
  });

  test('parseDeadline: 14 hours earlier without an offset, the instant with one, NaN for what is no time', () => {
    expect(parseDeadline('2026-12-01T00:00:00')).toBe(utc('2026-11-30T10:00:00Z'));
    expect(parseDeadline('2026-12-01')).toBe(utc('2026-11-30T10:00:00Z'));
    expect(parseDeadline('2026-12-01T00:00:00Z')).toBe(utc('2026-12-01T00:00:00Z'));
    expect(parseDeadline('2026-12-01T00:00:00-05:00')).toBe(utc('2026-12-01T05:00:00Z'));
    expect(parseDeadline('not a date')).toBeNaN();
  });
});
