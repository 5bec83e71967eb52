/**
 * The codec server's browser session: how the Temporal Web UI, which cannot send a bearer token, calls a codec
 * server that requires one. The UI server's `codec.includeCredentials` makes the browser call the codec endpoint
 * with `credentials: 'include'`, so a cookie goes along; an operator gets that cookie once by typing the token
 * into the codec server's `/login` form.
 *
 * The cookie is `<expiry>.<HMAC-SHA256 under the token of a fixed label and the expiry>`: never the token, and
 * useless for finding it. Signed rather than a random id kept in memory, so it holds across restarts and
 * replicas of the codec server (the UI would otherwise stop decoding at every restart until someone logs in
 * again); it expires on its own (SESSION_TTL_SECONDS), and changing the token revokes every session at once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sessionCookieHeader } from '../http/credentials';

/** The cookie's name. */
export const SESSION_COOKIE = 'codec_session';

/** How long a login lasts: a working day, then the operator logs in again. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

const LABEL = 'hotel-booking codec-server session v1';

const mac = (token: string, expiresAt: number) =>
  createHmac('sha256', token).update(`${LABEL}\n${expiresAt}`).digest('base64url');

/** A session value that holds until `nowMs` + ttl. */
export function newSessionValue(token: string, nowMs: number, ttlSeconds = SESSION_TTL_SECONDS): string {
  const expiresAt = Math.floor(nowMs / 1000) + ttlSeconds;
  return `${expiresAt}.${mac(token, expiresAt)}`;
}

/** Whether `value` is a session made under `token` that has not expired (the MAC compared in constant time). */
export function isValidSession(token: string, value: string, nowMs: number): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return false;
  const expiresAt = Number(m[1]);
  const ok = timingSafeEqual(Buffer.from(m[2]!), Buffer.from(mac(token, expiresAt)));
  return ok && expiresAt * 1000 > nowMs;
}

/** The Set-Cookie header for a session: HttpOnly, SameSite=Strict, Secure when the UI is served over HTTPS. */
export function sessionSetCookie(value: string, secure: boolean, maxAgeSeconds = SESSION_TTL_SECONDS): string {
  return sessionCookieHeader(SESSION_COOKIE, value, secure, maxAgeSeconds);
}

/** The login form (no script, nothing from elsewhere); `message` is fixed text, never what was typed. */
export function loginPage(message?: string): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Codec server login</title></head><body>',
    '<h1>Codec server</h1>',
    '<p>The Temporal Web UI decrypts payloads through this server. Enter its token (CODEC_SERVER_TOKEN) once;',
    'this browser then keeps a session cookie for it.</p>',
    ...(message ? [`<p role="alert"><strong>${message}</strong></p>`] : []),
    '<form method="post" action="login">',
    '<label>Token <input type="password" name="token" autocomplete="off" required autofocus></label>',
    '<button type="submit">Log in</button>',
    '</form>',
    '</body></html>',
  ].join('\n');
}
