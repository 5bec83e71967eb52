/** The request headers the client sends, per operation, as a server really receives them (spec 4.1). */
import type { CallContext } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import {
  bookRequest,
  fastProfile,
  flow,
  Resources,
  startRecordingServer,
  supplierErrorOf,
  type RecordingServer,
} from './helpers';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const res = new Resources();
afterEach(() => res.closeAll());

async function recorder(answer?: Parameters<typeof startRecordingServer>[0]): Promise<RecordingServer> {
  const server = await startRecordingServer(answer);
  res.add(() => server.close());
  return server;
}

function clientOn(server: RecordingServer, profile = fastProfile, now?: () => number) {
  const tokens = res.tickets({ baseUrl: server.url, profile });
  return res.client({ baseUrl: server.url, profile, tokens, ...(now ? { now } : {}) });
}

/** Every optional header set, so a test can see which ones an operation drops. */
const fullContext: CallContext = {
  sessionId: 'sess-headers-1',
  traceId: 'booking-ref-42',
  currency: 'EUR',
  language: 'de-DE',
  ip: '203.0.113.7',
  test: 'scenario=available',
};

const sent = (server: RecordingServer, path: string) => server.requests.filter((r) => r.path === path);

describe('CheckAvail and Book', () => {
  test.each([
    ['checkAvail', fastProfile.paths.checkAvail],
    ['book', fastProfile.paths.book],
  ] as const)('%s carries every header of spec 4.1', async (operation, path) => {
    const server = await recorder();
    const client = clientOn(server);
    const before = Math.floor(Date.now() / 1000);
    if (operation === 'checkAvail') await client.checkAvail({ ratePkgId: 'PKG-1' }, fullContext);
    else await client.book(bookRequest(), fullContext);
    const after = Math.floor(Date.now() / 1000);

    const [req] = sent(server, path);
    expect(req).toBeDefined();
    const h = req!.headers;
    expect(h.authorization).toBe('Bearer ticket-1');
    expect(h['content-type']).toBe('application/json');
    expect(h['session-id']).toBe('sess-headers-1');
    expect(h['trace-id']).toBe('booking-ref-42');
    expect(h.currency).toBe('EUR');
    expect(h.language).toBe('de-DE');
    expect(h.ip).toBe('203.0.113.7');
    expect(h.test).toBe('scenario=available');
    expect(h['request-id']).toMatch(UUID);
    // Unix seconds when sent: an integer between the clock readings around the call.
    expect(h['client-request-timestamp']).toMatch(/^\d+$/);
    expect(Number(h['client-request-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(Number(h['client-request-timestamp'])).toBeLessThanOrEqual(after);
    // The profile's timeout for the operation, so the supplier knows when we stop listening.
    expect(h['timeout-milliseconds']).toBe(String(fastProfile.timeoutsMs[operation]));
  });

  test('Timeout-Milliseconds follows a per-call timeout and a profile override', async () => {
    const server = await recorder();
    const profile = SupplierProfile.parse({ timeoutsMs: { checkAvail: 7_500 } });
    const client = clientOn(server, profile);
    await client.checkAvail({ ratePkgId: 'PKG-1' }, { sessionId: 's' });
    await client.checkAvail({ ratePkgId: 'PKG-1' }, { sessionId: 's', timeoutMs: 4_321 });
    await client.book(bookRequest(), { sessionId: 's' });
    expect(sent(server, profile.paths.checkAvail).map((r) => r.headers['timeout-milliseconds'])).toEqual([
      '7500',
      '4321',
    ]);
    expect(sent(server, profile.paths.book)[0]!.headers['timeout-milliseconds']).toBe('90000');
  });

  test('optional headers are left out, not sent empty, when the context has no value', async () => {
    const server = await recorder();
    const client = clientOn(server);
    await client.checkAvail({ ratePkgId: 'PKG-1' }, { sessionId: 'sess-bare' });
    const h = sent(server, fastProfile.paths.checkAvail)[0]!.headers;
    for (const name of ['trace-id', 'currency', 'language', 'ip', 'test']) expect(h).not.toHaveProperty(name);
    expect(h['session-id']).toBe('sess-bare');
  });
});

describe('QueryOrders', () => {
  test('sends no Session-Id, Currency, Test or Timeout-Milliseconds, even when handed a full booking context', async () => {
    const server = await recorder();
    const client = clientOn(server);
    // A full CallContext held in a variable type-checks here (no excess-property check), as it would from an activity.
    const context = { ...fullContext, timeoutMs: 1_234 };
    await client.queryOrders({ customerReferenceNos: ['ref-1'] }, context);
    const h = sent(server, fastProfile.paths.queryOrders)[0]!.headers;
    for (const name of ['session-id', 'currency', 'test', 'timeout-milliseconds']) expect(h).not.toHaveProperty(name);
    expect(h.authorization).toBe('Bearer ticket-1');
    expect(h['content-type']).toBe('application/json');
    expect(h['trace-id']).toBe('booking-ref-42');
    expect(h.language).toBe('de-DE');
    expect(h.ip).toBe('203.0.113.7');
    expect(h['request-id']).toMatch(UUID);
    expect(h['client-request-timestamp']).toMatch(/^\d+$/);
  });
});

describe('Client-Request-Timestamp', () => {
  test('is the injected clock in whole unix seconds', async () => {
    const server = await recorder();
    const client = clientOn(server, fastProfile, () => 1_700_000_000_987);
    await client.queryOrders({}, {});
    expect(sent(server, fastProfile.paths.queryOrders)[0]!.headers['client-request-timestamp']).toBe('1700000000');
  });
});

describe('Request-Id', () => {
  test('is new for every HTTP attempt, including the retry after a 401, which also carries the new ticket', async () => {
    // The first Book is refused as if the ticket had expired; the retry must be a new request, not a replay.
    const server = await recorder((req, nth) =>
      req.path === fastProfile.paths.book && nth === 1
        ? { status: 401, body: { code: 100000401, msg: 'authentication failed' } }
        : undefined,
    );
    const client = clientOn(server);
    await client.book(bookRequest(), flow());
    const books = sent(server, fastProfile.paths.book);
    expect(books).toHaveLength(2);
    expect(books.map((r) => r.headers.authorization)).toEqual(['Bearer ticket-1', 'Bearer ticket-2']);
    const ids = books.map((r) => r.headers['request-id']);
    expect(ids[0]).toMatch(UUID);
    expect(ids[1]).toMatch(UUID);
    expect(ids[0]).not.toBe(ids[1]);
    // Same body both times: the retry is the same Book (same customerReferenceNo), so it stays idempotent.
    expect(books[1]!.body).toEqual(books[0]!.body);
  });

  test('the sandbox sees a distinct Request-Id per call, and an error reports the one that failed', async () => {
    const sandbox = await res.sandbox();
    const { client } = res.ticketClient(sandbox);
    const ctx = flow();
    await client.checkAvail({ ratePkgId: 'PKG-1' }, ctx);
    await client.book(bookRequest(), ctx);
    await client.queryOrders({}, {});
    const err = await supplierErrorOf(client.book(bookRequest(), { ...ctx, test: 'book=400' }));
    const calls = sandbox.calls().filter((c) => c.op !== 'ticket');
    const ids = calls.map((c) => c.requestId);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(calls.at(-1)!.requestId).toBe(err.details.requestId);
  });
});

describe('Session-Id on the sandbox', () => {
  test('is the same through one flow on CheckAvail and Book, and absent on QueryOrders', async () => {
    const sandbox = await res.sandbox();
    const { client } = res.ticketClient(sandbox);
    const ctx = flow();
    await client.checkAvail({ ratePkgId: 'PKG-1' }, ctx);
    await client.book(bookRequest(), ctx);
    await client.queryOrders({}, ctx);
    expect(sandbox.calls('checkAvail').map((c) => c.sessionId)).toEqual([ctx.sessionId]);
    expect(sandbox.calls('book').map((c) => c.sessionId)).toEqual([ctx.sessionId]);
    expect(sandbox.calls('queryOrders').map((c) => c.sessionId)).toEqual([undefined]);
  });
});

describe('Ticket request', () => {
  test('is JSON with the app key, the secret and the profile ttl, and carries no bearer token', async () => {
    const server = await recorder();
    const profile = SupplierProfile.parse({ ticket: { ttlSeconds: 600 } });
    const tokens = res.tickets({ baseUrl: server.url, profile });
    await expect(tokens.getToken()).resolves.toBe('ticket-1');
    const [ticket] = sent(server, profile.paths.ticket);
    expect(ticket!.headers['content-type']).toBe('application/json');
    expect(ticket!.headers).not.toHaveProperty('authorization');
    expect(ticket!.body).toEqual({ appKey: 'sandbox-app', appSecret: 'sandbox-secret', ttl: 600 });
  });
});
