/** Ticket tokens against the sandbox: cached and shared, re-issued exactly once after a 401, renewed before expiry, secret never leaked. */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, request } from 'undici';
import { SupplierError } from '../../src/runtime/supplier/errors';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { createSupplierStack } from '../../src/runtime/supplier/stack';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import {
  APP_KEY,
  APP_SECRET,
  bookRequest,
  deadPort,
  fastProfile,
  flow,
  generousRateLimits,
  Resources,
  startRecordingServer,
  startSilentServer,
  supplierErrorOf,
} from './helpers';

const res = new Resources();
afterEach(() => res.closeAll());

const ticketCalls = (sandbox: Sandbox) => sandbox.calls('ticket');

describe('caching', () => {
  test('one Ticket serves many calls of every operation', async () => {
    const sandbox = await res.sandbox();
    const { client } = res.ticketClient(sandbox);
    const ctx = flow();
    await client.checkAvail({ ratePkgId: 'PKG-1' }, ctx);
    await client.book(bookRequest(), ctx);
    await client.queryOrders({}, {});
    await client.checkAvail({ ratePkgId: 'PKG-2' }, flow());
    expect(ticketCalls(sandbox)).toHaveLength(1);
    expect(sandbox.calls().filter((c) => c.op !== 'ticket' && c.httpStatus !== 200)).toEqual([]);
  });

  test('concurrent first calls share one Ticket request', async () => {
    const sandbox = await res.sandbox();
    const { client } = res.ticketClient(sandbox);
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.checkAvail({ ratePkgId: `PKG-${i}` }, flow())));
    expect(ticketCalls(sandbox)).toHaveLength(1);
    expect(sandbox.calls('checkAvail')).toHaveLength(8);
  });

  test('a failed Ticket is not cached: the next call asks again', async () => {
    // The first Ticket is answered 500, the second normally.
    const server = await startRecordingServer((req, nth) =>
      req.path === fastProfile.paths.ticket && nth === 1
        ? { status: 500, body: { code: 100000500, msg: 'x' } }
        : undefined,
    );
    res.add(() => server.close());
    const tokens = res.tickets({ baseUrl: server.url, profile: fastProfile });
    const err = await supplierErrorOf(tokens.getToken());
    expect(err.type).toBe('SupplierServerError');
    expect(err.details).toMatchObject({ operation: 'ticket', httpStatus: 500 });
    await expect(tokens.getToken()).resolves.toBe('ticket-2');
  });
});

describe('re-issue after 401', () => {
  test('the sandbox restarts with a new signing key: one 401, one new Ticket, then success', async () => {
    const first = await startSandbox({
      port: 0,
      jwtSecret: randomBytes(32).toString('hex'),
      rateLimits: generousRateLimits,
    });
    const port = first.port;
    const { client } = res.ticketClient(first);
    let second: Sandbox | undefined;
    try {
      await client.checkAvail({ ratePkgId: 'PKG-1' }, flow());
      expect(ticketCalls(first)).toHaveLength(1);
      await first.close();
      // Same address, new key: the cached ticket no longer verifies.
      second = await startSandbox({ port, jwtSecret: randomBytes(32).toString('hex'), rateLimits: generousRateLimits });
      await expect(client.checkAvail({ ratePkgId: 'PKG-1' }, flow())).resolves.toMatchObject({ status: 1 });
      expect(second.calls('checkAvail').map((c) => c.httpStatus)).toEqual([401, 200]);
      expect(ticketCalls(second)).toHaveLength(1);
    } finally {
      await first.close();
      await second?.close();
    }
  });

  test('concurrent calls that all meet the 401 still re-issue only once', async () => {
    const first = await startSandbox({ port: 0, rateLimits: generousRateLimits });
    const port = first.port;
    const { client } = res.ticketClient(first);
    let second: Sandbox | undefined;
    try {
      await client.queryOrders({}, {});
      await first.close();
      second = await startSandbox({ port, rateLimits: generousRateLimits });
      await Promise.all(Array.from({ length: 5 }, () => client.queryOrders({}, {})));
      expect(ticketCalls(second)).toHaveLength(1);
      expect(second.calls('queryOrders').filter((c) => c.httpStatus === 200)).toHaveLength(5);
    } finally {
      await first.close();
      await second?.close();
    }
  });

  test('a 401 that persists after the re-issue is thrown: exactly one re-issue, two attempts', async () => {
    const server = await startRecordingServer((req) =>
      req.path === fastProfile.paths.book
        ? { status: 401, body: { code: 100000401, msg: 'authentication failed' } }
        : undefined,
    );
    res.add(() => server.close());
    const client = res.client({
      baseUrl: server.url,
      tokens: res.tickets({ baseUrl: server.url, profile: fastProfile }),
    });
    const err = await supplierErrorOf(client.book(bookRequest(), flow()));
    expect(err.type).toBe('SupplierUnauthorized');
    expect(err.details).toMatchObject({ operation: 'book', httpStatus: 401 });
    expect(server.requests.map((r) => r.path)).toEqual([
      fastProfile.paths.ticket,
      fastProfile.paths.book,
      fastProfile.paths.ticket,
      fastProfile.paths.book,
    ]);
  });

  test('invalidating a token that is no longer cached keeps the newer one', async () => {
    const sandbox = await res.sandbox();
    const { tokens } = res.ticketClient(sandbox);
    const a = await tokens.getToken();
    tokens.invalidate(a);
    const b = await tokens.getToken();
    expect(b).not.toBe(a);
    // A late 401 for the old token must not throw away the fresh one.
    tokens.invalidate(a);
    await expect(tokens.getToken()).resolves.toBe(b);
    expect(ticketCalls(sandbox)).toHaveLength(2);
  });
});

