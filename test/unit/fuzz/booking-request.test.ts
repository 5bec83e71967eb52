/** Proves every workflow input is a valid BookingRequest or is rejected, before Temporal, with issues naming fields. */
import fc from 'fast-check';
import type { Client } from '@temporalio/client';
import { BookingRequest, InvalidBookingRequestError, startBooking } from '../../../src/api/client/index';
import { describeIssues } from '../../../src/api/values/index';

const NUM_RUNS = 200;
const KNOWN_FIELDS = Object.keys(BookingRequest.shape);

const VALID: BookingRequest = {
  customerReferenceNo: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  ratePkgId: 'pkg-1',
  holder: {
    firstName: 'Ann',
    lastName: 'Lee',
    email: 'ann@example.com',
    phone: { countryCode: '+1', countryNumber: 1, number: '5550100' },
  },
  guests: [
    { roomIndex: 0, firstName: 'Ann', lastName: 'Lee', nationalityCode: 'US', age: 34, isChild: false },
    { roomIndex: 0, firstName: 'Bo', lastName: 'Lee', nationalityCode: 'US', age: 6, isChild: true },
  ],
  sessionId: 'sess-1',
  expectedPrice: { currency: 'USD', amount: 200 },
  priceChangePolicy: { maxIncreasePercent: 5, maxIncreaseAmount: 10, onExceeded: 'ask', approvalTimeoutSeconds: 60 },
  context: { currency: 'USD', language: 'en-US', ip: '203.0.113.5', test: 'scenario=available' },
  // Within RECOVERY_BOUNDS, near the floors: a mutated value is often refused by a bound, which must name it too.
  recovery: {
    delaysSeconds: [5, 10],
    repeatEverySeconds: 60,
    rebookAfterSeconds: 600,
    maxBookAttempts: 3,
    deadlineSeconds: 1200,
  },
};

const GUEST_FIELDS = ['roomIndex', 'firstName', 'lastName', 'nationalityCode', 'age', 'isChild'];

/** Every required field of this request, nested ones included, as the path describeIssues prints. */
function requiredPaths(request: BookingRequest): string[] {
  return [
    'customerReferenceNo',
    'ratePkgId',
    'holder',
    ...['firstName', 'lastName', 'email', 'phone', 'phone.countryCode', 'phone.number'].map((f) => `holder.${f}`),
    'guests',
    ...request.guests.flatMap((_, i) => GUEST_FIELDS.map((f) => `guests.${i}.${f}`)),
    ...(request.expectedPrice ? ['expectedPrice.currency', 'expectedPrice.amount'] : []),
  ];
}

// --- Arbitraries ------------------------------------------------------------------------------------------

const nonEmpty = fc.string({ minLength: 1, maxLength: 10 });
const email = fc
  .tuple(
    fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/),
    fc.stringMatching(/^[a-z]{1,8}$/),
    fc.constantFrom('com', 'org', 'travel'),
  )
  .map(([user, domain, tld]) => `${user}@${domain}.${tld}`);
