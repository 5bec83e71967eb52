/**
 * The limits every listener that faces a network holds strangers to, in one place for the codec server and the
 * operator console (the callback receiver, src/servers/callbacks/server.ts, sets the same four by hand): headers within
 * 10 s, the whole request within 30 s, both checked every second (Node's default check, every 30 s, would let a
 * slow client hold a socket for up to 40 s), and at most `maxConnections` sockets open at once, any more closed
 * unanswered. Plus listening and closing, which every one of them does alike.
 */
import http, { type RequestListener } from 'node:http';
import https from 'node:https';
import { isIPv4, type AddressInfo } from 'node:net';
import type { SecureContextOptions } from 'node:tls';

export interface ListenerLimits {
  /** Open sockets at most (server.maxConnections); more are closed at once, unanswered. */
  maxConnections: number;
  /** How long a client may take to send its headers (server.headersTimeout). */
  headersTimeoutMs: number;
  /** How long a client may take to send the whole request (server.requestTimeout). */
  requestTimeoutMs: number;
}

/** The callback receiver's limits: what a listener holds a stranger to unless it says otherwise. */
export const LISTENER_DEFAULTS: ListenerLimits = {
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/**
 * TLS for a listener that authenticates its clients by certificate: the server's pair, and the CA whose client
 * certificates it takes (every other client is refused in the handshake).
 */
export interface ClientCertificateTls extends Pick<SecureContextOptions, 'cert' | 'key'> {
  /** The CA (PEM) a client's certificate must chain to. */
  clientCa: string | Buffer;
}

/** An HTTP (or, with `tls`, HTTPS requiring a client certificate) server held to `limits`. */
export function boundedServer(
  limits: Partial<ListenerLimits>,
  handler: RequestListener,
  tls?: ClientCertificateTls,
): http.Server {
  const l = { ...LISTENER_DEFAULTS, ...limits };
  const options = {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    // Node checks both timeouts on this interval (30 s by default, which would let a slow client hold on longer).
    connectionsCheckingInterval: 1_000,
  };
  const server = tls
    ? https.createServer(
        {
          ...options,
          cert: tls.cert,
          key: tls.key,
          ca: tls.clientCa,
          requestCert: true,
          rejectUnauthorized: true,
          // A TLS handshake that never ends holds a socket too: it gets the headers' time.
          handshakeTimeout: l.headersTimeoutMs,
        },
        handler,
      )
    : http.createServer(options, handler);
  server.maxConnections = l.maxConnections;
  return server;
}

/** Listens on `host`:`port` (0 picks a free port); resolves once listening, rejects when the port is taken. */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops listening and drops every open connection, idle or not. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** `http://host:port`, with an IPv6 host in brackets. */
export function urlOf(host: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1]!.startsWith('127.');
}
