/**
 * The operator console: one page listing what needs a person (./items.ts) and the safe actions on each, all
 * through the same workflows and helpers the CLI uses, so the console decides nothing itself; and a page per
 * booking (`/booking?ref=`, read-only: its runs, each with the build it runs on). The actions:
 *  - check again now: an order run that verifies the order with QueryOrders (checkOrderNow);
 *  - quote, then cancel at the quoted fee: the cancelBooking update, which quotes again before it sends;
 *  - mark handled with a note: an operatorNoteWorkflow run, the durable record (recordHandled).
 *
 * Who is acting is known, never typed: a note's author and a cancellation's `requestedBy` are the operator the
 * console authenticated (operatorOf), in one of three ways:
 *  - behind mutual TLS (`tls`): the client certificate's subject; only the operators' OU is let in;
 *  - with named tokens (`operators`, or the one `token`): an operator types their token once into `/login`, and
 *    gets a signed session cookie (./session) naming them; the token is accepted there only, never as a header,
 *    a query parameter or a cookie, and `/login` takes 5 attempts per client address a minute (then 429);
 *  - on loopback with neither: anyone on this machine, recorded as `loopback`.
 * Beyond loopback it refuses to start without TLS or a token, and every token must carry 128 bits. Every POST must
 * come from the console's own page (its Origin), and the Host header must name the console, so another web page
 * open in the operator's browser can neither act nor read. It holds slow clients as the callback receiver does
 * (src/http/listener: headers within 10 s, the request within 30 s, at most 100 sockets).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { AlreadyHandledError, cancelBooking, checkOrderNow, recordHandled } from '../client';
import { describeIssues } from '../values';
import { cookieValues, tokenMatches } from '../http/credentials';
import { readLimitedBody } from '../http/limited-body';
import {
  boundedServer,
  closeServer,
  isLoopbackHost,
  listen,
  urlOf,
  type ClientCertificateTls,
  type ListenerLimits,
} from '../http/listener';
import { LOGIN_ATTEMPTS, LoginAttempts, weakTokenProblem } from '../http/login-guard';
import { SEARCH_ATTRIBUTES } from '../contract/definitions';
import { readBookingDetail } from './booking';
import { describeOrderOutcome, listItemsNeedingAPerson, type ConsoleItem } from './items';
import { escapeHtml, renderBookingPage, renderPage, type PageModel } from './page';
import {
  CONSOLE_SESSION_COOKIE,
  consoleLoginPage,
  consoleSessionCookie,
  newConsoleSession,
  readConsoleSession,
  type SessionKeys,
} from './session';

export interface ConsoleOptions {
  client: Client;
  host?: string;
  port?: number;
  /** One operators' token (CONSOLE_TOKEN): whoever logs in with it is recorded as `console-token`. */
  token?: string;
  /** Named operator tokens (CONSOLE_OPERATOR_TOKENS_FILE), by operator: who logs in with one is recorded by name. */
  operators?: Record<string, string>;
  /**
   * The key sessions are signed with (CONSOLE_SESSION_SECRET, 128 bits or more). Random at each start when not
   * given: every operator logs in again after a restart, and replicas do not share sessions.
   */
  sessionSecret?: string;
  /**
   * Mutual TLS: HTTPS that takes only client certificates from `clientCa`, with `operatorOu` (default `operators`)
   * in their subject; the operator is the certificate's subject. Tokens are not used then.
   */
  tls?: ClientCertificateTls & { operatorOu?: string };
  /** The task queue order and note runs start on. */
  taskQueue: string;
  /** The Temporal Web UI's address, for a link to each item's history. */
  webUiUrl?: string;
  /** How long "check again" waits for the order run's answer before it reports it as still running. */
  checkWaitMs?: number;
  /** Connection cap and timeouts; CONSOLE_LIMITS by default. */
  limits?: Partial<ListenerLimits>;
  /** Login attempts allowed per client address in a window; 5 a minute by default. */
  loginAttempts?: { max: number; windowMs: number };
  now?: () => number;
}

