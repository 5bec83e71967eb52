/**
 * CheckAvail's fallback ("R2") candidates, read tolerantly from answers written as real suppliers send them, not
 * from our schemas: the spec only says CheckAvail "returns ... fallback candidates to alternative suppliers" and shows
 * no form. Nulls, retyped fields, unknown fields and entries that are not packages are left out, never an error, and
 * the booking's CLI line offers each one as a new booking.
 */
import { MAX_FALLBACK_CANDIDATES } from '../../src/api/contract/index';
import { alternatives } from '../../src/operators/cli/book';
import { readCandidates } from '../../src/runtime/supplier/candidates';

test('packages with an id are kept, with their price, supplier and name where they read as such', () => {
  const answer = JSON.parse(`[
    {"ratePkgId": "alt-1", "totalRate": {"grossRate": {"currency": "EUR", "amount": "120.50"}},
     "originalRoomNaming": {"id": "d", "name": "Double", "supplier": 7}, "hotelId": 99, "extra": {"a": 1}},
    {"ratePkgId": "alt-2", "totalRate": {"grossRate": null, "netRate": {"currency": "EUR", "amount": 90}},
     "supplier": "platform-b", "name": null},
    {"ratePkgId": "alt-3", "price": {"currency": "USD", "amount": 10}},
    {"ratePkgId": "alt-4", "totalRate": {"grossRate": {"currency": "", "amount": "n/a"}}, "supplier": null}
  ]`) as unknown;
  expect(readCandidates(answer)).toEqual([
    { ratePkgId: 'alt-1', price: { currency: 'EUR', amount: 120.5 }, supplier: 7, name: 'Double' },
    { ratePkgId: 'alt-2', price: { currency: 'EUR', amount: 90 }, supplier: 'platform-b' },
    { ratePkgId: 'alt-3', price: { currency: 'USD', amount: 10 } },
    { ratePkgId: 'alt-4' },
  ]);
});

test.each([
  ['null', null],
  ['absent', undefined],
  ['an object, not a list', { ratePkgId: 'x' }],
  ['a string', 'alt-1,alt-2'],
  ['entries without an id', [{ totalRate: {} }, null, 7, 'alt-1', { ratePkgId: '' }, { ratePkgId: 12 }]],
])('%s: no candidates, no error', (_what, raw) => {
  expect(readCandidates(raw)).toEqual([]);
});

test('a long list is cut to the outcome bound', () => {
  const many = Array.from({ length: MAX_FALLBACK_CANDIDATES + 15 }, (_, i) => ({ ratePkgId: `alt-${i}` }));
  expect(readCandidates(many)).toHaveLength(MAX_FALLBACK_CANDIDATES);
});

test('the CLI offers each candidate as a new booking; an outcome without any shows nothing', () => {
  const lines = alternatives({
    kind: 'unavailable',
    candidates: [{ ratePkgId: 'alt-1', price: { currency: 'EUR', amount: 120.5 }, supplier: 7, name: 'Double' }],
  });
  expect(lines[0]).toMatch(/nothing booked/);
  expect(lines[1]).toBe('  - alt-1 (Double, 120.5 EUR, supplier 7): npm run book -- --rate-pkg alt-1');
  expect(alternatives({ kind: 'unavailable' })).toEqual([]);
  expect(alternatives({ kind: 'cancelled' })).toEqual([]);
});
