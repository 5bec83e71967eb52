/**
 * The receiver of the supplier's order-status callbacks: `POST /callbacks/order-status`, on a small server
 * of its own (`npm run callbacks`), apart from the workers, so a burst of callbacks never competes with them.
 *
 * A callback is only a hint. It is verified (the supplier profile's `callbacks` scheme with the shared
 * secret SUPPLIER_CALLBACK_SECRET; anything else is refused with 401 and counted), read tolerantly (the
 * payload is not documented: only `customerReferenceNo`, and `status` when present), and passed on as the
 * `supplierOrderUpdate` signal to the booking (`booking:<ref>`, while it runs) or else to its order workflow
 * (`order:<ref>`). The workflow never takes the status from it: it polls QueryOrders to verify, so a
 * callback arriving twice or out of order costs at most an early poll. Identical callbacks within a minute
 * are signalled once. Nothing here logs or answers with the secret or the signature.
 *
 * `GET /metrics` serves what became of each callback as `booking_callbacks_total{result}` in the Prometheus
 * text format (src/observability/definitions.ts); `GET /callbacks/stats` the same counts as JSON.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CALLBACK_METRICS, type CallbackResult } from '../observability/definitions';
import { counterText, PROMETHEUS_CONTENT_TYPE, seriesKey } from '../observability/exposition';
import type { SupplierProfile } from '../supplier/profile';

/** Where a verified callback goes; `none` when neither the booking nor its order workflow is open. */
export interface CallbackTarget {
  signal(update: { customerReferenceNo: string; status?: number }): Promise<'booking' | 'order' | 'none'>;
}

export interface CallbackReceiverOptions {
  host?: string;
  /** 0 picks a free port. */
  port: number;
  profile: SupplierProfile;
  /** The shared secret (SUPPLIER_CALLBACK_SECRET): without one every callback is refused. */
  secret: string | undefined;
  target: CallbackTarget;
  /** How long an identical callback (same reference and status) is not signalled again. Default 60 s. */
  dedupeMs?: number;
  now?: () => number;
}

export interface CallbackStats {
  received: number;
  /** Refused with 401: no or a wrong signature. */
  unverified: number;
  /** Refused with 400: verified, but no reference could be read. */
  invalid: number;
  /** Refused with 413: a body over 64 KiB. */
  tooLarge: number;
  duplicates: number;
  signalled: { booking: number; order: number };
  /** Verified, but no open workflow has the reference (the reconciliation sweep reports such orders). */
  unknownReference: number;
  /** Temporal could not be reached: answered 503, so the supplier sends it again. */
  failed: number;
}

export interface CallbackReceiver {
  url: string;
  port: number;
  stats(): CallbackStats;
  close(): Promise<void>;
}

export const CALLBACK_PATH = '/callbacks/order-status';
const MAX_BODY_BYTES = 64 * 1024;

/** The payload as far as we read it: the reference (top level or in `data.hotelOrder`), and a status. */
const Reference = z.object({ customerReferenceNo: z.string().min(1), status: z.number().int().optional() });
const CallbackPayload = z.union([
  Reference,
  z.object({ data: z.object({ hotelOrder: Reference }) }).transform((p) => p.data.hotelOrder),
  z.object({ hotelOrder: Reference }).transform((p) => p.hotelOrder),
]);

/** Whether `headerValue` proves the body came from the holder of `secret`, by the profile's scheme. */
export function verifyCallback(
  scheme: SupplierProfile['callbacks']['verification'],
  secret: string,
  rawBody: Buffer,
  headerValue: string | undefined,
): boolean {
  if (!headerValue) return false;
  const expected = scheme === 'hmac-sha256' ? createHmac('sha256', secret).update(rawBody).digest('hex') : secret;
  const given =
    scheme === 'hmac-sha256'
      ? headerValue
          .trim()
          .replace(/^sha256=/i, '')
          .toLowerCase()
      : headerValue;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startCallbackReceiver(options: CallbackReceiverOptions): Promise<CallbackReceiver> {
  const { profile, secret, target } = options;
  const now = options.now ?? Date.now;
  const dedupeMs = options.dedupeMs ?? 60_000;
  const seen = new Map<string, number>();
  const stats: CallbackStats = {
    received: 0,
    unverified: 0,
    invalid: 0,
    tooLarge: 0,
    duplicates: 0,
    signalled: { booking: 0, order: 0 },
    unknownReference: 0,
    failed: 0,
  };

  const results = new Map<string, number>();
  const count = (result: CallbackResult) => {
    const key = seriesKey(CALLBACK_METRICS.callbacks, { result });
    results.set(key, (results.get(key) ?? 0) + 1);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://callbacks');
    if (req.method === 'GET' && url.pathname === '/callbacks/stats') return send(res, 200, stats);
    if (req.method === 'GET' && url.pathname === '/metrics') {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
      res.end(counterText(CALLBACK_METRICS.callbacks, results));
      return;
    }
    if (req.method !== 'POST' || url.pathname !== CALLBACK_PATH) return send(res, 404, { error: 'not found' });
    stats.received++;
    const body = await readBody(req);
    if (!body) {
      stats.tooLarge++;
      count('too-large');
      return send(res, 413, { error: 'body too large' });
    }
    const header = req.headers[profile.callbacks.header.toLowerCase()];
    const signature = Array.isArray(header) ? header[0] : header;
    if (!secret || !verifyCallback(profile.callbacks.verification, secret, body, signature)) {
      stats.unverified++;
      count('unverified');
      return send(res, 401, { error: 'unverified callback' });
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
      count('invalid');
      return send(res, 400, { error: 'no customerReferenceNo in the callback' });
    }
    const update = parsed.data;
    const key = `${update.customerReferenceNo}|${update.status ?? ''}`;
    const t = now();
    const last = seen.get(key);
    if (last !== undefined && t - last < dedupeMs) {
      stats.duplicates++;
      count('duplicate');
      return send(res, 200, { accepted: true, duplicate: true });
    }
    let delivered: Awaited<ReturnType<CallbackTarget['signal']>>;
    try {
      delivered = await target.signal({
        customerReferenceNo: update.customerReferenceNo,
        ...(update.status !== undefined ? { status: update.status } : {}),
      });
    } catch {
      stats.failed++;
      count('failed');
      return send(res, 503, { error: 'could not pass the callback on; send it again' });
    }
    remember(key, t);
    if (delivered === 'none') {
      stats.unknownReference++;
      count('unknown-reference');
      return send(res, 200, { accepted: true, matched: false });
    }
    stats.signalled[delivered]++;
    count(delivered === 'booking' ? 'signalled-booking' : 'signalled-order');
    return send(res, 200, { accepted: true, matched: delivered });
  }

  function remember(key: string, t: number): void {
    seen.set(key, t);
    if (seen.size > 10_000) {
      for (const [k, at] of seen) if (t - at >= dedupeMs) seen.delete(k);
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) send(res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stats: () => structuredClone(stats),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