export class ConsoleConfigError extends Error {
  override readonly name = 'ConsoleConfigError';
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

/** Who `token` (CONSOLE_TOKEN) is recorded as: one token shared by several people names nobody in particular. */
export const SHARED_TOKEN_OPERATOR = 'console-token';

/** Who acts on a console on loopback without TLS or a token: anyone on this machine. */
export const LOOPBACK_OPERATOR = 'loopback';

const OPERATOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

const MAX_FORM_BYTES = 16 * 1024;
const MAX_LOGIN_BYTES = 4096;

const Target = z.object({
  workflowId: z.string().min(1).max(400),
  runId: z.string().min(1).max(100),
  ref: z.string().max(100).default(''),
});
const BookingQuery = z.object({ ref: z.string().trim().min(1).max(100) });
const CheckForm = Target.extend({ kind: z.string().max(40).default('') });
const HandledForm = Target.extend({ note: z.string().trim().min(1).max(2000) });
const CancelForm = z.object({
  ref: z.string().min(1).max(100),
  amount: z.coerce.number().nonnegative().optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  unknownFee: z.literal('1').optional(),
  reason: z.string().trim().min(1).max(500),
});

export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const { client, taskQueue, tls } = options;
  const namespace = client.options.namespace;
  const now = options.now ?? Date.now;
  const tokens = checkConsoleAccess(options);
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

  let selfHosts = new Set<string>();

  /**
   * The operator making this request, or undefined when nobody is authenticated: the certificate's subject (TLS),
   * the operator a valid session cookie names (tokens), or `loopback` (neither).
   */
  const operatorOf = (req: IncomingMessage): string | undefined => {
    if (tls) return certificateOperator(req.socket as TLSSocket, operatorOu);
    if (tokens.size === 0) return LOOPBACK_OPERATOR;
    const revokedIds = new Set(revoked.keys());
    for (const value of cookieValues(req.headers.cookie, CONSOLE_SESSION_COOKIE)) {
      const session = readConsoleSession(keys, value, now(), revokedIds);
      if (session) return session.operator;
    }
    return undefined;
  };

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
  const back = (res: ServerResponse, message: string, extra: Record<string, string> = {}) => {
    const q = new URLSearchParams({ msg: message, ...extra });
    res.writeHead(303, { location: `/?${q.toString()}`, 'cache-control': 'no-store' });
    res.end();
  };

  /** What every page shows around its content: who acts, whether they may log out, the Web UI's address. */
  const linksFor = (operator: string) => ({
    operator,
    signedIn: tokens.size > 0,
    ...(options.webUiUrl ? { webUiUrl: options.webUiUrl } : {}),
  });

  /** The page, or (503) why nothing could be listed: an operator must never read an empty list as "all is well". */
  async function page(url: URL, operator: string): Promise<{ status: number; html: string }> {
    const links = linksFor(operator);
    let items: ConsoleItem[];
    try {
      items = await listItemsNeedingAPerson(client);
    } catch (err) {
      return { status: 503, html: renderPage({ items: [], ...links, problem: listingProblem(err, namespace) }) };
    }
    const model: PageModel = { items, ...links };
    const msg = url.searchParams.get('msg');
    if (msg) model.message = msg.slice(0, 500);
    const quoteRef = url.searchParams.get('quoteRef');
    if (quoteRef) {
      const amount = url.searchParams.get('quoteAmount');
      const currency = url.searchParams.get('quoteCurrency');
      const changesAt = url.searchParams.get('quoteChangesAt');
      model.quote = {
        customerReferenceNo: quoteRef,
        fee: amount !== null && currency ? { amount: Number(amount), currency } : null,
        ...(changesAt ? { changesAt } : {}),
      };
    }
    return { status: 200, html: renderPage(model) };
  }

  /** A booking's own page (`GET /booking?ref=`): its runs, each with status, stage and build; 404 when it has none. */
  async function bookingPage(url: URL, operator: string): Promise<{ status: number; html: string }> {
    const links = linksFor(operator);
    const query = BookingQuery.safeParse({ ref: url.searchParams.get('ref') ?? '' });
    if (!query.success) return { status: 400, html: 'expected ?ref=&lt;reference&gt; (up to 100 characters)' };
    const customerReferenceNo = query.data.ref;
    try {
      const detail = await readBookingDetail(client, customerReferenceNo);
      return {
        status: detail ? 200 : 404,
        html: renderBookingPage({ customerReferenceNo, ...(detail ? { detail } : {}), ...links }),
      };
    } catch (err) {
      const problem = `Temporal did not answer for this booking (${err instanceof Error ? err.message : String(err)}).`;
      return {
        status: 503,
        html: renderBookingPage({ customerReferenceNo, problem: problem.slice(0, 400), ...links }),
      };
    }
  }

