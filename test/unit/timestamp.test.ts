/** parseTimestamp: ISO 8601 / RFC 3339 read the same in every time zone (this tier runs under America/New_York). */
import { parseTimestamp } from '../../src/values/timestamp';
import { cancelFeeAt } from '../../src/workflows/cancel-fee';

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

describe('the workflow rules read supplier timestamps as UTC whatever the zone', () => {
  const usd = (amount: number) => ({ currency: 'USD', amount });

  test("a cancel policy's times without an offset", () => {
    const room = { refundableUntil: '2026-12-01T00:00:00', fees: [{ until: '2026-12-05T12:00:00', fee: usd(40) }] };
    expect(cancelFeeAt([room], utc('2026-12-01T00:00:00Z'))).toMatchObject({ basis: 'free' });
    // Read in New York, refundableUntil would have been 05:00 UTC and this moment still free.
    expect(cancelFeeAt([room], utc('2026-12-01T01:00:00Z'))).toEqual({
      fee: usd(40),
      basis: 'policy',
      changesAt: '2026-12-05T12:00:00.000Z',
    });
    expect(cancelFeeAt([room], utc('2026-12-05T13:00:00Z'))).toEqual({ fee: null, basis: 'unknown' });
  });
});
