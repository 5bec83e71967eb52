/**
 * The codec server the Temporal Web UI (and `temporal --codec-endpoint`) calls to show decrypted payloads:
 * `POST /decode` and `POST /encode` with `{payloads: [{metadata: {k: base64}, data: base64}]}`.
 *
 * Only the UI's own origin may call it from a browser (CORS), and when a token is configured every call
 * must carry `Authorization: Bearer <token>`. Bodies are never logged: they hold personal data.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';

export interface CodecServerOptions {
  codec: PayloadCodec;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** The Web UI's origin, e.g. http://127.0.0.1:8233: the only origin a browser may call from. */
  allowedOrigin: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
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

  const authorized = (req: IncomingMessage): boolean => {
    if (!token) return true;
    const given = Buffer.from(req.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${token}`);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const reply = (res: ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== allowedOrigin) return reply(res, 403, { error: 'origin not allowed' });
    if (origin) {
      res.setHeader('access-control-allow-origin', allowedOrigin);
      res.setHeader('vary', 'origin');
      res.setHeader('access-control-allow-credentials', 'true');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST');
      res.setHeader('access-control-allow-headers', 'content-type,x-namespace,authorization');
      return reply(res, 204);
    }
    const route = req.url?.split('?')[0];
    if (req.method !== 'POST' || (route !== '/decode' && route !== '/encode'))
      return reply(res, 404, { error: 'not found' });
    if (!authorized(req)) return reply(res, 401, { error: 'unauthorized' });

    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: z.infer<typeof JsonPayloads>;
    try {
      body = JsonPayloads.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      return reply(res, 400, { error: 'body: expected {"payloads":[{"metadata":{…},"data":"base64"}]}' });
    }
    const payloads = body.payloads.map(fromJson);
    try {
      const out = route === '/decode' ? await codec.decode(payloads) : await codec.encode(payloads);
      reply(res, 200, { payloads: out.map(toJson) });
    } catch (err) {
      // The error names a key id at most (see UnknownEncryptionKeyError), never payload content.
      reply(res, 422, { error: err instanceof Error ? err.message : 'cannot decode' });
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, { error: 'internal error' });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