const guest = fc.record({
  roomIndex: fc.nat(4),
  firstName: nonEmpty,
  lastName: nonEmpty,
  nationalityCode: fc.constantFrom('US', 'CN', 'AE', 'DE'),
  age: fc.nat(110),
  isChild: fc.boolean(),
});
const validRequest: fc.Arbitrary<BookingRequest> = fc.record(
  {
    customerReferenceNo: fc.uuid({ version: 4 }),
    ratePkgId: nonEmpty,
    holder: fc.record({
      firstName: nonEmpty,
      lastName: nonEmpty,
      email,
      phone: fc.record(
        {
          countryCode: fc.constantFrom('+1', '+86', '+971'),
          countryNumber: fc.nat(999),
          number: fc.stringMatching(/^[0-9]{4,12}$/),
        },
        { requiredKeys: ['countryCode', 'number'] },
      ),
    }),
    guests: fc.array(guest, { minLength: 1, maxLength: 3 }),
    sessionId: nonEmpty,
    expectedPrice: fc.record({
      currency: fc.constantFrom('USD', 'EUR'),
      amount: fc.double({ min: 0, max: 1e6, noNaN: true }),
    }),
    priceChangePolicy: fc.record(
      { maxIncreasePercent: fc.nat(100), onExceeded: fc.constantFrom('reject' as const, 'ask' as const) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['customerReferenceNo', 'ratePkgId', 'holder', 'guests'] },
);

type Path = (string | number)[];

/** Every path into a value, the root included. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  }
  return out;
}

/** The object or array holding the node at a non-empty path, in a copy of `value`. */
function parentIn(copy: unknown, path: Path): Record<string | number, unknown> {
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  return parent;
}

type Mutation =
  | { kind: 'drop' | 'undefined'; seed: number }
  | { kind: 'set'; seed: number; value: unknown }
  | { kind: 'extra'; seed: number; key: string; value: unknown }
  | { kind: 'field'; field: 'customerReferenceNo' | 'email' | 'age' | 'guests'; value: unknown };

/** Applies one mutation; `seed` picks the node among the current paths, so mutations compose and shrink. */
function mutate(value: unknown, m: Mutation): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  if (m.kind === 'field') {
    if (typeof copy !== 'object' || copy === null) return copy;
    if (m.field === 'customerReferenceNo' || m.field === 'guests') copy[m.field] = m.value;
    const holder = copy.holder as Record<string, unknown> | undefined;
    if (m.field === 'email' && holder && typeof holder === 'object') holder.email = m.value;
    const guests = copy.guests as Record<string, unknown>[] | undefined;
    if (m.field === 'age' && Array.isArray(guests) && guests[0] && typeof guests[0] === 'object')
      guests[0].age = m.value;
    return copy;
  }
  const paths = pathsOf(copy);
  if (m.kind === 'extra') {
    const objects = paths.filter((p) => {
      const node = p.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], copy);
      return node !== null && typeof node === 'object' && !Array.isArray(node);
    });
    if (objects.length === 0) return copy;
    const path = objects[m.seed % objects.length]!;
    const node = path.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], copy) as Record<
      string,
      unknown
    >;
    node[`x_${m.key}`] = m.value;
    return copy;
  }
  const path = paths[m.seed % paths.length]!;
  if (path.length === 0) return m.kind === 'set' ? m.value : undefined;
  const parent = parentIn(copy, path);
  const last = path[path.length - 1]!;
  if (m.kind === 'set') parent[last] = m.value;
  else if (m.kind === 'undefined') parent[last] = undefined;
  else if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
  return copy;
}

const wrongValue = fc.oneof(
  fc.constantFrom<unknown>(null, '', ' ', 0, -1, 1.5, -0.5, true, [], {}, 'not-a-uuid', Number.MAX_SAFE_INTEGER + 2),
  fc.jsonValue({ maxDepth: 2 }),
);
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constantFrom('drop' as const, 'undefined' as const), seed: fc.nat() }),
  fc.record({ kind: fc.constant('set' as const), seed: fc.nat(), value: wrongValue }),
  fc.record({
    kind: fc.constant('extra' as const),
    seed: fc.nat(),
    key: fc.string({ maxLength: 6 }),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
  fc.record({
    kind: fc.constant('field' as const),
    field: fc.constant('customerReferenceNo' as const),
    value: fc.oneof(
      fc.string(),
      fc.uuid().map((u) => u.toUpperCase().replace(/-/g, '')),
      fc.constant(''),
    ),
  }),
  fc.record({
    kind: fc.constant('field' as const),
    field: fc.constant('email' as const),
    value: fc.oneof(fc.string(), fc.constantFrom('ann@', '@example.com', 'ann example.com', 'ann@@example.com')),
  }),
  fc.record({
    kind: fc.constant('field' as const),
    field: fc.constant('age' as const),
    value: fc.integer({ max: -1 }),
  }),
  fc.record({ kind: fc.constant('field' as const), field: fc.constant('guests' as const), value: fc.constant([]) }),
);

const mutatedRequest = fc
  .tuple(fc.oneof(fc.constant(VALID), validRequest), fc.array(mutationArb, { minLength: 1, maxLength: 3 }))
  .map(([base, mutations]) => mutations.reduce<unknown>(mutate, base));

/** Anything a caller in another language might send as the workflow's input. */
const inputArb: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: validRequest, weight: 2 },
  { arbitrary: mutatedRequest, weight: 6 },
  { arbitrary: fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), fc.anything({ maxDepth: 2 })), weight: 1 },
  {
    arbitrary: fc.anything({ withNullPrototype: true, withMap: true, withSet: true, withBoxedValues: true }),
    weight: 1,
  },
  { arbitrary: fc.constantFrom<unknown>(undefined, null, 0, '', 'booking', [], [VALID], true), weight: 1 },
);

