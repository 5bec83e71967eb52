/**
 * Answers that differ from the spec's shapes in fields no decision reads, over real HTTP:
 *  - a property: for answers built from the spec's text (test/fixtures/spec-shapes.ts, not our schemas),
 *    any non-decision field made null, absent, of another type, or joined by unknown fields leaves every
 *    activity outcome's decision exactly as for the clean answer (so the workflow, which decides on those
 *    alone, runs the same poll schedule; test/workflow/drift.test.ts checks the schedule end to end);
 *  - drift is logged once per JSON path per reporter, never with the value;
 *  - each order of a QueryOrders answer is read on its own;
 *  - the sandbox's drift mode.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createActivities } from '../../src/activities/booking';
import type { BookInput } from '../../src/activities/types';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { createDriftReporter, type DriftReporter } from '../../src/runtime/supplier/drift';
import { SupplierError } from '../../src/runtime/supplier/errors';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { staticToken } from '../../src/runtime/supplier/token';
import { arbitraryForFields, arbitraryForType, responseDataFields, specShapes } from '../fixtures/spec-shapes';
import { bookRequest, fastProfile, flow, Resources } from './helpers';

const res = new Resources();
afterEach(() => res.closeAll());

// --- A supplier that answers whatever body the test queues, over real HTTP -----------------------------------

interface ScriptedSupplier {
  url: string;
  /** The next answers, in order; the last one repeats. */
  answer(...bodies: unknown[]): void;
}

