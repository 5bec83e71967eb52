/** The spec copy the drift tests build answers from is the project's spec, word for word. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SPEC_PATH } from '../fixtures/spec-shapes';

const SHARED = path.resolve(__dirname, '../../../shared/spec/hotel-booking-interface.md');

test('test/fixtures/spec matches ../shared/spec (where the shared folder sits beside the clone)', () => {
  const copy = readFileSync(SPEC_PATH, 'utf8');
  expect(copy).toContain('**HotelOrder**');
  if (!existsSync(SHARED)) return;
  expect(copy).toBe(readFileSync(SHARED, 'utf8'));
});
