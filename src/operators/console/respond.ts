/** How the console answers: every page with headers that keep it out of frames, caches and other origins. */
import type { ServerResponse } from 'node:http';

/** An HTML answer with the console's security headers. */
export function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
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
}

/** A 303 to `location`, never cached. */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', ...headers });
  res.end();
}
