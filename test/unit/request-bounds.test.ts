/**
 * Every text and list field a caller sends is bounded (REQUEST_LIMITS): a field over its bound is refused, named by
 * its path, by the worker's check and by the client helper alike, and a field at its bound passes. The bounds apply
 * to what a caller sends only: the supplier's answers are read tolerantly, whatever their lengths.
 */
import { REQUEST_LIMITS, validateBookingRequest } from '../../src/api/client/index';
import { HotelOrder } from '../../src/runtime/supplier/schemas';

const REQUEST = {
  customerReferenceNo: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  ratePkgId: 'pkg-1',
  holder: { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', phone: { countryCode: '+1', number: '555' } },
  guests: [{ roomIndex: 0, firstName: 'Ann', lastName: 'Lee', nationalityCode: 'US', age: 34, isChild: false }],
};
type Request = typeof REQUEST & Record<string, unknown>;

function issuesOf(change: (r: Request) => void): string[] {
  const request = structuredClone(REQUEST) as Request;
  change(request);
  const checked = validateBookingRequest(request);
  return checked.valid ? [] : checked.issues;
}

const long = (n: number) => 'x'.repeat(n);

test('a 100,000-character first name is refused, naming the field and its bound', () => {
  const issues = issuesOf((r) => (r.holder.firstName = long(100_000)));
  expect(issues).toHaveLength(1);
  expect(issues[0]).toMatch(/^holder\.firstName: .*100/);
});

test.each([
  ['holder.lastName', (r: Request) => (r.holder.lastName = long(REQUEST_LIMITS.name + 1))],
  ['holder.email', (r: Request) => (r.holder.email = `${long(REQUEST_LIMITS.email)}@example.com`)],
  ['holder.phone.countryCode', (r: Request) => (r.holder.phone.countryCode = long(REQUEST_LIMITS.code + 1))],
  ['holder.phone.number', (r: Request) => (r.holder.phone.number = long(REQUEST_LIMITS.phoneNumber + 1))],
  ['guests.0.firstName', (r: Request) => (r.guests[0]!.firstName = long(REQUEST_LIMITS.name + 1))],
  ['guests.0.nationalityCode', (r: Request) => (r.guests[0]!.nationalityCode = long(REQUEST_LIMITS.code + 1))],
  ['guests.0.roomIndex', (r: Request) => (r.guests[0]!.roomIndex = REQUEST_LIMITS.rooms)],
  ['guests.0.age', (r: Request) => (r.guests[0]!.age = 151)],
  ['guests', (r: Request) => (r.guests = Array.from({ length: REQUEST_LIMITS.guests + 1 }, () => r.guests[0]!))],
  ['ratePkgId', (r: Request) => (r.ratePkgId = long(REQUEST_LIMITS.id + 1))],
  ['sessionId', (r: Request) => (r.sessionId = long(REQUEST_LIMITS.id + 1))],
  ['context.language', (r: Request) => (r.context = { language: long(REQUEST_LIMITS.header + 1) })],
  ['context.test', (r: Request) => (r.context = { test: long(REQUEST_LIMITS.header + 1) })],
])('%s over its bound is refused by name', (field, change) => {
  const issues = issuesOf(change);
  expect(issues).toHaveLength(1);
  expect(issues[0]!.startsWith(`${field}: `)).toBe(true);
});

test('every field at its bound passes', () => {
  const issues = issuesOf((r) => {
    r.holder.firstName = long(REQUEST_LIMITS.name);
    r.holder.phone.number = long(REQUEST_LIMITS.phoneNumber);
    r.guests = Array.from({ length: REQUEST_LIMITS.guests }, () => ({
      ...REQUEST.guests[0]!,
      roomIndex: REQUEST_LIMITS.rooms - 1,
      lastName: long(REQUEST_LIMITS.name),
    }));
    r.ratePkgId = long(REQUEST_LIMITS.id);
  });
  expect(issues).toEqual([]);
});

test("the supplier's answers are not held to the request's bounds", () => {
  const order = {
    customerReferenceNo: REQUEST.customerReferenceNo,
    status: 2,
    holder: { firstName: long(1000), lastName: long(1000) },
    guests: [{ firstName: long(1000), nationalityCode: long(20) }],
  };
  expect(HotelOrder.safeParse(order).success).toBe(true);
});