async function scriptedSupplier(): Promise<ScriptedSupplier> {
  let queue: string[] = [];
  const server = http.createServer((req, reply) => {
    req.resume();
    req.on('end', () => {
      const body = queue.length > 1 ? queue.shift()! : (queue[0] ?? '{"code":0,"data":{}}');
      reply.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  res.add(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answer: (...bodies) => (queue = bodies.map((b) => (typeof b === 'string' ? b : JSON.stringify(b)))),
  };
}

function clientOn(url: string, drift: DriftReporter): SupplierClient {
  return res.client({ baseUrl: url, tokens: staticToken('t0k3n'), drift });
}

/** A drift reporter that keeps what it logs. */
function recordingDrift(): { drift: DriftReporter; lines: string[]; paths: string[] } {
  const lines: string[] = [];
  const paths: string[] = [];
  const drift = createDriftReporter((message, meta) => {
    lines.push(message);
    paths.push(meta.path);
  });
  return { drift, lines, paths };
}

// --- Answers from the spec's text --------------------------------------------------------------------------

const shapes = specShapes();
const money = fc.record({
  currency: fc.constantFrom('USD', 'EUR'),
  amount: fc.double({ min: 1, max: 5000, noNaN: true, noDefaultInfinity: true }),
});
const REFERENCE = '5b0c8f0e-2d7e-4f4a-9a57-0c1d2e3f4a5b';

/** A HotelOrder with every field the spec lists, its decision fields chosen on purpose. */
const specOrder = fc
  .tuple(
    arbitraryForFields(shapes.get('HotelOrder')!, shapes),
    fc.integer({ min: 0, max: 5 }),
    money,
    fc.option(money, { nil: undefined }),
  )
  .map(([order, status, gross, net]) => ({
    ...order,
    status,
    customerReferenceNo: REFERENCE,
    platformReferenceNo: 'PRN-1',
    supplierReferenceNo: 'SRN-1',
    hotelConfirmNo: 'HCN-1',
    grossRate: gross,
    ...(net ? { netRate: net } : { netRate: undefined }),
  }));

/** CheckAvail's data with every field the spec lists (section 4.2), status and price chosen on purpose. */
const specCheckAvail = fc
  .tuple(arbitraryForFields(responseDataFields('### 4.2 CheckAvail'), shapes), fc.constantFrom(1, 2), money)
  .map(([data, status, gross]) => {
    const pkg = data.roomRatePkg as Record<string, unknown>;
    return {
      ...data,
      status,
      roomRatePkg: { ...pkg, totalRate: { ...(pkg.totalRate as object), grossRate: gross } },
    };
  });

/**
 * JSON paths the property keeps as they are: what the decision reads (status, reference), and what the
 * outcome carries and the comparison below checks (references and price, read tolerantly: tested apart).
 */
const ORDER_DECISION = [
  ['status'],
  ['customerReferenceNo'],
  ['platformReferenceNo'],
  ['supplierReferenceNo'],
  ['hotelConfirmNo'],
  ['grossRate'],
  ['netRate'],
];
const CHECK_AVAIL_DECISION = [
  ['status'],
  ['roomRatePkg', 'totalRate', 'grossRate'],
  ['roomRatePkg', 'totalRate', 'netRate'],
];

type Path = (string | number)[];
type Change = { kind: 'null' | 'absent' | 'retyped' | 'unknown-field'; at: number; value: unknown; key: string };

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = prefix.length ? [prefix] : [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  }
  return out;
}

const isDecision = (path: Path, decisions: string[][]) =>
  decisions.some((d) => d.every((key, i) => i >= path.length || path[i] === key));

const change: fc.Arbitrary<Change> = fc.record({
  kind: fc.constantFrom('null', 'absent', 'retyped', 'unknown-field'),
  at: fc.nat(),
  value: fc.oneof(fc.constantFrom('', 0, -1, 1.5, true, [], {}, 'not-a-date', [null]), fc.jsonValue({ maxDepth: 2 })),
  key: fc.constantFrom('loyaltyTier', 'x_ext', 'links', 'v2', 'promotion'),
});

/** The answer with the changes applied at non-decision paths (each change picks among what is left). */
function drifted(clean: unknown, changes: Change[], decisions: string[][]): unknown {
  const copy = structuredClone(clean);
  for (const c of changes) {
    const candidates = pathsOf(copy).filter((p) => !isDecision(p, decisions));
    if (c.kind === 'unknown-field') {
      const objects = [[], ...candidates].filter((p) => {
        const node = at(copy, p as Path);
        return node !== null && typeof node === 'object' && !Array.isArray(node);
      });
      const target = at(copy, objects[c.at % objects.length] as Path) as Record<string, unknown>;
      // A copy: fast-check hands the same constant (`{}`, `[]`) to several changes, and a later change could pick
      // the object an earlier one inserted as its target, making the answer cyclic (and the constant dirty).
      target[c.key] = structuredClone(c.value);
      continue;
    }
    if (candidates.length === 0) continue;
    const path = candidates[c.at % candidates.length]!;
    const parent = at(copy, path.slice(0, -1)) as Record<string | number, unknown>;
    const key = path[path.length - 1]!;
    if (c.kind === 'null') parent[key] = null;
    else if (c.kind === 'retyped') parent[key] = retype(parent[key], structuredClone(c.value));
    else if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  }
  return copy;
}

/** Another type than the value has (a string for a number, an object for a string, …). */
function retype(current: unknown, candidate: unknown): unknown {
  const kind = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  if (kind(candidate) !== kind(current) && candidate !== null) return candidate;
  return typeof current === 'string' ? 12345 : String(current);
}

function at(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)?.[key], root);
}

/** The part of an outcome a decision reads (summary extras like checkIn are informational, kept when readable). */
function decisionOf(outcome: unknown): unknown {
  const o = outcome as { kind: string; order?: Record<string, unknown>; price?: unknown; status?: number };
  if (!o.order) return o;
  // Informational, read tolerantly: the cancel policy too (drift in it changes a fee quote, never the booking's outcome).
  const { statusRemark: _r, hotelId: _h, checkIn: _i, checkOut: _o, cancelPolicy: _c, ...decision } = o.order;
  return { ...o, order: decision };
}

const bookInput: BookInput = {
  customerReferenceNo: REFERENCE,
  ratePkgId: 'pkg-1',
  holder: bookRequest().holder,
  guests: bookRequest().guests,
  context: { sessionId: 'sess-drift', traceId: 'trace-drift' },
};

describe('drift in fields no decision reads never changes an outcome (property, answers from the spec text)', () => {
  test('Book and QueryOrders: the order outcome is the clean answer’s', async () => {
    const supplier = await scriptedSupplier();
    const { drift, lines } = recordingDrift();
    const client = clientOn(supplier.url, drift);
    const activities = createActivities({ supplier: client, profile: fastProfile });
    let drifting = 0;
    await fc.assert(
      fc.asyncProperty(specOrder, fc.array(change, { minLength: 1, maxLength: 6 }), async (clean, changes) => {
        const changed = drifted(clean, changes, ORDER_DECISION);
        supplier.answer({ code: 0, msg: 'Success', data: { hotelOrder: clean } });
        const expected = decisionOf(await activities.book(bookInput));
        expect((expected as { kind: string }).kind).toBe('order');
        supplier.answer({ code: 0, msg: 'Success', data: { hotelOrder: changed } });
        expect(decisionOf(await activities.book(bookInput))).toEqual(expected);

        supplier.answer({ code: 0, msg: 'Success', data: { orders: [clean] } });
        const found = decisionOf(await activities.queryOrder({ customerReferenceNo: REFERENCE, traceId: 't' }));
        supplier.answer({ code: 0, data: { orders: [changed], extra: null } });
        expect(decisionOf(await activities.queryOrder({ customerReferenceNo: REFERENCE, traceId: 't' }))).toEqual(
          found,
        );
        if (JSON.stringify(changed) !== JSON.stringify(clean)) drifting++;
      }),
      { numRuns: 150 },
    );
    expect(drifting).toBeGreaterThan(100);
    // Paths, never values: no drift line carries a value from the answers (the reference stands for them all).
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(REFERENCE);
  });

  test('CheckAvail: availability and price are the clean answer’s', async () => {
    const supplier = await scriptedSupplier();
    const activities = createActivities({
      supplier: clientOn(supplier.url, recordingDrift().drift),
      profile: fastProfile,
    });
    const input = { ratePkgId: 'pkg-1', context: { sessionId: 'sess-drift', traceId: 'trace-drift' } };
    await fc.assert(
      fc.asyncProperty(specCheckAvail, fc.array(change, { minLength: 1, maxLength: 6 }), async (clean, changes) => {
        supplier.answer({ code: 0, msg: 'Success', data: clean });
        const expected = await activities.checkAvail(input);
        expect(expected.kind).toBe(clean.status === 1 ? 'available' : 'unavailable');
        supplier.answer({ code: 0, msg: 'Success', data: drifted(clean, changes, CHECK_AVAIL_DECISION) });
        expect(await activities.checkAvail(input)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  test('the spec text yields every shape the property needs (so it exercises the whole HotelOrder)', () => {
    const fields = shapes.get('HotelOrder')!.map((f) => f.name);
    expect(fields).toEqual(expect.arrayContaining(['status', 'cancelTime', 'hotel', 'rooms', 'holder']));
    expect(fields).toHaveLength(22);
    expect(shapes.get('Order room')!.map((f) => f.name)).toEqual(expect.arrayContaining(['ratePkgId', 'guests']));
    const sample = fc.sample(arbitraryForType('HotelOrder', shapes), 1)[0] as Record<string, unknown>;
    expect(Object.keys(sample).sort()).toEqual([...fields].sort());
  });
});

describe('the confirmed order of the issue report', () => {
  // An independent implementation of the interface answered Book with a confirmed order that was never
  // cancelled: `"cancelTime": null`. The whole answer was rejected and the booking went into recovery.
  test('"cancelTime": null, absent informational fields and unknown fields: confirmed, nothing logged for the null', async () => {
    const supplier = await scriptedSupplier();
    const { drift, paths } = recordingDrift();
    const activities = createActivities({ supplier: clientOn(supplier.url, drift), profile: fastProfile });
    const order = {
      status: 2,
      statusRemark: null,
      customerReferenceNo: REFERENCE,
      platformReferenceNo: 'P2026112300017',
      supplierReferenceNo: null,
      hotelConfirmNo: '88412',
      grossRate: { currency: 'USD', amount: 412.5 },
      cancelTime: null,
      cancelReason: null,
      refundedPrice: null,
      rooms: null,
      channel: 'openapi-v2',
    };
    supplier.answer({ code: 0, msg: 'Success', data: { hotelOrder: order }, traceId: 'abc' });
    expect(await activities.book(bookInput)).toEqual({
      kind: 'order',
      order: {
        customerReferenceNo: REFERENCE,
        status: 2,
        state: 'confirmed',
        platformReferenceNo: 'P2026112300017',
        hotelConfirmNo: '88412',
        price: { currency: 'USD', amount: 412.5 },
      },
    });
    expect(paths).toEqual([]);
  });

  test('a decision field that cannot be read stays what it was: Book "may exist", QueryOrders an error', async () => {
    const supplier = await scriptedSupplier();
    const activities = createActivities({
      supplier: clientOn(supplier.url, recordingDrift().drift),
      profile: fastProfile,
    });
    // A status in a string is not taken for a number: what it would decide is a guess.
    supplier.answer({ code: 0, data: { hotelOrder: { status: '2', customerReferenceNo: REFERENCE } } });
    expect(await activities.book(bookInput)).toMatchObject({ kind: 'ambiguous', errorType: 'SupplierInvalidResponse' });
    supplier.answer({ code: 0, data: { orders: [{ status: null, customerReferenceNo: REFERENCE }] } });
    await expect(activities.queryOrder({ customerReferenceNo: REFERENCE, traceId: 't' })).rejects.toMatchObject({
      type: 'SupplierInvalidResponse',
    });
    // Omitted empty fields: a list left out (or null) is an empty list, and nothing was found.
    supplier.answer({ code: 0, msg: null, data: { orders: null } });
    expect(await activities.queryOrder({ customerReferenceNo: REFERENCE, traceId: 't' })).toEqual({
      kind: 'not-found',
    });
  });
});

describe('references and price decide nothing: read when plain, left out when not, never fatal', () => {
  test('a numeric hotelConfirmNo is read as text; a price that is no Money is left out; both are drift', async () => {
    const supplier = await scriptedSupplier();
    const { drift, paths, lines } = recordingDrift();
    const activities = createActivities({ supplier: clientOn(supplier.url, drift), profile: fastProfile });
    const order = { status: 2, customerReferenceNo: REFERENCE, hotelConfirmNo: 88412001, grossRate: 412 };
    supplier.answer({ code: 0, data: { hotelOrder: order } });
    expect(await activities.book(bookInput)).toEqual({
      kind: 'order',
      order: { customerReferenceNo: REFERENCE, status: 2, state: 'confirmed', hotelConfirmNo: '88412001' },
    });
    supplier.answer({ code: 0, data: { orders: [order] } });
    expect(await activities.queryOrder({ customerReferenceNo: REFERENCE, traceId: 't' })).toMatchObject({
      kind: 'found',
      order: { state: 'confirmed', hotelConfirmNo: '88412001' },
    });
    expect(paths.sort()).toEqual([
      'data.hotelOrder.grossRate',
      'data.hotelOrder.hotelConfirmNo',
      'data.orders[].grossRate',
      'data.orders[].hotelConfirmNo',
    ]);
    expect(lines.join('\n')).not.toMatch(/88412001|412/);
  });
});

describe('drift is reported once per JSON path, by path only', () => {
  test('two answers with the same drift log each path once and count both', async () => {
    const supplier = await scriptedSupplier();
    const { drift, paths, lines } = recordingDrift();
    const client = clientOn(supplier.url, drift);
    const order = (remark: unknown, name: string) => ({
      status: 1,
      customerReferenceNo: REFERENCE,
      statusRemark: remark,
      nightCount: '2',
      holder: { firstName: name, email: `${name}@example.com` },
      rooms: [{ roomIndex: '0' }, { roomIndex: '1' }],
    });
    supplier.answer({ code: 0, msg: 7, data: { orders: [order(42, 'Grace'), order(43, 'Grace')] } });
    await client.queryOrders({ customerReferenceNos: [REFERENCE] }, {});
    supplier.answer({ code: 0, msg: 7, data: { orders: [order(44, 'Hedy')] } });
    await client.queryOrders({ customerReferenceNos: [REFERENCE] }, {});
    expect([...paths].sort()).toEqual(
      ['data.orders[].nightCount', 'data.orders[].rooms[].roomIndex', 'data.orders[].statusRemark', 'msg'].sort(),
    );
    expect(drift.counts().get('queryOrders data.orders[].nightCount')).toBe(3);
    expect(drift.counts().get('queryOrders msg')).toBe(2);
    expect(lines.join('\n')).not.toMatch(/Grace|Hedy|42|44/);
  });
});

describe('each order of a QueryOrders answer is read on its own', () => {
  const refs = ['a', 'b', 'c', 'd'].map((x) => `${x.repeat(8)}-0000-4000-8000-000000000000`);
  const order = (ref: string, status: unknown = 2) => ({ status, customerReferenceNo: ref, platformReferenceNo: 'P' });

  test('a malformed order fails only its own lookup in a shared request', async () => {
    const supplier = await scriptedSupplier();
    const client = clientOn(supplier.url, recordingDrift().drift);
    const coalescer = createQueryOrdersCoalescer({ supplier: client, profile: fastProfile });
    res.add(async () => coalescer.close());
    supplier.answer({ code: 0, data: { orders: [order(refs[0]!), order(refs[1]!, 'confirmed'), order(refs[2]!, 1)] } });
    const [a, b, c, d] = await Promise.allSettled(refs.map((ref) => coalescer.lookup(ref)));
    expect(a).toMatchObject({ status: 'fulfilled', value: [{ customerReferenceNo: refs[0], status: 2 }] });
    expect(b!.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(SupplierError);
    expect((b as PromiseRejectedResult).reason.type).toBe('SupplierInvalidResponse');
    expect((b as PromiseRejectedResult).reason.details.issues).toEqual([
      expect.stringMatching(/^data\.orders\.1\.status: /),
    ]);
    expect(c).toMatchObject({ status: 'fulfilled', value: [{ customerReferenceNo: refs[2], status: 1 }] });
    expect(d).toEqual({ status: 'fulfilled', value: [] });
  });

  test('an order whose reference cannot be read fails the lookups that found nothing, never those that did', async () => {
    const supplier = await scriptedSupplier();
    const client = clientOn(supplier.url, recordingDrift().drift);
    const coalescer = createQueryOrdersCoalescer({ supplier: client, profile: fastProfile });
    res.add(async () => coalescer.close());
    supplier.answer({ code: 0, data: { orders: [order(refs[0]!), { status: 2, customerReferenceNo: 17 }] } });
    const [a, d] = await Promise.allSettled([coalescer.lookup(refs[0]!), coalescer.lookup(refs[3]!)]);
    expect(a).toMatchObject({ status: 'fulfilled', value: [{ customerReferenceNo: refs[0] }] });
    // It could be d's order: "not found" would be a guess, so d's poll is an error poll and is made again.
    expect(d).toMatchObject({ status: 'rejected', reason: { type: 'SupplierInvalidResponse' } });
  });
});

describe('the sandbox in drift mode', () => {
  test('same decisions as without drift; the drifting paths are logged once each', async () => {
    const sandbox = await res.sandbox();
    const { drift, paths } = recordingDrift();
    const { client } = res.ticketClient(sandbox);
    const tokens = res.tickets({ baseUrl: sandbox.url, profile: fastProfile });
    const drifting = res.client({ baseUrl: sandbox.url, tokens, drift });

    const clean = bookRequest();
    const drifted = bookRequest();
    const pkg = await client.checkAvail({ ratePkgId: clean.ratePkgId }, flow());
    const driftedPkg = await drifting.checkAvail({ ratePkgId: drifted.ratePkgId }, flow({ test: 'drift=1' }));
    expect(driftedPkg.status).toBe(pkg.status);
    expect(driftedPkg.roomRatePkg?.totalRate).toEqual(pkg.roomRatePkg?.totalRate);

    const order = await client.book(clean, flow({ test: 'confirmAfterMs=0' }));
    const driftedOrder = await drifting.book(drifted, flow({ test: 'confirmAfterMs=0&drift=1' }));
    for (const field of ['status', 'grossRate', 'netRate'] as const) expect(driftedOrder[field]).toEqual(order[field]);
    expect(driftedOrder.platformReferenceNo).toMatch(/^PRN/);
    // Sent as a number, read as its digits.
    expect(driftedOrder.hotelConfirmNo).toMatch(/^\d+$/);

    const listed = await drifting.queryOrders({ customerReferenceNos: [drifted.customerReferenceNo] }, {});
    expect(listed.unreadable).toEqual([]);
    expect(listed.orders.map((o) => o.status)).toEqual([order.status]);
    expect(paths).toEqual(
      expect.arrayContaining([
        'data.roomRatePkg.rateComment',
        'data.hotelOrder.nightCount',
        'data.hotelOrder.hotelConfirmNo',
        'data.hotelOrder.grossRate.amount',
        'data.hotelOrder.bookingTime',
        'data.hotelOrder.hotel.rating',
        'data.hotelOrder.rooms[].board',
        'data.orders[].nightCount',
      ]),
    );
    expect(new Set(paths).size).toBe(paths.length);
    // The null, omitted and unknown fields are not drift.
    expect(paths.join(' ')).not.toMatch(/cancelTime|cancelReason|refundedPrice|orderChannel|extensions/);
  });
});
