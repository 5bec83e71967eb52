/**
 * A pass-through proxy in front of the sandbox that holds every Book answer until the N-th Book has
 * arrived, then releases them together, so N Books end at once (as when a supplier's outage ends),
 * however long this machine takes to get N bookings as far as Book. The recovery storm needs that:
 * on a small machine the Books would otherwise trickle in over a minute or more, and the polls that
 * a real storm lines up would be spread out.
 *
 * Answers are released early if the first one has been held `maxHoldMs`, below the client's Book
 * timeout, so a slow start turns into a smaller storm rather than client timeouts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface BookBarrier {
  url: string;
  /** When the held answers were released (ms since epoch), once they were. */
  releasedAt(): number | undefined;
  /** How many answers were held and released together. */
  released(): number;
  close(): Promise<void>;
}

export async function startBookBarrier(options: {
  target: string;
  bookPath: string;
  count: number;
  maxHoldMs: number;
}): Promise<BookBarrier> {
  const held: Array<() => void> = [];
  let releasedAt: number | undefined;
  let releasedCount = 0;
  let holdTimer: NodeJS.Timeout | undefined;
  const release = () => {
    if (releasedAt !== undefined) return;
    clearTimeout(holdTimer);
    releasedAt = Date.now();
    releasedCount = held.length;
    for (const deliver of held.splice(0)) deliver();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      request(`${options.target}${req.url ?? '/'}`, {
        method: req.method as 'POST',
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      })
        .then(async (upstream) => {
          const body = Buffer.from(await upstream.body.arrayBuffer());
          const deliver = () => {
            if (res.destroyed) return;
            res.writeHead(upstream.statusCode, {
              'content-type': String(upstream.headers['content-type'] ?? 'application/json'),
            });
            res.end(body);
          };
          if (req.url !== options.bookPath || releasedAt !== undefined) return deliver();
          held.push(deliver);
          holdTimer ??= setTimeout(release, options.maxHoldMs);
          if (held.length >= options.count) release();
        })
        .catch(() => {
          // The sandbox went away (end of run): the client sees a reset, as it would.
          res.destroy();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    releasedAt: () => releasedAt,
    released: () => releasedCount,
    close: () =>
      new Promise<void>((resolve) => {
        release();
        clearTimeout(holdTimer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
