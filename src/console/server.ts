/**
 * The operator console: one page listing what needs a person (./items.ts) in every namespace it watches
 * (./namespaces.ts), each item labelled with its namespace, and the safe actions on each (./actions.ts), all through
 * the same workflows and helpers the CLI uses, so the console decides nothing itself; and a page per booking
 * (`/booking?ref=&namespace=`, read-only: its runs, each with the build it runs on). Every action and page goes to
 * the item's own namespace, and a namespace a request names that the console does not watch is refused.
 *
 * Who is acting is known, never typed (./access.ts): a note's author and a cancellation's `requestedBy` are the
 * operator the console authenticated, in one of three ways:
 *  - behind mutual TLS (`tls`): the client certificate's subject; only the operators' OU is let in;
 *  - with named tokens (`operators`, or the one `token`): an operator types their token once into `/login`, and
 *    gets a signed session cookie (./session) naming them; the token is accepted there only, never as a header,
 *    a query parameter or a cookie, and `/login` takes 5 attempts per client address a minute (then 429);
 *  - on loopback with neither: anyone on this machine, recorded as `loopback`.
 * Beyond loopback it refuses to start without TLS or a token, and every token must carry 128 bits. Every POST must
 * come from the console's own page (its Origin), and the Host header must name the console, so another web page
 * open in the operator's browser can neither act nor read. It holds slow clients as the callback receiver does
 * (src/http/listener: headers within 10 s, the request within 30 s, at most 100 sockets).
 *
 * Behind a proxy (./proxy.ts): the client's address (what the login limiter counts by) and whether it came over TLS
 * (the session cookie is `Secure` then) are taken from `X-Forwarded-For` / `X-Forwarded-Proto` of the proxies named
 * in `trustedProxies` only. The page renders nothing from its address but the console's own signed message (./flash).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { cookieValues, tokenMatches } from '../http/credentials';
import { readLimitedBody } from '../http/limited-body';
import { boundedServer, closeServer, isLoopbackHost, listen, urlOf, type ListenerLimits } from '../http/listener';
import { LOGIN_ATTEMPTS, LoginAttempts } from '../http/login-guard';
import { SEARCH_ATTRIBUTES } from '../contract/definitions';
import { actorOf, checkConsoleAccess, type AccessOptions, type Actor } from './access';
import { runAction } from './actions';
import { readBookingDetail } from './booking';
import { flashToken, readFlash, type Flash } from './flash';
import { listEveryNamespace } from './items';
import { NamespaceRefusedError, WatchedNamespaces } from './namespaces';
import { escapeHtml, renderBookingPage, renderPage, type PageModel } from './page';
import { requestOrigin, TrustedProxies, type RequestOrigin } from './proxy';
import {
  CONSOLE_SESSION_COOKIE,
  consoleLoginPage,
  consoleSessionCookie,
  newConsoleSession,
  readConsoleSession,
  type SessionKeys,
} from './session';

export {
  checkConsoleAccess,
  ConsoleConfigError,
  LOOPBACK_OPERATOR,
  SHARED_TOKEN_OPERATOR,
  type AccessOptions,
} from './access';

export interface ConsoleOptions extends AccessOptions {
  /** The client of the one namespace to watch; `clients` to watch several. */
  client?: Client;
  /**
   * One client per namespace to watch (CONSOLE_NAMESPACES), all over one connection, each with its namespace's
   * payload keys; the first is the home namespace. Defaults to `[client]`.
   */
  clients?: readonly Client[];
  port?: number;
  /** The task queue order and note runs start on. */
  taskQueue: string;
  /** The Temporal Web UI's address, for a link to each item's history. */
  webUiUrl?: string;
  /**
   * The address operators reach the console at through a proxy (CONSOLE_PUBLIC_URL, e.g. https://console.example):
   * its host is accepted in the Host header and in a POST's Origin, beside the console's own address.
   */
  publicUrl?: string;
  /** How long "check again" waits for the order run's answer before it reports it as still running. */
  checkWaitMs?: number;
  /** Connection cap and timeouts; CONSOLE_LIMITS by default. */
  limits?: Partial<ListenerLimits>;
  /** Login attempts allowed per client address in a window; 5 a minute by default. */
  loginAttempts?: { max: number; windowMs: number };
  now?: () => number;
}

export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