  async function act(route: string, form: URLSearchParams, res: ServerResponse, operator: string): Promise<void> {
    const fields = Object.fromEntries(form.entries());
    if (route === '/actions/check') {
      const f = CheckForm.parse(fields);
      if (!f.ref) return back(res, 'check: this item names no reference');
      const run = await checkOrderNow(client, f.ref, {
        taskQueue,
        reason: 'asked in the operator console',
        resolvesUnresolved: f.kind === 'unresolved-booking',
      });
      const outcome = await Promise.race([
        run.result(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), options.checkWaitMs ?? 20_000).unref()),
      ]);
      return back(res, outcome ? `${f.ref}: ${describeOrderOutcome(outcome)}` : `${f.ref}: the check is still running`);
    }
    if (route === '/actions/quote') {
      const f = Target.parse(fields);
      const answer = await cancelBooking(client, f.ref, { confirm: false }, { taskQueue });
      const { fee, changesAt } = answer.quote;
      return back(res, `${f.ref}: quoted`, {
        quoteRef: f.ref,
        ...(fee ? { quoteAmount: String(fee.amount), quoteCurrency: fee.currency } : {}),
        ...(changesAt ? { quoteChangesAt: changesAt } : {}),
      });
    }
    if (route === '/actions/cancel') {
      const f = CancelForm.parse(fields);
      const acceptedFee = f.unknownFee
        ? null
        : f.amount !== undefined && f.currency
          ? { amount: f.amount, currency: f.currency }
          : undefined;
      if (acceptedFee === undefined) return back(res, 'cancel: the quoted fee is missing; quote again');
      const answer = await cancelBooking(
        client,
        f.ref,
        { confirm: true, acceptedFee, reason: f.reason, requestedBy: operator },
        { taskQueue },
      );
      return back(res, `${f.ref}: ${answer.kind}${answer.kind === 'cancel-refused' ? ` (${answer.reason})` : ''}`);
    }
    if (route === '/actions/handled') {
      const f = HandledForm.parse(fields);
      await recordHandled(
        client,
        {
          item: { workflowId: f.workflowId, runId: f.runId, ...(f.ref ? { customerReferenceNo: f.ref } : {}) },
          note: f.note,
          by: operator,
        },
        { taskQueue },
      );
      return back(res, `${f.ref || f.workflowId}: marked handled`);
    }
    send(res, 404, 'not found');
  }

  /**
   * `GET /login`: the form; `POST /login` with a token: a session naming the operator whose token it is, and a
   * redirect to the page. The one place a token is taken, read from the body, never from the URL.
   */
  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') return send(res, 200, consoleLoginPage());
    if (req.method !== 'POST') return send(res, 404, 'not found');
    if (!fromOwnPage(req)) return send(res, 403, 'origin not allowed');
    const body = await readLimitedBody(req, MAX_LOGIN_BYTES);
    if (!body) return send(res, 413, 'form too large', { connection: 'close' });
    // Every token tried counts, right or wrong: past the limit nothing is compared, so nothing can be learnt.
    const attempt = attempts.take(req.socket.remoteAddress, now());
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
    const cookie = consoleSessionCookie(newConsoleSession(keys, operator, now()), false);
    res.writeHead(303, { location: '/', 'set-cookie': cookie, 'cache-control': 'no-store' });
    res.end();
  }

  /** `POST /logout`: the session ends here (its id refused until it would have expired) and in the browser. */
  function logout(req: IncomingMessage, res: ServerResponse): void {
    for (const value of cookieValues(req.headers.cookie, CONSOLE_SESSION_COOKIE)) {
      const session = readConsoleSession(keys, value, now());
      if (session) revoked.set(session.sessionId, session.expiresAt);
    }
    const t = now() / 1000;
    for (const [id, expiresAt] of revoked) if (expiresAt <= t) revoked.delete(id);
    res.writeHead(303, {
      location: '/login',
      'set-cookie': consoleSessionCookie('', false, 0),
      'cache-control': 'no-store',
    });
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a page elsewhere that resolves its own name to this address must not be served.
    if (!selfHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, 'wrong host');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname === '/login' && tokens.size > 0) return login(req, res);
    if (url.pathname === '/logout' && req.method === 'POST' && tokens.size > 0) {
      if (!fromOwnPage(req)) return send(res, 403, 'origin not allowed');
      return logout(req, res);
    }
    const operator = operatorOf(req);
    if (operator === undefined) {
      return send(
        res,
        tls ? 403 : 401,
        tls
          ? `forbidden: only a certificate of OU=${escapeHtml(operatorOu)} may use the console`
          : 'unauthorized: <a href="/login">log in</a>',
      );
    }
    if (req.method === 'GET' && url.pathname === '/') {
      const { status, html } = await page(url, operator);
      return send(res, status, html);
    }
    if (req.method === 'GET' && url.pathname === '/booking') {
      const { status, html } = await bookingPage(url, operator);
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
      try {
        return await act(url.pathname, new URLSearchParams(body.toString('utf8')), res, operator);
      } catch (err) {
        return back(res, actionError(err));
      }
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
  selfHosts = new Set(names.map((n) => `${n}:${port}`.toLowerCase()));
  return { url: urlOf(host, port, tls ? 'https' : 'http'), close: () => closeServer(server) };
}