// --- Helpers ----------------------------------------------------------------------------------------------

/** The part of a `path: message` issue before the first `: `. */
function pathOf(issue: string): string {
  const i = issue.indexOf(': ');
  return i < 0 ? '' : issue.slice(0, i);
}

/** What zod treats as an object to look inside: anything but null, arrays and primitives. */
function isObjectInput(input: unknown): boolean {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

class TemporalTouched extends Error {}

/** A stand-in for the Temporal client that fails the moment anything reaches it. */
function guardClient(): { client: Client; calls: () => number } {
  let calls = 0;
  const touched = () => {
    calls++;
    throw new TemporalTouched('the Temporal client was used');
  };
  const client = { workflow: { start: async () => touched(), getHandle: touched } } as unknown as Client;
  return { client, calls: () => calls };
}

function expectIssuesNameFields(input: unknown, issues: string[]): void {
  expect(issues.length).toBeGreaterThan(0);
  for (const issue of issues) {
    const path = pathOf(issue);
    expect(issue.length).toBeGreaterThan(path.length + 2);
    if (isObjectInput(input)) {
      // A field-level problem: the path starts at one of the request's own fields.
      expect(KNOWN_FIELDS).toContain(path.split('.')[0]);
    } else {
      expect(path).toBe('(root)');
    }
  }
}

// --- Properties -------------------------------------------------------------------------------------------

test('the fixture and the valid arbitrary are valid, and extra unknown fields alone keep them valid', () => {
  expect(BookingRequest.safeParse(VALID).success).toBe(true);
  fc.assert(
    fc.property(
      validRequest,
      fc.array(
        fc.record({
          kind: fc.constant('extra' as const),
          seed: fc.nat(),
          key: fc.string({ maxLength: 6 }),
          value: fc.jsonValue(),
        }),
        { maxLength: 3 },
      ),
      (request, extras) => {
        expect(BookingRequest.safeParse(request).success).toBe(true);
        expect(BookingRequest.safeParse(extras.reduce<unknown>(mutate, request)).success).toBe(true);
      },
    ),
    { numRuns: NUM_RUNS },
  );
});

test('BookingRequest either accepts the input or every issue names a field (or the root, for a non-object)', () => {
  fc.assert(
    fc.property(inputArb, (input) => {
      const parsed = BookingRequest.safeParse(input);
      if (!parsed.success) expectIssuesNameFields(input, describeIssues(parsed.error));
    }),
    { numRuns: NUM_RUNS },
  );
});

test('startBooking rejects invalid input before using Temporal, with an error naming the same fields', async () => {
  await fc.assert(
    fc.asyncProperty(inputArb, async (input) => {
      const guard = guardClient();
      const error = await startBooking(guard.client, input as BookingRequest).then(
        () => undefined,
        (e: unknown) => e,
      );
      const parsed = BookingRequest.safeParse(input);
      if (parsed.success) {
        // Valid input goes on to start the workflow, which is where the guard stops it.
        expect(error).toBeInstanceOf(TemporalTouched);
        expect(guard.calls()).toBe(1);
        return;
      }
      expect(guard.calls()).toBe(0);
      expect(error).toBeInstanceOf(InvalidBookingRequestError);
      const rejected = error as InvalidBookingRequestError;
      expect(rejected.type).toBe('InvalidBookingRequest');
      expect(rejected.issues).toEqual(describeIssues(parsed.error));
      expectIssuesNameFields(input, rejected.issues);
      for (const issue of rejected.issues) expect(rejected.message).toContain(pathOf(issue));
    }),
    { numRuns: NUM_RUNS },
  );
});

test('one required field set to undefined yields one issue, naming exactly that field', () => {
  fc.assert(
    fc.property(fc.oneof(fc.constant(VALID), validRequest), fc.nat(), (valid, seed) => {
      const fields = requiredPaths(valid);
      const field = fields[seed % fields.length]!;
      const request = structuredClone(valid) as unknown as Record<string, unknown>;
      const path = field.split('.');
      parentIn(request, path)[path[path.length - 1]!] = undefined;
      const parsed = BookingRequest.safeParse(request);
      expect(parsed.success).toBe(false);
      if (parsed.success) return;
      expect(describeIssues(parsed.error).map(pathOf)).toEqual([field]);
    }),
    { numRuns: NUM_RUNS },
  );
});