describe('renewal with an injected clock', () => {
  // ttl 1 h, renew 5 min before: a ticket idle for 55 min or more is renewed.
  const profile = SupplierProfile.parse({ ...fastProfile, ticket: { ttlSeconds: 3_600, renewBeforeSeconds: 300 } });
  const MIN = 60_000;

  test('an idle ticket is renewed before its sliding expiry; each use pushes that back', async () => {
    const sandbox = await res.sandbox();
    let clock = Date.parse('2030-01-01T00:00:00Z');
    const tokens = res.tickets({ baseUrl: sandbox.url, profile, now: () => clock });
    const client = res.client({ baseUrl: sandbox.url, profile, tokens });

    await client.queryOrders({}, {});
    clock += 50 * MIN;
    await client.queryOrders({}, {});
    clock += 54 * MIN; // 104 min after issue, but only 54 idle: still fresh
    await client.queryOrders({}, {});
    expect(ticketCalls(sandbox)).toHaveLength(1);

    clock += 55 * MIN; // 55 idle: within the renewal margin
    await client.queryOrders({}, {});
    expect(ticketCalls(sandbox)).toHaveLength(2);
    // The renewal happened before the call, so no call ever met a 401.
    expect(sandbox.calls('queryOrders').map((c) => c.httpStatus)).toEqual([200, 200, 200, 200]);
  });

  test('a ticket in constant use is renewed before the hard maximum of 365 days', async () => {
    const sandbox = await res.sandbox();
    let clock = Date.parse('2030-01-01T00:00:00Z');
    const issuedAt = clock;
    const tokens = res.tickets({ baseUrl: sandbox.url, profile, now: () => clock });
    const first = await tokens.getToken();
    const hardRenewAt = issuedAt + 365 * 24 * 3_600_000 - 300_000;
    // Used every 50 min, so the idle rule never fires; only the hard maximum can.
    while (clock + 50 * MIN < hardRenewAt) {
      clock += 50 * MIN;
      expect(await tokens.getToken()).toBe(first);
    }
    clock = hardRenewAt;
    const renewed = await tokens.getToken();
    expect(renewed).not.toBe(first);
    expect(ticketCalls(sandbox)).toHaveLength(2);
  });
});

describe('failures of Ticket itself', () => {
  test('a caller signal aborted before the first call sends no Ticket', async () => {
    const sandbox = await res.sandbox();
    const { client } = res.ticketClient(sandbox);
    const err = await supplierErrorOf(
      client.checkAvail({ ratePkgId: 'PKG-1' }, { ...flow(), signal: AbortSignal.abort() }),
    );
    expect(err.type).toBe('SupplierClientTimeout');
    expect(err.details.operation).toBe('ticket');
    expect(sandbox.calls()).toEqual([]);
  });

  test("one caller's abort does not fail another caller waiting on the same Ticket", async () => {
    const server = await startRecordingServer((req) =>
      req.path === fastProfile.paths.ticket
        ? { status: 200, body: { code: 0, data: { ticket: 'slow-ticket' } }, delayMs: 150 }
        : undefined,
    );
    res.add(() => server.close());
    const tokens = res.tickets({ baseUrl: server.url, profile: fastProfile });
    const a = new AbortController();
    const first = supplierErrorOf(tokens.getToken(a.signal));
    const second = tokens.getToken();
    setTimeout(() => a.abort(), 30);
    const err = await first;
    expect(err.type).toBe('SupplierClientTimeout');
    expect(err.message).toContain('aborted by the caller');
    await expect(second).resolves.toBe('slow-ticket');
    // The shared Ticket completed and was cached for everyone.
    await expect(tokens.getToken()).resolves.toBe('slow-ticket');
    expect(server.requests.filter((r) => r.path === fastProfile.paths.ticket)).toHaveLength(1);
  });

  test('the app secret never appears in any error, message, details or cause', async () => {
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    const sandbox = await res.sandbox({
      appKeys: [{ appKey: 'secret-app', appSecret: `${secret}-right`, permissions: ['search', 'trade', 'query'] }],
    });
    const errors: SupplierError[] = [];
    // Refused credentials, at Ticket and through an operation.
    const refused = res.tickets({
      baseUrl: sandbox.url,
      profile: fastProfile,
      appKey: 'secret-app',
      appSecret: secret,
    });
    errors.push(await supplierErrorOf(refused.getToken()));
    const client = res.client({ baseUrl: sandbox.url, tokens: refused });
    errors.push(await supplierErrorOf(client.book(bookRequest(), flow())));
    // A Ticket that never connects.
    const port = await deadPort();
    const unreachable = res.tickets({ baseUrl: `http://127.0.0.1:${port}`, profile: fastProfile, appSecret: secret });
    errors.push(await supplierErrorOf(unreachable.getToken()));
    // A Ticket path the supplier does not serve.
    const wrongPath = SupplierProfile.parse({
      ...fastProfile,
      paths: { ...fastProfile.paths, ticket: '/api/auth/nope' },
    });
    const misrouted = res.tickets({ baseUrl: sandbox.url, profile: wrongPath, appSecret: secret });
    errors.push(await supplierErrorOf(misrouted.getToken()));
    // A Ticket that never gets an answer.
    const silent = await startSilentServer();
    res.add(() => silent.close());
    const shortTicket = SupplierProfile.parse({
      ...fastProfile,
      timeoutsMs: { ...fastProfile.timeoutsMs, ticket: 200 },
    });
    const hanging = res.tickets({ baseUrl: silent.url, profile: shortTicket, appSecret: secret });
    errors.push(await supplierErrorOf(hanging.getToken()));

    expect(errors.map((e) => e.type)).toEqual([
      'SupplierUnauthorized',
      'SupplierUnauthorized',
      'SupplierNetworkBeforeSend',
      'SupplierInvalidResponse',
      'SupplierClientTimeout',
    ]);
    expect(errors[0]!.message).toContain('secret-app');
    for (const e of errors) {
      const cause = e.cause instanceof Error ? `${e.cause.message} ${e.cause.stack}` : String(e.cause ?? '');
      const text = [e.message, e.stack, JSON.stringify(e.details), String(e), cause].join('\n');
      expect(text).not.toContain(secret);
    }
  });
});

