/** Raw HTTP for the security tier: what an attacker sends, below what fetch would let a test send. */
import http from 'node:http';
import net from 'node:net';

export interface RawAnswer {
  status: number;
  body: string;
  /** Whether the client was still sending its body when the answer came. */
  answeredBeforeBodySent: boolean;
}

/**
 * POSTs `body` on a connection of its own, with a content-length (`chunked: false`) or chunked in 64 KiB pieces,
 * and resolves with the first answer, even when the server answers before the body is sent and then closes
 * (the rest of the body is dropped with the connection: write errors after the answer are expected).
 */
export function rawPost(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  options: { chunked?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let sent = false;
    let answered = false;
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, ...(options.chunked ? {} : { 'content-length': String(body.length) }) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const done = () => {
          resolve({
            status: res.statusCode!,
            body: Buffer.concat(chunks).toString('utf8'),
            answeredBeforeBodySent: !sent,
          });
          req.destroy();
        };
        res.once('end', done);
        res.once('error', done);
        res.once('close', done);
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (options.chunked) {
      const write = (offset: number): void => {
        if (offset >= body.length || req.destroyed) {
          if (!req.destroyed) req.end(() => (sent = true));
          return;
        }
        const ok = req.write(body.subarray(offset, offset + 64 * 1024));
        if (ok) setImmediate(() => write(offset + 64 * 1024));
        else req.once('drain', () => write(offset + 64 * 1024));
      };
      write(0);
    } else {
      req.end(body, () => (sent = true));
    }
  });
}

export interface SlowLoris {
  /** Bytes of the request head sent before the server closed the connection. */
  bytesSent: number;
  /** Whether the whole head (up to the blank line) was ever sent: never, for a slow-loris. */
  headSent: boolean;
  /** What the server wrote before it closed (Node answers a headers timeout with 408). */
  answer: string;
  /** Whether the server closed the connection (not the client). */
  closedByServer: boolean;
  elapsedMs: number;
}

/**
 * A slow-loris client: sends a request line and then its headers one byte every `everyMs`, never reaching the
 * blank line that ends them, until the server closes the connection (or `giveUpMs` passes).
 */
export function slowLoris(
  port: number,
  host: string,
  path: string,
  options: { everyMs?: number; giveUpMs?: number } = {},
): Promise<SlowLoris> {
  const everyMs = options.everyMs ?? 1_000;
  const giveUpMs = options.giveUpMs ?? 60_000;
  // A header that never ends: the client would need 10 minutes to get to the blank line.
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nX-Padding: ${'a'.repeat(600)}\r\n\r\n`,
  );
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let bytesSent = 0;
    let answer = '';
    let closedByClient = false;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      // The request line at once, then the rest a byte at a time.
      const first = head.indexOf('\r\n') + 2;
      socket.write(head.subarray(0, first));
      bytesSent = first;
      timer = setInterval(() => {
        if (Date.now() - started > giveUpMs) {
          closedByClient = true;
          socket.destroy();
          return;
        }
        if (bytesSent < head.length - 2 && !socket.destroyed) {
          socket.write(head.subarray(bytesSent, bytesSent + 1));
          bytesSent++;
        }
      }, everyMs);
    });
    socket.once('close', () => {
      clearInterval(timer);
      resolve({
        bytesSent,
        headSent: bytesSent >= head.length,
        answer,
        closedByServer: !closedByClient,
        elapsedMs: Date.now() - started,
      });
    });
  });
}

/** Opens a connection and sends nothing; resolves once connected, with a function that closes it. */
export function idleConnection(port: number, host: string): Promise<{ socket: net.Socket; close: () => void }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, close: () => socket.destroy() }));
    socket.once('error', reject);
  });
}

/** Whether a fresh connection is served: resolves with the HTTP status, or 'closed' when dropped unanswered. */
export function statusOrClosed(url: string, body: string, headers: Record<string, string>): Promise<number | 'closed'> {
  return rawPost(url, Buffer.from(body), headers).then(
    (a) => a.status,
    () => 'closed' as const,
  );
}
