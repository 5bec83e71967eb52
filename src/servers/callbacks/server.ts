/**
 * The receiver of the supplier's order-status callbacks: `POST /callbacks/order-status`, on a small server
 * of its own (`npm run callbacks`), apart from the workers, so a burst of callbacks never competes with them.
 *
 * With several supplier accounts (SUPPLIER_ACCOUNTS_FILE), each account's callbacks arrive on a path of their own,
 * `POST /callbacks/order-status/<account id>` (its Books carry that URL), and are verified with that account's
 * profile and callback secret alone: one signed with another account's secret, or on the path of an account the
 * receiver does not know, is refused like any unverified callback, and the hint passed on names the account.
 *
 * A callback is only a hint. It is verified (the supplier profile's `callbacks` scheme with the shared
 * secret SUPPLIER_CALLBACK_SECRET, or its account's; anything else is refused with 401 and counted), read tolerantly (the
 * payload is not documented: only `customerReferenceNo`, and `status` when present), and passed on as the
 * `supplierOrderUpdate` signal to the booking (`booking:<ref>`, while it runs) or else to its order workflow
 * (`order:<ref>`). The workflow never takes the status from it: it polls QueryOrders to verify, so a
 * callback arriving twice or out of order costs at most an early poll. Identical callbacks within a minute
 * are signalled once. Nothing here logs or answers with the secret or the signature.
 *
 * The listener faces the internet, so it holds up to strangers: headers must arrive within 10 s and the whole
 * request within 30 s, at most `maxConnections` (256) sockets are open at once, a body over 64 KiB is answered
 * 413 without reading on, and a content-type other than JSON 415. With the profile's `hmac-sha256-timestamp`
 * scheme a callback signs `<timestamp>.<body>`: one signed more than ±5 minutes from now is 401, and the same
 * signed callback is passed on once while its timestamp is fresh, so a captured one cannot be replayed.
 *
 * A separate admin listener, on 127.0.0.1 by default (CALLBACKS_ADMIN_HOST, CALLBACKS_ADMIN_PORT), serves
 * `GET /metrics`, what became of each callback as `booking_callbacks_total{result}`, with `supplier_account` on an
 * account's path, in the Prometheus text format (src/runtime/observability/definitions.ts), and `GET /callbacks/stats`,
 * the same counts as JSON; the public listener answers neither.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CALLBACK_METRICS, type CallbackResult } from '../../runtime/observability/definitions';
import { accountLabel, counterText, PROMETHEUS_CONTENT_TYPE, seriesKey } from '../../runtime/observability/exposition';
import type { CallbackAccount } from '../../runtime/config/accounts';
import type { SupplierProfile } from '../../runtime/config/supplier-profile';
import { readLimitedBody } from '../http/limited-body';

/** A verified callback as it is passed on: `supplier`, the account whose path and secret it came by, if any. */
export interface CallbackHint {
  customerReferenceNo: string;
  status?: number;
  supplier?: string;
}

/** Where a verified callback goes; `none` when neither the booking nor its order workflow is open. */
export interface CallbackTarget {
  signal(update: CallbackHint): Promise<'booking' | 'order' | 'none'>;
}