/**
 * The operators' tokens by name, once the settings that say who may use the console are sound: tokens (each of 128
 * bits or more, under valid, distinct names) or client certificates, not both; one of them beyond loopback; a
 * session secret of 128 bits when given. Throws ConsoleConfigError naming the setting; `npm run console` calls it
 * before it connects to Temporal, startConsole again.
 */
export function checkConsoleAccess(
  options: Pick<ConsoleOptions, 'host' | 'token' | 'operators' | 'sessionSecret' | 'tls'>,
): Map<string, string> {
  const host = options.host ?? '127.0.0.1';
  const tokens = operatorTokens(options);
  if (options.tls && tokens.size > 0) {
    throw new ConsoleConfigError(
      'CONSOLE_TOKEN, CONSOLE_OPERATOR_TOKENS_FILE: not used with CONSOLE_TLS_CERT: the client certificate names the ' +
        'operator. Give one of the two.',
    );
  }
  if (!options.tls && tokens.size === 0 && !isLoopbackHost(host)) {
    throw new ConsoleConfigError(
      `CONSOLE_TOKEN: required to listen on ${host} (beyond loopback): the console shows bookings and cancels ` +
        'orders. Set operator tokens (CONSOLE_OPERATOR_TOKENS_FILE or CONSOLE_TOKEN, 128 bits each: `openssl rand ' +
        '-hex 32`), serve it with client certificates (CONSOLE_TLS_*), or listen on 127.0.0.1.',
    );
  }
  if (options.sessionSecret !== undefined) {
    const weak = weakTokenProblem('CONSOLE_SESSION_SECRET', options.sessionSecret);
    if (weak) throw new ConsoleConfigError(weak);
  }
  return tokens;
}

/** The operators' tokens by name: `operators` and `token`, each of 128 bits or more, every name valid. */
function operatorTokens(options: Pick<ConsoleOptions, 'token' | 'operators'>): Map<string, string> {
  const tokens = new Map<string, string>();
  if (options.token !== undefined) {
    const weak = weakTokenProblem('CONSOLE_TOKEN', options.token);
    if (weak) throw new ConsoleConfigError(weak);
    tokens.set(SHARED_TOKEN_OPERATOR, options.token);
  }
  for (const [name, token] of Object.entries(options.operators ?? {})) {
    if (!OPERATOR_NAME.test(name) || tokens.has(name)) {
      throw new ConsoleConfigError(
        `CONSOLE_OPERATOR_TOKENS_FILE: operator "${name.slice(0, 64)}" is ${tokens.has(name) ? 'named twice' : 'not a name (letters, digits, ._@-, up to 64)'}`,
      );
    }
    const weak = weakTokenProblem(`CONSOLE_OPERATOR_TOKENS_FILE (operator ${name})`, token);
    if (weak) throw new ConsoleConfigError(weak);
    if ([...tokens.values()].includes(token)) {
      throw new ConsoleConfigError(`CONSOLE_OPERATOR_TOKENS_FILE: operator ${name} has another operator's token`);
    }
    tokens.set(name, token);
  }
  return tokens;
}

/** The operator a verified client certificate names (its subject), or undefined when its OU is not `operatorOu`. */
function certificateOperator(socket: TLSSocket, operatorOu: string): string | undefined {
  if (!socket.authorized) return undefined;
  const subject = socket.getPeerCertificate()?.subject as unknown as Record<string, string | string[]> | undefined;
  if (!subject) return undefined;
  const ous = [subject.OU ?? []].flat();
  if (!ous.includes(operatorOu)) return undefined;
  const part = (k: string) => [subject[k] ?? []].flat().map((v) => `${k}=${v}`);
  return [...part('CN'), ...part('OU'), ...part('O')].join(',').slice(0, 200);
}

/** An action's failure as the operator reads it: the workflow's reason, a field error, never a stack. */
function actionError(err: unknown): string {
  if (err instanceof z.ZodError) return `not done: ${describeIssues(err).join('; ')}`;
  if (err instanceof AlreadyHandledError) return 'not done: this item was already marked handled';
  if (err instanceof WorkflowUpdateFailedError) return `not done: ${err.cause?.message ?? err.message}`;
  return `not done: ${err instanceof Error ? err.message : String(err)}`;
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
