/** Shared pieces of the supplier tier: sandbox and client builders, request builders, and a header-recording server. */
import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { classifyBookFailure } from '../../src/runtime/rules/book';
import { SupplierError } from '../../src/runtime/supplier/errors';
import { createHttpSupplierClient, type HttpSupplierClientOptions } from '../../src/runtime/supplier/http-client';
import type { SupplierClient, TokenProvider } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { BookRequest } from '../../src/runtime/supplier/schemas';
import { ticketTokens, type TicketTokenOptions } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../dev/sandbox/server';

/** Rate limits high enough that only the tests about rate limiting ever meet a 429. */
export const generousRateLimits = { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: 10_000 };

/** Short timeouts so a hanging supplier ends a test in well under a second. */
export const fastProfile = SupplierProfile.parse({
  timeoutsMs: { ticket: 2_000, checkAvail: 2_000, book: 2_000, queryOrders: 2_000 },
});

/** What the Book rule makes of an error: `refused`, `rejected` (surely not made) or `ambiguous` (may exist). */
export const bookRule = (err: unknown, profile: SupplierProfile = fastProfile) =>
  classifyBookFailure(err, profile).kind;

export const APP_KEY = 'sandbox-app';
export const APP_SECRET = 'sandbox-secret';

/** A sandbox on a free port, fast to settle and out of the way of rate limits unless a test asks otherwise. */
export function startTestSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  return startSandbox({ port: 0, confirmAfterMs: 200, rateLimits: generousRateLimits, ...overrides });
}

/** Tracks everything a test opens, so afterEach closes it even when an assertion failed half-way. */
export class Resources {
  private readonly closers: Array<() => Promise<unknown>> = [];

  async sandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
    const sandbox = await startTestSandbox(overrides);
    this.closers.push(() => sandbox.close());
    return sandbox;
  }

  tickets(
    options: Omit<TicketTokenOptions, 'dispatcher' | 'appKey' | 'appSecret'> & { appKey?: string; appSecret?: string },
  ): TokenProvider {
    // The provider's own Agent, released by its close(), as production's owners do.
    const tokens = ticketTokens({
      ...options,
      appKey: options.appKey ?? APP_KEY,
      appSecret: options.appSecret ?? APP_SECRET,
    });
    this.closers.push(async () => tokens.close?.());
    return tokens;
  }

  client(options: Omit<HttpSupplierClientOptions, 'profile'> & { profile?: SupplierProfile }): SupplierClient {
    const client = createHttpSupplierClient({ profile: fastProfile, ...options });
    this.closers.push(() => client.close());
    return client;
  }

  /** A client on the sandbox with Ticket authentication, the way production runs it. */
  ticketClient(
    sandbox: Sandbox,
    profile: SupplierProfile = fastProfile,
    credentials: { appKey?: string; appSecret?: string } = {},
  ) {
    const tokens = this.tickets({ baseUrl: sandbox.url, profile, ...credentials });
    return { tokens, client: this.client({ baseUrl: sandbox.url, profile, tokens }) };
  }

  add(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  async closeAll(): Promise<void> {
    // Clients before servers, newest first: the reverse of how they were opened.
    const closers = this.closers.splice(0).reverse();
    for (const close of closers) await close();
  }
}

export function bookRequest(overrides: Partial<BookRequest> = {}): BookRequest {
  return {
    customerReferenceNo: randomUUID(),
    ratePkgId: 'PKG-SANDBOX-1',
    holder: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' },
    },
    guests: [{ roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false }],
    ...overrides,
  };
}

/** A fresh booking-flow context: every flow has its own Session-Id. */
export function flow(extra: { test?: string; traceId?: string } = {}) {
  return { sessionId: `sess-${randomUUID()}`, ...extra };
}

/** The SupplierError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function supplierErrorOf(promise: Promise<unknown>): Promise<SupplierError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (err) {
    if (err instanceof SupplierError) return err;
    throw new Error(`expected a SupplierError, got ${String(err)}`, { cause: err });
  }
  throw new Error(`expected a SupplierError, but the call resolved with ${JSON.stringify(result)}`);
}

/** A port nothing listens on: bound by the OS, then released, so a connect is refused. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface RecordingServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** `delayMs` holds the reply back, for a supplier that is slow but does answer. */
export type Answer = { status: number; body: unknown; delayMs?: number };

/**
 * A stand-in supplier that keeps the raw request headers the sandbox does not record. `answer`
 * decides the reply; the default is a valid success envelope for each operation.
 */
export async function startRecordingServer(
  answer?: (req: RecordedRequest, nth: number) => Answer | undefined,
): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  let tickets = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        path: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(recorded);
      const nth = requests.filter((r) => r.path === recorded.path).length;
      if (recorded.path.endsWith('/ticket')) tickets++;
      const reply = answer?.(recorded, nth) ?? defaultAnswer(recorded.path, tickets);
      const send = () => {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A server that accepts requests and never answers: a supplier that hangs. */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A minimal valid order, for answers the sandbox cannot give. */
export function minimalOrder(customerReferenceNo = randomUUID()) {
  return { status: 1, customerReferenceNo };
}

function defaultAnswer(path: string, tickets: number): Answer {
  const ok = (data: unknown) => ({ status: 200, body: { code: 0, msg: 'Success', data } });
  if (path.endsWith('/ticket')) return ok({ ticket: `ticket-${tickets}` });
  if (path.endsWith('/checkAvail')) return ok({ status: 1 });
  if (path.endsWith('/book')) return ok({ hotelOrder: minimalOrder() });
  if (path.endsWith('/queryOrders')) return ok({ orders: [] });
  return { status: 404, body: { code: 100000404, msg: 'not found' } };
}
