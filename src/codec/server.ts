/**
 * The codec server the Temporal Web UI (and `temporal --codec-endpoint`) calls to show decrypted payloads:
 * `POST /decode` and `POST /encode` with `{payloads: [{metadata: {k: base64}, data: base64}]}`.
 *
 * Only the UI's own origin may call it from a browser (CORS), and when a token is configured every call
 * must carry `Authorization: Bearer <token>` (compared in constant time). It is an open decryption service
 * without one, so it refuses to listen beyond loopback without a token unless `allowAnonymous` says so (then
 * it logs a WARN). A body over 1 MiB is answered 413 without reading on; nothing but `POST /encode`,
 * `POST /decode` and their CORS preflight is served. Bodies are never logged: they hold personal data.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { isIPv4, type AddressInfo } from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { readLimitedBody } from '../http/limited-body';

export interface CodecServerOptions {
  codec: PayloadCodec;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** The Web UI's origin, e.g. http://127.0.0.1:8233: the only origin a browser may call from. */
  allowedOrigin: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Listen beyond loopback without a token (CODEC_SERVER_ALLOW_ANONYMOUS=on): anyone who reaches the port can
   * decrypt. Only behind something that authenticates callers; a WARN line says so at start.
   */
  allowAnonymous?: boolean;
  /** Where the start's WARN line goes; console.warn by default. */
  warn?: (line: string) => void;
}

/** The request body limit: a bigger one is answered 413 and not read. */
export const MAX_CODEC_BODY_BYTES = 1024 * 1024;

/** Raised by startCodecServer for settings it will not listen with. */
export class CodecServerConfigError extends Error {
  override readonly name = 'CodecServerConfigError';
}

/** Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1]!.startsWith('127.');
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

const JsonPayloads = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() })),
});

const fromJson = (p: z.infer<typeof JsonPayloads>['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const { codec, allowedOrigin, token } = options;
  const host = options.host ?? '127.0.0.1';
  if (!token && !isLoopbackHost(host)) {
    if (!options.allowAnonymous) {
      throw new CodecServerConfigError(
        `CODEC_SERVER_TOKEN: required to listen on ${host} (beyond loopback): without it anyone who reaches the ` +
          'port can decrypt payloads. Set a token (callers send "Authorization: Bearer <token>"), listen on ' +
          '127.0.0.1, or set CODEC_SERVER_ALLOW_ANONYMOUS=on if something in front authenticates every caller.',
      );
    }
    (options.warn ?? console.warn)(
      `WARN: codec server on ${host} without a token (CODEC_SERVER_ALLOW_ANONYMOUS=on): anyone who reaches the ` +
        'port can decrypt payloads; keep it behind something that authenticates callers.',
    );
  }

  // Both sides hashed to one length first, so the comparison takes the same time whatever was sent.
  const expectedDigest = token ? createHash('sha256').update(`Bearer ${token}`).digest() : undefined;
  const authorized = (req: IncomingMessage): boolean => {
    if (!expectedDigest) return true;
    const given = createHash('sha256')
      .update(req.headers.authorization ?? '')
      .digest();
    return timingSafeEqual(given, expectedDigest);
  };

  /** Answers; a request whose body was not read to its end is closed after the answer, its body never read. */
  const reply = (req: IncomingMessage, res: ServerResponse, status: number, body?: unknown) => {
    if (res.destroyed) return;
    const unread = !req.complete;
    res.writeHead(status, {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(unread ? { connection: 'close' } : {}),
    });
    res.end(body === undefined ? undefined : JSON.stringify(body), () => {
      if (unread) setImmediate(() => req.socket.destroy());
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== allowedOrigin) return reply(req, res, 403, { error: 'origin not allowed' });
    if (origin) {
      res.setHeader('access-control-allow-origin', allowedOrigin);
      res.setHeader('vary', 'origin');
      res.setHeader('access-control-allow-credentials', 'true');
    }
    const route = req.url?.split('?')[0];
    if (route !== '/decode' && route !== '/encode') return reply(req, res, 404, { error: 'not found' });
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST');
      res.setHeader('access-control-allow-headers', 'content-type,x-namespace,authorization');
      return reply(req, res, 204);
    }
    if (req.method !== 'POST') return reply(req, res, 404, { error: 'not found' });
    if (!authorized(req)) return reply(req, res, 401, { error: 'unauthorized' });

    const raw = await readLimitedBody(req, MAX_CODEC_BODY_BYTES);
    if (!raw) return reply(req, res, 413, { error: `body over ${MAX_CODEC_BODY_BYTES} bytes` });
    let body: z.infer<typeof JsonPayloads>;
    try {
      body = JsonPayloads.parse(JSON.parse(raw.toString('utf8')));
    } catch {
      return reply(req, res, 400, { error: 'body: expected {"payloads":[{"metadata":{…},"data":"base64"}]}' });
    }
    const payloads = body.payloads.map(fromJson);
    try {
      const out = route === '/decode' ? await codec.decode(payloads) : await codec.encode(payloads);
      reply(req, res, 200, { payloads: out.map(toJson) });
    } catch (err) {
      // The error names a key id at most (see UnknownEncryptionKeyError), never payload content.
      reply(req, res, 422, { error: err instanceof Error ? err.message : 'cannot decode' });
    }
  }

  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(req, res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