describe('close', () => {
  /**
   * A supplier that counts the TCP connections open to it: the pools a provider or client holds. Idle
   * connections are kept for a minute, so only the client side closing them brings the count down.
   */
  async function connectionCountingSupplier() {
    const sockets = new Set<Socket>();
    let tickets = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const data = req.url === fastProfile.paths.ticket ? { ticket: `ticket-${++tickets}` } : { orders: [] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 0, msg: 'Success', data }));
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    res.add(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    return { url, open: () => sockets.size, tickets: () => tickets };
  }

  /** The server sees a client's FIN a moment after the client closed: wait for it, boundedly. */
  async function untilOpen(supplier: { open(): number }, expected: number): Promise<number> {
    const deadline = Date.now() + 5_000;
    while (supplier.open() !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return supplier.open();
  }

  test('close releases the connection pool the provider opened; getToken afterwards fails clearly, sending nothing', async () => {
    const supplier = await connectionCountingSupplier();
    const tokens = ticketTokens({
      baseUrl: supplier.url,
      profile: fastProfile,
      appKey: APP_KEY,
      appSecret: APP_SECRET,
    });
    await expect(tokens.getToken()).resolves.toBe('ticket-1');
    expect(supplier.open()).toBe(1);

    await tokens.close!();
    expect(await untilOpen(supplier, 0)).toBe(0);
    const err = await supplierErrorOf(tokens.getToken());
    expect(err.type).toBe('SupplierNetworkBeforeSend');
    expect(err.message).toBe('ticket: the token provider was closed');
    expect(supplier.tickets()).toBe(1);
    // A second close (two owners' shutdown paths) is harmless.
    await expect(tokens.close!()).resolves.toBeUndefined();
  });

  test('a dispatcher it was given stays open: its owner closes it', async () => {
    const supplier = await connectionCountingSupplier();
    const agent = new Agent({ connections: 1 });
    res.add(() => agent.close());
    const tokens = ticketTokens({
      baseUrl: supplier.url,
      profile: fastProfile,
      appKey: APP_KEY,
      appSecret: APP_SECRET,
      dispatcher: agent,
    });
    await tokens.getToken();
    await tokens.close!();

    expect((agent as unknown as { closed: boolean }).closed).toBe(false);
    expect(supplier.open()).toBe(1);
    const answer = await request(`${supplier.url}${fastProfile.paths.ticket}`, { method: 'POST', dispatcher: agent });
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
  });

  test('createSupplierStack: its close leaves no connection open, the Ticket pool included', async () => {
    const supplier = await connectionCountingSupplier();
    const built = createSupplierStack({
      baseUrl: supplier.url,
      credentials: { kind: 'ticket', appKey: APP_KEY, appSecret: APP_SECRET },
      profile: fastProfile,
      maxConnections: 2,
      rateLimit: false,
    });
    await built.supplier.queryOrders({}, {});
    // One connection for Ticket, one for QueryOrders.
    expect(supplier.open()).toBe(2);
    await built.close();
    expect(await untilOpen(supplier, 0)).toBe(0);
  });
});
