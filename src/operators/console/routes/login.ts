/**
 * `GET /login`: the form; `POST /login` with a token: a session naming the operator whose token it is, and a
 * redirect to the page; `POST /logout`: the session ends. The one place a token is taken, read from the body, never
 * from the URL.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cookieValues, tokenMatches } from '../../../servers/http/credentials';
import { readLimitedBody } from '../../../servers/http/limited-body';
import { fromOwnPage, type ConsoleContext } from '../context';
import type { RequestOrigin } from '../proxy';
import { redirect, send } from '../respond';
import {
  CONSOLE_SESSION_COOKIE,
  consoleLoginPage,
  consoleSessionCookie,
  newConsoleSession,
  readConsoleSession,
} from '../session';

const MAX_LOGIN_BYTES = 4096;

/** `/login`: the form on GET, a session on a POST of a right token, within the attempts allowed per address. */
export async function loginRoute(
  ctx: ConsoleContext,
  req: IncomingMessage,
  res: ServerResponse,
  from: RequestOrigin,
): Promise<void> {
  if (req.method === 'GET') return send(res, 200, consoleLoginPage());
  if (req.method !== 'POST') return send(res, 404, 'not found');
  if (!fromOwnPage(ctx, req)) return send(res, 403, 'origin not allowed');
  const body = await readLimitedBody(req, MAX_LOGIN_BYTES);
  if (!body) return send(res, 413, 'form too large', { connection: 'close' });
  // Every token tried counts, right or wrong: past the limit nothing is compared, so nothing can be learnt. Counted
  // by the client's address: behind a trusted proxy the one it reports, so one client locks out itself only.
  const attempt = ctx.attempts.take(from.address, ctx.now());
  if (!attempt.allowed) {
    return send(res, 429, consoleLoginPage('Too many attempts from this address; wait a minute.'), {
      'retry-after': String(attempt.retryAfterSeconds),
    });
  }
  const given = new URLSearchParams(body.toString('utf8')).get('token') ?? '';
  // Every operator's token compared, each in constant time, so the time taken names none of them.
  let operator: string | undefined;
  for (const [name, token] of ctx.tokens) if (tokenMatches(given, token) && operator === undefined) operator = name;
  if (operator === undefined) return send(res, 401, consoleLoginPage('Wrong token.'));
  redirect(res, '/', {
    'set-cookie': consoleSessionCookie(newConsoleSession(ctx.keys, operator, ctx.now()), from.tls),
  });
}

/** `POST /logout`: the session ends here (its id refused until it would have expired) and in the browser. */
export function logoutRoute(ctx: ConsoleContext, req: IncomingMessage, res: ServerResponse, from: RequestOrigin): void {
  if (!fromOwnPage(ctx, req)) return send(res, 403, 'origin not allowed');
  for (const value of cookieValues(req.headers.cookie, CONSOLE_SESSION_COOKIE)) {
    const session = readConsoleSession(ctx.keys, value, ctx.now());
    if (session) ctx.revoked.set(session.sessionId, session.expiresAt);
  }
  const t = ctx.now() / 1000;
  for (const [id, expiresAt] of ctx.revoked) if (expiresAt <= t) ctx.revoked.delete(id);
  redirect(res, '/login', { 'set-cookie': consoleSessionCookie('', from.tls, 0) });
}
