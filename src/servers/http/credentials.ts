/**
 * Reading a shared secret from a request, for the listeners that take one (the codec server, the operator
 * console): a comparison that takes the same time whatever was sent, and the values of a named cookie.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Whether `given` is `token`; both hashed to one length first, so the time taken says nothing about `given`. */
export function tokenMatches(given: string, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The values of every cookie called `name` in a Cookie header (a browser may send more than one), as sent. */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`))
    .map((part) => part.slice(name.length + 1));
}

/**
 * The Set-Cookie header of a login session: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Secure when served over HTTPS, for `maxAgeSeconds` (0 ends it).
 */
export function sessionCookieHeader(name: string, value: string, secure: boolean, maxAgeSeconds: number): string {
  return [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}
