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
 * (src/servers/http/listener: headers within 10 s, the request within 30 s, at most 100 sockets).
 *
 * Behind a proxy (./proxy.ts): the client's address (what the login limiter counts by) and whether it came over TLS
 * (the session cookie is `Secure` then) are taken from `X-Forwarded-For` / `X-Forwarded-Proto` of the proxies named
 * in `trustedProxies` only. The page renders nothing from its address but the console's own signed message (./flash).
 *
 * This file is the wiring: who may reach which route (./routes/*), and the listener. What the routes share is made
 * once in ./context.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  boundedServer,
  closeServer,
  isLoopbackHost,
  listen,
  urlOf,
  type ListenerLimits,
} from '../../servers/http/listener';
import { actorFor, consoleContext, type ConsoleContext, type ConsoleOptions } from './context';
import { escapeHtml } from './page';
import { requestOrigin, TrustedProxies } from './proxy';
import { send } from './respond';
import { actionRoute } from './routes/actions';
import { bookingRoute } from './routes/booking';
import { listRoute } from './routes/list';
import { loginRoute, logoutRoute } from './routes/login';

export {
  checkConsoleAccess,
  ConsoleConfigError,
  LOOPBACK_OPERATOR,
  SHARED_TOKEN_OPERATOR,
  type AccessOptions,
} from './access';
export type { ConsoleOptions } from './context';
export { listingProblem } from './routes/list';

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

/** Starts the console on `options.port` (any free port by default); throws ConsoleConfigError on unsafe settings. */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const ctx = consoleContext(options);
  const proxies = new TrustedProxies(options.trustedProxies);
  const server = boundedServer(
    { ...CONSOLE_LIMITS, ...options.limits },
    (req, res) => {
      route(ctx, proxies, req, res).catch((err) => {
        if (!res.headersSent) send(res, 500, 'internal error');
        console.error('console: request failed', err instanceof Error ? err.message : err);
      });
    },
    options.tls,
  );
  const port = await listen(server, options.port ?? 0, host);
  const publicHost = options.publicUrl ? new URL(options.publicUrl).host.toLowerCase() : undefined;
  const names = isLoopbackHost(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host];
  ctx.selfHosts = new Set([...names.map((n) => `${n}:${port}`.toLowerCase()), ...(publicHost ? [publicHost] : [])]);
  return { url: urlOf(host, port, options.tls ? 'https' : 'http'), close: () => closeServer(server) };
}

/** Which route answers a request: the host checked first, login and logout before anyone is known, the rest after. */
async function route(
  ctx: ConsoleContext,
  proxies: TrustedProxies,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // DNS rebinding: a page elsewhere that resolves its own name to this address must not be served.
  if (!ctx.selfHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, 'wrong host');
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const from = requestOrigin(req, proxies);
  const loginOn = ctx.tokens.size > 0;
  if (url.pathname === '/login' && loginOn) return loginRoute(ctx, req, res, from);
  if (url.pathname === '/logout' && req.method === 'POST' && loginOn) return logoutRoute(ctx, req, res, from);
  const who = actorFor(ctx, req);
  if (who === undefined) return refuse(ctx, res);
  if (req.method === 'GET' && url.pathname === '/') return listRoute(ctx, url, who, res);
  if (req.method === 'GET' && url.pathname === '/booking') return bookingRoute(ctx, url, who, res);
  if (req.method === 'POST' && url.pathname.startsWith('/actions/')) return actionRoute(ctx, req, url, who, res);
  send(res, 404, 'not found');
}

/** No operator known: 403 naming the OU a certificate needs behind TLS, else 401 with a link to log in. */
function refuse(ctx: ConsoleContext, res: ServerResponse): void {
  const { tls } = ctx.options;
  if (tls) {
    return send(
      res,
      403,
      `forbidden: only a certificate of OU=${escapeHtml(tls.operatorOu ?? 'operators')} may use the console`,
    );
  }
  send(res, 401, 'unauthorized: <a href="/login">log in</a>');
}