export interface CallbackReceiverOptions {
  host?: string;
  /** 0 picks a free port. */
  port: number;
  profile: SupplierProfile;
  /** The shared secret (SUPPLIER_CALLBACK_SECRET) of CALLBACK_PATH: without one every callback there is refused. */
  secret: string | undefined;
  /** The supplier accounts, each verified on its own path (accountCallbackPath) with its own profile and secret. */
  accounts?: readonly CallbackAccount[];
  target: CallbackTarget;
  /** How long an identical callback (same reference and status) is not signalled again. Default 60 s. */
  dedupeMs?: number;
  now?: () => number;
  /** The listener for /metrics and /callbacks/stats: 127.0.0.1 and a free port unless given. */
  admin?: { host?: string; port?: number };
  /** Open sockets at most on the public listener (server.maxConnections); more are closed at once. Default 256. */
  maxConnections?: number;
  /** How long a client may take to send its headers (server.headersTimeout). Default 10 s. */
  headersTimeoutMs?: number;
  /** How long a client may take to send the whole request (server.requestTimeout). Default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * What a target throws to pass a callback on later, not now (the reference's order was read moments ago): the
 * receiver answers 503 with Retry-After, so the supplier sends it again, and counts it `deferred`.
 */
export class CallbackDeferredError extends Error {
  override readonly name = 'CallbackDeferred';
  constructor(readonly retryAfterSeconds: number) {
    super(`the order of this reference was read moments ago; send the callback again in ${retryAfterSeconds} s`);
  }
}

export interface CallbackStats {
  received: number;
  /** Refused with 401: no or a wrong signature, or (`hmac-sha256-timestamp`) a timestamp missing or not fresh. */
  unverified: number;
  /** Of `unverified`: rightly signed, but the timestamp is more than the tolerance away from now (a replay?). */
  stale: number;
  /** Refused with 415: a content-type other than JSON (counted `invalid` in the metric). */
  unsupportedMediaType: number;
  /** Refused with 400: verified, but no reference could be read. */
  invalid: number;
  /** Refused with 413: a body over 64 KiB. */
  tooLarge: number;
  /** Identical callbacks within the minute, and (`hmac-sha256-timestamp`) the same signed callback again. */
  duplicates: number;
  signalled: { booking: number; order: number };
  /** Verified, but no open workflow has the reference (the reconciliation sweep reports such orders). */
  unknownReference: number;
  /** Temporal could not be reached: answered 503, so the supplier sends it again. */
  failed: number;
  /** Passed on later (the target deferred it: the order was read moments ago): answered 503 with Retry-After. */
  deferred: number;
}

export interface CallbackReceiver {
  url: string;
  port: number;
  /** The admin listener's base URL (/metrics, /callbacks/stats). */
  adminUrl: string;
  stats(): CallbackStats;
  close(): Promise<void>;
}

export const CALLBACK_PATH = '/callbacks/order-status';

/** Where an account's callbacks arrive: CALLBACK_PATH and the account's id (accountCallbackUrl builds its URL). */
export const accountCallbackPath = (accountId: string) => `${CALLBACK_PATH}/${accountId}`;
export const MAX_CALLBACK_BODY_BYTES = 64 * 1024;
export const CALLBACK_SERVER_DEFAULTS = { maxConnections: 256, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

/** The payload as far as we read it: the reference (top level or in `data.hotelOrder`), and a status. */
const Reference = z.object({ customerReferenceNo: z.string().min(1), status: z.number().int().optional() });
const CallbackPayload = z.union([
  Reference,
  z.object({ data: z.object({ hotelOrder: Reference }) }).transform((p) => p.data.hotelOrder),
  z.object({ hotelOrder: Reference }).transform((p) => p.hotelOrder),
]);

/**
 * Whether `headerValue` proves the body came from the holder of `secret`, by the profile's scheme. For
 * `hmac-sha256-timestamp`, `timestamp` is the timestamp header's value, signed with the body; its freshness is
 * checked apart (timestampIsFresh).
 */
export function verifyCallback(
  scheme: SupplierProfile['callbacks']['verification'],
  secret: string,
  rawBody: Buffer,
  headerValue: string | undefined,
  timestamp?: string,
): boolean {
  if (!headerValue) return false;
  let expected: string;
  if (scheme === 'shared-secret') expected = secret;
  else if (scheme === 'hmac-sha256') expected = createHmac('sha256', secret).update(rawBody).digest('hex');
  else {
    if (timestamp === undefined || !TIMESTAMP.test(timestamp)) return false;
    expected = timestampedSignature(secret, timestamp, rawBody);
  }
  const given =
    scheme === 'shared-secret'
      ? headerValue
      : headerValue
          .trim()
          .replace(/^sha256=/i, '')
          .toLowerCase();
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const TIMESTAMP = /^\d{1,12}$/;

/** The `hmac-sha256-timestamp` signature: hex HMAC-SHA256 of `<timestamp>.<raw body>`. */
export function timestampedSignature(secret: string, timestamp: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** Whether a timestamp header (unix seconds) is within `toleranceSeconds` of `nowMs`, either way. */
export function timestampIsFresh(timestamp: string | undefined, nowMs: number, toleranceSeconds: number): boolean {
  if (timestamp === undefined || !TIMESTAMP.test(timestamp)) return false;
  return Math.abs(nowMs / 1000 - Number(timestamp)) <= toleranceSeconds;
}

/** JSON, by media type (`application/json`, `application/<x>+json`, any parameters); an absent header passes. */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/** Whose callbacks a path takes: its scheme and secret, and the account it names (none on CALLBACK_PATH). */
interface CallbackSigner {
  scheme: SupplierProfile['callbacks'];
  secret: string | undefined;
  account?: string;
}

export async function startCallbackReceiver(options: CallbackReceiverOptions): Promise<CallbackReceiver> {
  const { target } = options;
  const signers = new Map<string, CallbackSigner>([
    [CALLBACK_PATH, { scheme: options.profile.callbacks, secret: options.secret }],
  ]);
  for (const a of options.accounts ?? []) {
    signers.set(accountCallbackPath(a.id), { scheme: a.profile.callbacks, secret: a.secret, account: a.id });
  }
  const now = options.now ?? Date.now;
  const dedupeMs = options.dedupeMs ?? 60_000;
  const seen = new Map<string, number>();
  // hmac-sha256-timestamp: signed callbacks passed on (by signature), kept while their timestamp could be fresh,
  // and those being passed on now, so a copy sent alongside is not signalled twice.
  const signedSeen = new Map<string, number>();
  const signedInFlight = new Set<string>();
  const stats: CallbackStats = {
    received: 0,
    unverified: 0,
    stale: 0,
    unsupportedMediaType: 0,
    invalid: 0,
    tooLarge: 0,
    duplicates: 0,
    signalled: { booking: 0, order: 0 },
    unknownReference: 0,
    failed: 0,
    deferred: 0,
  };

  const results = new Map<string, number>();
  const accountIds = (options.accounts ?? []).map((a) => a.id);
  // By account too, but only an account the receiver knows: a stranger's path adds no series.
  const count = (result: CallbackResult, account: string | undefined) => {
    const key = seriesKey(CALLBACK_METRICS.callbacks, { result, ...accountLabel(account) });
    results.set(key, (results.get(key) ?? 0) + 1);
  };

  async function handleAdmin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://callbacks');
    if (req.method === 'GET' && url.pathname === '/callbacks/stats') return send(res, 200, stats);
    if (req.method === 'GET' && url.pathname === '/metrics') {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
      res.end(counterText(CALLBACK_METRICS.callbacks, results, accountIds));
      return;
    }
    return send(res, 404, { error: 'not found' });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://callbacks');
    const onAccountPath = url.pathname.startsWith(`${CALLBACK_PATH}/`);
    if (req.method !== 'POST' || (url.pathname !== CALLBACK_PATH && !onAccountPath)) {
      return send(res, 404, { error: 'not found' });
    }
    // An account this receiver does not know is refused as unverified, after the body is read, like a wrong
    // signature: a stranger learns nothing about which accounts exist.
    const { scheme, secret, account } = signers.get(url.pathname) ?? { scheme: options.profile.callbacks, secret: '' };
    stats.received++;
    if (!isJsonContentType(req.headers['content-type'])) {
      stats.unsupportedMediaType++;
      count('invalid', account);
      return refuse(req, res, 415, { error: 'content-type must be application/json' });
    }
    const body = await readLimitedBody(req, MAX_CALLBACK_BODY_BYTES);
    if (!body) {
      stats.tooLarge++;
      count('too-large', account);
      return refuse(req, res, 413, { error: 'body too large' });
    }
    const signature = headerOf(req, scheme.header);
    const timestamp =
      scheme.verification === 'hmac-sha256-timestamp' ? headerOf(req, scheme.timestampHeader) : undefined;
    if (!secret || !verifyCallback(scheme.verification, secret, body, signature, timestamp)) {
      stats.unverified++;
      count('unverified', account);
      return send(res, 401, { error: 'unverified callback' });
    }
    const t = now();
    // The same signed callback again (by its signature, which covers timestamp and body).
    let signedKey: string | undefined;
    if (scheme.verification === 'hmac-sha256-timestamp') {
      if (!timestampIsFresh(timestamp, t, scheme.toleranceSeconds)) {
        stats.unverified++;
        stats.stale++;
        count('unverified', account);
        return send(res, 401, { error: 'unverified callback: timestamp too far from now' });
      }
      signedKey = `${account ?? ''}|${timestamp}|${timestampedSignature(secret, timestamp!, body)}`;
      if (signedSeen.has(signedKey) || signedInFlight.has(signedKey)) {
        stats.duplicates++;
        count('duplicate', account);
        return send(res, 200, { accepted: true, duplicate: true });
      }
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    const parsed = CallbackPayload.safeParse(json);
    if (!parsed.success) {
      stats.invalid++;
      count('invalid', account);
      return send(res, 400, { error: 'no customerReferenceNo in the callback' });
    }
    const update = parsed.data;
    const key = `${account ?? ''}|${update.customerReferenceNo}|${update.status ?? ''}`;
    const last = seen.get(key);
    if (last !== undefined && t - last < dedupeMs) {
      if (signedKey) rememberSigned(signedKey, Number(timestamp) + scheme.toleranceSeconds, t);
      stats.duplicates++;
      count('duplicate', account);
      return send(res, 200, { accepted: true, duplicate: true });
    }
    let delivered: Awaited<ReturnType<CallbackTarget['signal']>>;
    if (signedKey) signedInFlight.add(signedKey);
    try {
      delivered = await target.signal({
        customerReferenceNo: update.customerReferenceNo,
        ...(update.status !== undefined ? { status: update.status } : {}),
        ...(account !== undefined ? { supplier: account } : {}),
      });
    } catch (err) {
      if (err instanceof CallbackDeferredError) {
        stats.deferred++;
        count('deferred', account);
        res.setHeader('retry-after', String(err.retryAfterSeconds));
        return send(res, 503, { error: err.message });
      }
      stats.failed++;
      count('failed', account);
      return send(res, 503, { error: 'could not pass the callback on; send it again' });
    } finally {
      if (signedKey) signedInFlight.delete(signedKey);
    }
    remember(key, t);
    if (signedKey) rememberSigned(signedKey, Number(timestamp) + scheme.toleranceSeconds, t);
    if (delivered === 'none') {
      stats.unknownReference++;
      count('unknown-reference', account);
      return send(res, 200, { accepted: true, matched: false });
    }
    stats.signalled[delivered]++;
    count(delivered === 'booking' ? 'signalled-booking' : 'signalled-order', account);
    return send(res, 200, { accepted: true, matched: delivered });
  }

  function remember(key: string, t: number): void {
    seen.set(key, t);
    if (seen.size > 10_000) {
      for (const [k, at] of seen) if (t - at >= dedupeMs) seen.delete(k);
    }
  }

  /** Kept until the timestamp can no longer be fresh; only callbacks signed with the secret get here. */
  function rememberSigned(key: string, staleAtSeconds: number, t: number): void {
    const staleAtMs = staleAtSeconds * 1000;
    signedSeen.set(key, staleAtMs);
    if (signedSeen.size > 10_000) {
      for (const [k, at] of signedSeen) if (at < t) signedSeen.delete(k);
    }
  }

  const onError = (res: ServerResponse) => () => {
    if (!res.headersSent && !res.destroyed) send(res, 500, { error: 'internal error' });
  };
  const server = http.createServer(
    {
      headersTimeout: options.headersTimeoutMs ?? CALLBACK_SERVER_DEFAULTS.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs ?? CALLBACK_SERVER_DEFAULTS.requestTimeoutMs,
      // Node checks both timeouts on this interval (30 s by default, which would let a slow client hold on longer).
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => void handle(req, res).catch(onError(res)),
  );
  server.maxConnections = options.maxConnections ?? CALLBACK_SERVER_DEFAULTS.maxConnections;
  const admin = http.createServer((req, res) => void handleAdmin(req, res).catch(onError(res)));

  const host = options.host ?? '127.0.0.1';
  const adminHost = options.admin?.host ?? '127.0.0.1';
  await listen(server, options.port, host);
  try {
    await listen(admin, options.admin?.port ?? 0, adminHost);
  } catch (err) {
    await closeServer(server);
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const adminPort = (admin.address() as AddressInfo).port;
  return {
    url: `http://${bracketed(host)}:${port}`,
    port,
    adminUrl: `http://${bracketed(adminHost)}:${adminPort}`,
    stats: () => structuredClone(stats),
    close: async () => {
      await Promise.all([closeServer(server), closeServer(admin)]);
    },
  };
}

const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Answers a request whose body is not read (too large, wrong type), then closes its connection: the answer
 * is flushed first, and the rest of the body is never read.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify(body), () => setImmediate(() => req.socket.destroy()));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
