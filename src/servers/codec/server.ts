/**
 * The codec server the Temporal Web UI (and `temporal --codec-endpoint`) calls to show decrypted payloads:
 * `POST /decode` and `POST /encode` with `{payloads: [{metadata: {k: base64}, data: base64}]}`.
 *
 * Only the UI's own origin may call it from a browser (CORS, with credentials), and when a token is configured
 * every call must carry `Authorization: Bearer <token>` (compared in constant time) or, from the UI's origin only,
 * the session cookie an operator gets by typing the token into `GET /login` once (./session: the Web UI cannot
 * send a token, its UI server's `codec.includeCredentials` makes the browser send the cookie). It is an open
 * decryption service without a token, so it refuses to listen beyond loopback without one unless
 * `allowAnonymous` says so (then it logs a WARN). A body over 1 MiB is answered 413 without reading on; nothing
 * but `POST /encode`, `POST /decode`, their CORS preflight and `/login` (with a token) is served. Bodies and the
 * token are never logged: they hold personal data, or open it.
 *
 * It holds strangers as the callback receiver does (./listener: headers within 10 s, the request within 30 s, at
 * most 256 sockets), a token must carry at least 128 bits (refused at start, naming CODEC_SERVER_TOKEN), and
 * `/login` takes 5 attempts per client address a minute, then answers 429 with Retry-After (./login-guard).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { readLimitedBody } from '../http/limited-body';
import { cookieValues, tokenMatches } from '../http/credentials';
import { isValidSession, loginPage, newSessionValue, SESSION_COOKIE, sessionSetCookie } from './session';
import { boundedServer, closeServer, isLoopbackHost, listen, urlOf, type ListenerLimits } from '../http/listener';
/** Where it always was for its callers; it lives with the listener now. */
export { isLoopbackHost };
import { LOGIN_ATTEMPTS, LoginAttempts, weakTokenProblem } from '../http/login-guard';

export interface CodecServerOptions {
  codec: PayloadCodec;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** The Web UI's origin, e.g. http://127.0.0.1:8233: the only origin a browser may call from. */
  allowedOrigin: string;
  /**
   * When set, every request needs `Authorization: Bearer <token>`, or the session cookie from `/login` and the
   * allowed origin (the Web UI with `codec.includeCredentials: true`).
   */
  token?: string;
  /**
   * Listen beyond loopback without a token (CODEC_SERVER_ALLOW_ANONYMOUS=on): anyone who reaches the port can
   * decrypt. Only behind something that authenticates callers; a WARN line says so at start.
   */
  allowAnonymous?: boolean;
  /** Where the start's WARN line goes; console.warn by default. */
  warn?: (line: string) => void;
  /** Connection cap and timeouts; CODEC_SERVER_LIMITS by default. */
  limits?: Partial<ListenerLimits>;
  /** Login attempts allowed per client address in a window; 5 a minute by default. */
  loginAttempts?: { max: number; windowMs: number };
  now?: () => number;
}

/** The codec server's connection cap and timeouts: the callback receiver's. */
export const CODEC_SERVER_LIMITS: ListenerLimits = {
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/** The request body limit: a bigger one is answered 413 and not read. */
export const MAX_CODEC_BODY_BYTES = 1024 * 1024;

/** The login form's body limit: a token and its field name. */
const MAX_LOGIN_BODY_BYTES = 4096;

/** Raised by startCodecServer for settings it will not listen with. */
export class CodecServerConfigError extends Error {
  override readonly name = 'CodecServerConfigError';
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
  const now = options.now ?? Date.now;
  const weak = token === undefined ? undefined : weakTokenProblem('CODEC_SERVER_TOKEN', token);
  if (weak) throw new CodecServerConfigError(weak);
  const attempts = new LoginAttempts(
    options.loginAttempts?.max ?? LOGIN_ATTEMPTS.max,
    options.loginAttempts?.windowMs ?? LOGIN_ATTEMPTS.windowMs,
  );
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

  const bearer = (req: IncomingMessage) => tokenMatches(req.headers.authorization ?? '', `Bearer ${token}`);
  // The cookie counts only on a call from the UI's origin: a browser sends it from wherever it is asked to.
  const session = (req: IncomingMessage) =>
    req.headers.origin === allowedOrigin &&
    cookieValues(req.headers.cookie, SESSION_COOKIE).some((v) => isValidSession(token!, v, now()));
  const authorized = (req: IncomingMessage): boolean => !token || bearer(req) || session(req);

  /** Answers; a request whose body was not read to its end is closed after the answer, its body never read. */
  const reply = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed) return;
    const unread = !req.complete;
    const text = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
    res.writeHead(status, {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(unread ? { connection: 'close' } : {}),
      ...headers,
    });
    res.end(text, () => {
      if (unread) setImmediate(() => req.socket.destroy());
    });
  };

  const page = (req: IncomingMessage, res: ServerResponse, status: number, html: string, extra = {}) =>
    reply(req, res, status, html, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      // No script, no frame around it; the form posts here and is sent on to the UI.
      'content-security-policy': `default-src 'none'; form-action 'self' ${allowedOrigin}; frame-ancestors 'none'`,
      ...extra,
    });

  /**
   * `GET /login`: the form; `POST /login` with the token: the session cookie and a redirect to the UI. Open to
   * any origin (it needs the token, and its answers carry no CORS headers); the token is read from the body,
   * never from the URL, where history and proxies' logs would keep it.
   */
  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') return page(req, res, 200, loginPage());
    if (req.method !== 'POST') return reply(req, res, 404, { error: 'not found' });
    const raw = await readLimitedBody(req, MAX_LOGIN_BODY_BYTES);
    if (!raw) return reply(req, res, 413, { error: `body over ${MAX_LOGIN_BODY_BYTES} bytes` });
    // Every token tried counts, right or wrong: past the limit nothing is compared, so nothing can be learnt.
    const attempt = attempts.take(req.socket.remoteAddress, now());
    if (!attempt.allowed) {
      return page(req, res, 429, loginPage('Too many attempts from this address; wait a minute.'), {
        'retry-after': String(attempt.retryAfterSeconds),
      });
    }
    const given = new URLSearchParams(raw.toString('utf8')).get('token') ?? '';
    if (!tokenMatches(given, token!)) return page(req, res, 401, loginPage('Wrong token.'));
    const cookie = sessionSetCookie(newSessionValue(token!, now()), allowedOrigin.startsWith('https:'));
    return page(req, res, 303, loginPage('Logged in.'), { 'set-cookie': cookie, location: `${allowedOrigin}/` });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = req.url?.split('?')[0];
    if (route === '/login' && token) return login(req, res);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== allowedOrigin) return reply(req, res, 403, { error: 'origin not allowed' });
    if (origin) {
      res.setHeader('access-control-allow-origin', allowedOrigin);
      res.setHeader('vary', 'origin');
      res.setHeader('access-control-allow-credentials', 'true');
    }
    if (route !== '/decode' && route !== '/encode') return reply(req, res, 404, { error: 'not found' });
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST');
      // What the Web UI sends (content-type, x-namespace) and what the CLI sends (authorization).
      res.setHeader('access-control-allow-headers', 'content-type,x-namespace,authorization');
      res.setHeader('access-control-max-age', '600');
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

  const server = boundedServer({ ...CODEC_SERVER_LIMITS, ...options.limits }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(req, res, 500, { error: 'internal error' });
    });
  });
  const port = await listen(server, options.port, host);
  return { url: urlOf(host, port), close: () => closeServer(server) };
}