/** The console's connection cap and timeouts: the callback receiver's timeouts, fewer sockets (a few operators). */
export const CONSOLE_LIMITS: ListenerLimits = {
  maxConnections: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

const MAX_FORM_BYTES = 16 * 1024;
const MAX_LOGIN_BYTES = 4096;

const BookingQuery = z.object({ ref: z.string().trim().min(1).max(100) });

export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const { taskQueue, tls } = options;
  const namespaces = new WatchedNamespaces(options.clients ?? (options.client ? [options.client] : []));
  const now = options.now ?? Date.now;
  const tokens = checkConsoleAccess(options);
  const proxies = new TrustedProxies(options.trustedProxies);
  const keys: SessionKeys = {
    secret: options.sessionSecret !== undefined ? Buffer.from(options.sessionSecret) : randomBytes(32),
    tokens,
  };
  const revoked = new Map<string, number>();
  const attempts = new LoginAttempts(
    options.loginAttempts?.max ?? LOGIN_ATTEMPTS.max,
    options.loginAttempts?.windowMs ?? LOGIN_ATTEMPTS.windowMs,
  );
  const operatorOu = tls?.operatorOu ?? 'operators';
  const publicHost = options.publicUrl ? new URL(options.publicUrl).host.toLowerCase() : undefined;

  let selfHosts = new Set<string>();

  const actor = (req: IncomingMessage): Actor | undefined =>
    actorOf(req, { ...(tls ? { tls } : {}), keys, revoked: new Set(revoked.keys()), nowMs: now() });

  /** Whether a POST comes from the console's own page (a browser sends Origin with every POST). */
  const fromOwnPage = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    return origin === undefined || selfHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase());
  };

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the page's own POSTs.
      'referrer-policy': 'same-origin',
      ...headers,
    });
    res.end(body);
  };
  /** Back to the list, with the action's answer signed for this login (the page shows nothing else from its URL). */
  const back = (res: ServerResponse, who: Actor, flash: Flash) => {
    const q = new URLSearchParams({ flash: flashToken(keys.secret, who.login, flash, now()) });
    res.writeHead(303, { location: `/?${q.toString()}`, 'cache-control': 'no-store' });
    res.end();
  };

  /** What every page shows around its content: who acts, whether they may log out, the Web UI's address. */
  const linksFor = (operator: string) => ({
    operator,
    signedIn: tokens.size > 0,
    namespaces: namespaces.names,
    ...(options.webUiUrl ? { webUiUrl: options.webUiUrl } : {}),
  });

  /**
   * The page, or (503) why a namespace could not be listed: an operator must never read an empty list as "all is
   * well". A namespace that failed is named above the others' items; when none could be listed, no list is shown.
   */
  async function page(url: URL, who: Actor): Promise<{ status: number; html: string }> {
    // Nothing else from the address is read: a message or a quote is shown only if the console made it for this login.
    const flash = readFlash(keys.secret, who.login, url.searchParams.get('flash'), now());
    const said = {
      ...(flash?.message ? { message: flash.message } : {}),
      ...(flash?.quote && namespaces.names.includes(flash.quote.namespace) ? { quote: flash.quote } : {}),
    };
    const model: PageModel = { items: [], ...linksFor(who.operator), ...said };
    const listing = await listEveryNamespace(namespaces.clients);
    const problems = listing.failed.map((f) => listingProblem(f.error, f.namespace));
    if (listing.failed.length === namespaces.names.length) {
      return { status: 503, html: renderPage({ ...model, problem: problems.join(' ') }) };
    }
    model.items = listing.items;
    if (problems.length > 0) model.unlisted = problems;
    return { status: problems.length ? 503 : 200, html: renderPage(model) };
  }

  /** A booking's own page (`GET /booking?ref=&namespace=`): its runs, each with status, stage and build; 404 when none. */
  async function bookingPage(url: URL, who: Actor): Promise<{ status: number; html: string }> {
    const links = linksFor(who.operator);
    const query = BookingQuery.safeParse({ ref: url.searchParams.get('ref') ?? '' });
    if (!query.success) return { status: 400, html: 'expected ?ref=&lt;reference&gt; (up to 100 characters)' };
    let client: Client;
    try {
      client = namespaces.clientFor(url.searchParams.get('namespace'));
    } catch (err) {
      if (err instanceof NamespaceRefusedError) return { status: 400, html: escapeHtml(err.message) };
      throw err;
    }
    const customerReferenceNo = query.data.ref;
    const page = { customerReferenceNo, ...links, namespace: client.options.namespace };
    try {
      const detail = await readBookingDetail(client, customerReferenceNo);
      return { status: detail ? 200 : 404, html: renderBookingPage({ ...page, ...(detail ? { detail } : {}) }) };
    } catch (err) {
      const problem = `Temporal did not answer for this booking (${err instanceof Error ? err.message : String(err)}).`;
      return { status: 503, html: renderBookingPage({ ...page, problem: problem.slice(0, 400) }) };
    }
  }

  /**
   * `GET /login`: the form; `POST /login` with a token: a session naming the operator whose token it is, and a
   * redirect to the page. The one place a token is taken, read from the body, never from the URL.
   */
  async function login(req: IncomingMessage, res: ServerResponse, from: RequestOrigin): Promise<void> {
    if (req.method === 'GET') return send(res, 200, consoleLoginPage());
    if (req.method !== 'POST') return send(res, 404, 'not found');
    if (!fromOwnPage(req)) return send(res, 403, 'origin not allowed');
    const body = await readLimitedBody(req, MAX_LOGIN_BYTES);
    if (!body) return send(res, 413, 'form too large', { connection: 'close' });
    // Every token tried counts, right or wrong: past the limit nothing is compared, so nothing can be learnt. Counted
    // by the client's address: behind a trusted proxy the one it reports, so one client locks out itself only.
    const attempt = attempts.take(from.address, now());
    if (!attempt.allowed) {
      return send(res, 429, consoleLoginPage('Too many attempts from this address; wait a minute.'), {
        'retry-after': String(attempt.retryAfterSeconds),
      });
    }
    const given = new URLSearchParams(body.toString('utf8')).get('token') ?? '';
    // Every operator's token compared, each in constant time, so the time taken names none of them.
    let operator: string | undefined;
    for (const [name, token] of tokens) if (tokenMatches(given, token) && operator === undefined) operator = name;
    if (operator === undefined) return send(res, 401, consoleLoginPage('Wrong token.'));
    const cookie = consoleSessionCookie(newConsoleSession(keys, operator, now()), from.tls);
    res.writeHead(303, { location: '/', 'set-cookie': cookie, 'cache-control': 'no-store' });
    res.end();
  }

  /** `POST /logout`: the session ends here (its id refused until it would have expired) and in the browser. */
  function logout(req: IncomingMessage, res: ServerResponse, from: RequestOrigin): void {
    for (const value of cookieValues(req.headers.cookie, CONSOLE_SESSION_COOKIE)) {
      const session = readConsoleSession(keys, value, now());
      if (session) revoked.set(session.sessionId, session.expiresAt);
    }
    const t = now() / 1000;
    for (const [id, expiresAt] of revoked) if (expiresAt <= t) revoked.delete(id);
    res.writeHead(303, {
      location: '/login',
      'set-cookie': consoleSessionCookie('', from.tls, 0),
      'cache-control': 'no-store',
    });
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a page elsewhere that resolves its own name to this address must not be served.
    if (!selfHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, 'wrong host');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const from = requestOrigin(req, proxies);
    if (url.pathname === '/login' && tokens.size > 0) return login(req, res, from);
    if (url.pathname === '/logout' && req.method === 'POST' && tokens.size > 0) {
      if (!fromOwnPage(req)) return send(res, 403, 'origin not allowed');
      return logout(req, res, from);
    }
    const who = actor(req);
    if (who === undefined) {
      return send(
        res,
        tls ? 403 : 401,
        tls
          ? `forbidden: only a certificate of OU=${escapeHtml(operatorOu)} may use the console`
          : 'unauthorized: <a href="/login">log in</a>',
      );
    }
    if (req.method === 'GET' && url.pathname === '/') {
      const { status, html } = await page(url, who);
      return send(res, status, html);
    }
    if (req.method === 'GET' && url.pathname === '/booking') {
      const { status, html } = await bookingPage(url, who);
      return send(res, status, html);
    }
    if (req.method === 'POST' && url.pathname.startsWith('/actions/')) {
      // Only the console's own page may act: a browser sends Origin with every POST.
      if (!fromOwnPage(req)) return send(res, 403, 'origin not allowed');
      if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        return send(res, 415, 'expected a form');
      }
      const body = await readLimitedBody(req, MAX_FORM_BYTES);
      if (!body) return send(res, 413, 'form too large', { connection: 'close' });
      const flash = await runAction(url.pathname, new URLSearchParams(body.toString('utf8')), {
        namespaces,
        operator: who.operator,
        taskQueue,
        checkWaitMs: options.checkWaitMs ?? 20_000,
      });
      return flash ? back(res, who, flash) : send(res, 404, 'not found');
    }
    send(res, 404, 'not found');
  }

  const server = boundedServer(
    { ...CONSOLE_LIMITS, ...options.limits },
    (req, res) => {
      handle(req, res).catch((err) => {
        if (!res.headersSent) send(res, 500, 'internal error');
        console.error('console: request failed', err instanceof Error ? err.message : err);
      });
    },
    tls,
  );
  const port = await listen(server, options.port ?? 0, host);
  const names = isLoopbackHost(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host];
  selfHosts = new Set([...names.map((n) => `${n}:${port}`.toLowerCase()), ...(publicHost ? [publicHost] : [])]);
  return { url: urlOf(host, port, tls ? 'https' : 'http'), close: () => closeServer(server) };
}

/**
 * Why the console could not list what needs a person, as one sentence for the page. The likeliest cause on a
 * cluster we did not set up: the namespace lacks the search attributes the console's queries filter on.
 */
export function listingProblem(err: unknown, namespace: string): string {
  const text = [err, (err as { cause?: unknown })?.cause].map((e) => (e instanceof Error ? e.message : '')).join(' ');
  if (/not a valid search attribute|no mapping defined for search attribute/i.test(text)) {
    return (
      `Nothing can be listed: namespace "${namespace}" lacks the search attributes the console filters on ` +
      `(${SEARCH_ATTRIBUTES.map((a) => a.name).join(', ')}). Run \`npm run temporal:setup\` against this ` +
      'cluster, or start a booking worker with WORKER_REGISTER_SEARCH_ATTRIBUTES=on, then reload.'
    );
  }
  const detail = text.trim().slice(0, 300) || String(err).slice(0, 300);
  return `Nothing can be listed: Temporal did not answer the list of namespace "${namespace}" (${detail}). Reload to try again.`;
}
