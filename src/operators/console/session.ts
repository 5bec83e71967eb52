/**
 * The operator console's session: what an operator's browser holds after typing their token into `/login` once,
 * instead of the token itself. The cookie is `<session id>.<expiry>.<operator>.<MAC>`: a random 128-bit id, the
 * expiry (unix seconds), the operator's name (base64url) and an HMAC-SHA256 under the server's session secret over
 * all three and a digest of that operator's current token, so
 *  - nothing in it can be changed (another operator, a later expiry) without the secret;
 *  - it expires on its own (CONSOLE_SESSION_TTL_SECONDS), and changing an operator's token, or removing the
 *    operator, ends their sessions at once; changing the secret ends everyone's;
 *  - it is useless for finding the token, and the token itself is never a credential after the login.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sessionCookieHeader } from '../../servers/http/credentials';

/** The cookie's name. */
export const CONSOLE_SESSION_COOKIE = 'console_session';

/** How long a login lasts: a working day. */
export const CONSOLE_SESSION_TTL_SECONDS = 12 * 60 * 60;

const LABEL = 'hotel-booking operator-console session v1';

/** The signing side: the server's secret and the operators' tokens, by name. */
export interface SessionKeys {
  secret: Buffer;
  /** The token each operator logs in with, by operator name. */
  tokens: ReadonlyMap<string, string>;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const tokenDigest = (token: string) => createHash('sha256').update(token).digest('base64url');

function mac(keys: SessionKeys, sessionId: string, expiresAt: number, operatorB64: string, token: string): string {
  return createHmac('sha256', keys.secret)
    .update(`${LABEL}\n${sessionId}\n${expiresAt}\n${operatorB64}\n${tokenDigest(token)}`)
    .digest('base64url');
}

/** A new session for `operator` (who logged in with their token just now), valid until `nowMs` + ttl. */
export function newConsoleSession(
  keys: SessionKeys,
  operator: string,
  nowMs: number,
  ttlSeconds = CONSOLE_SESSION_TTL_SECONDS,
): string {
  const token = keys.tokens.get(operator);
  if (token === undefined) throw new Error(`no token for operator ${operator}`);
  const sessionId = randomBytes(16).toString('base64url');
  const expiresAt = Math.floor(nowMs / 1000) + ttlSeconds;
  const operatorB64 = b64(operator);
  return `${sessionId}.${expiresAt}.${operatorB64}.${mac(keys, sessionId, expiresAt, operatorB64, token)}`;
}

const SESSION = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/;

/**
 * The session `value` stands for, or undefined: malformed, signed under another secret or for another token,
 * changed in any part, expired, or revoked (logged out).
 */
export function readConsoleSession(
  keys: SessionKeys,
  value: string,
  nowMs: number,
  revoked: ReadonlySet<string> = new Set(),
): { sessionId: string; operator: string; expiresAt: number } | undefined {
  const m = SESSION.exec(value);
  if (!m) return undefined;
  const [, sessionId, expiry, operatorB64, given] = m as unknown as [string, string, string, string, string];
  const operator = Buffer.from(operatorB64, 'base64url').toString('utf8');
  const token = keys.tokens.get(operator);
  const expiresAt = Number(expiry);
  // Compared even for an unknown operator (against a stand-in), so the time taken says nothing about the names.
  const expected = mac(keys, sessionId, expiresAt, operatorB64, token ?? '\0no operator');
  const ok = timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  if (!ok || token === undefined || b64(operator) !== operatorB64) return undefined;
  if (expiresAt * 1000 <= nowMs || revoked.has(sessionId)) return undefined;
  return { sessionId, operator, expiresAt };
}

/** The Set-Cookie header for a session: HttpOnly, SameSite=Strict, Secure when the console is served over HTTPS. */
export function consoleSessionCookie(
  value: string,
  secure: boolean,
  maxAgeSeconds = CONSOLE_SESSION_TTL_SECONDS,
): string {
  return sessionCookieHeader(CONSOLE_SESSION_COOKIE, value, secure, maxAgeSeconds);
}

/** The login form (no script, nothing from elsewhere); `message` is fixed text, never what was typed. */
export function consoleLoginPage(message?: string): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Operator console login</title></head><body>',
    '<h1>Operator console</h1>',
    '<p>Enter your operator token. What you do here is recorded under the name that token belongs to.</p>',
    ...(message ? [`<p role="alert"><strong>${message}</strong></p>`] : []),
    '<form method="post" action="/login">',
    '<label>Token <input type="password" name="token" autocomplete="off" required autofocus></label>',
    '<button type="submit">Log in</button>',
    '</form>',
    '</body></html>',
  ].join('\n');
}
