/**
 * The tests run in a time zone that is not UTC (jest.config.js sets TZ): a test of timestamp handling that passes
 * only because the machine is on UTC proves nothing. This fails if that setting is removed or not inherited.
 */
test('the process runs in a time zone with a non-zero offset, daylight saving included', () => {
  expect(process.env.TZ).toBe('America/New_York');
  expect(new Date(Date.UTC(2026, 11, 1)).getTimezoneOffset()).toBe(300);
  expect(new Date(Date.UTC(2026, 6, 1)).getTimezoneOffset()).toBe(240);
});

test('in this zone Date.parse reads a date-time without an offset as local time (what parseTimestamp avoids)', () => {
  expect(Date.parse('2026-12-01T14:00:00') - Date.parse('2026-12-01T14:00:00Z')).toBe(5 * 3600_000);
});
