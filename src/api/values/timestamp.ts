/**
 * Timestamps as the supplier and callers write them (ISO 8601 / RFC 3339), read the same on every machine.
 *
 * `Date.parse` reads a date-time without an offset (`2026-12-01T14:00:00`) in the process's local time zone: a
 * worker under `TZ=America/New_York` moves such a check-in by five hours, and a workflow replayed on a worker in
 * another zone decides differently than it did. Here a value without an offset is read as UTC, as a date alone
 * already is. No imports: workflow code uses it.
 */

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * Epoch milliseconds of an ISO 8601 / RFC 3339 date (`2026-12-01`) or date-time (`2026-12-01T14:00:00.5+02:00`,
 * `T` or a space between), read as UTC when it has no offset; NaN for anything else, an impossible date included.
 * Fractions of a millisecond are dropped; a leap second (`:60`) is the first moment of the next minute.
 */
export function parseTimestamp(text: string): number {
  const m = TIMESTAMP.exec(text.trim());
  if (!m) return NaN;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
  // 24:00 is the end of the day (ISO 8601), and nothing past it.
  const endOfDay = hour === 24 && minute === 0 && second === 0 && ms === 0;
  if ((hour > 23 && !endOfDay) || minute > 59 || second > 60) return NaN;
  let offsetMinutes = 0;
  if (m[9]) {
    const [oh, om] = [Number(m[10]), Number(m[11] ?? 0)];
    if (oh > 23 || om > 59) return NaN;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offsetMinutes * 60_000;
}

/** The farthest any place's clock runs ahead of UTC: UTC+14 (the Line Islands). */
const EARLIEST_OFFSET_MS = 14 * 3600_000;

/**
 * Epoch milliseconds of a deadline at the earliest instant it can mean. With an offset it is that instant; without
 * one it is a hotel's local time in a zone nobody stated, read as if the hotel were as far east as any place is
 * (UTC+14), so a fee or the end of a free cancellation is never taken to come later than it may. NaN for anything
 * parseTimestamp refuses.
 */
export function parseDeadline(text: string): number {
  const at = parseTimestamp(text);
  const m = TIMESTAMP.exec(text.trim());
  return m && !m[8] && !m[9] ? at - EARLIEST_OFFSET_MS : at;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
