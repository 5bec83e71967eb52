/**
 * What every route of the console shares, made once at start from its options: the watched namespaces, who may
 * log in and the sessions' keys, the login limiter, the clock, and the host names the console answers to.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Client } from '@temporalio/client';
import type { ListenerLimits } from '../../servers/http/listener';
import { LOGIN_ATTEMPTS, LoginAttempts } from '../../servers/http/login-guard';
import { actorOf, checkConsoleAccess, type AccessOptions, type Actor } from './access';
import { WatchedNamespaces } from './namespaces';
import type { SessionKeys } from './session';

export interface ConsoleOptions extends AccessOptions {
  /** The client of the one namespace to watch; `clients` to watch several. */
  client?: Client;
  /**
   * One client per namespace to watch (CONSOLE_NAMESPACES), all over one connection, each with its namespace's
   * payload keys; the first is the home namespace. Defaults to `[client]`.
   */
  clients?: readonly Client[];
  port?: number;
  /** The task queue order and note runs start on. */
  taskQueue: string;
  /** The Temporal Web UI's address, for a link to each item's history. */
  webUiUrl?: string;
  /**
   * The address operators reach the console at through a proxy (CONSOLE_PUBLIC_URL, e.g. https://console.example):
   * its host is accepted in the Host header and in a POST's Origin, beside the console's own address.
   */
  publicUrl?: string;
  /** How long "check again" waits for the order run's answer before it reports it as still running. */
  checkWaitMs?: number;
  /** Connection cap and timeouts; CONSOLE_LIMITS by default. */
  limits?: Partial<ListenerLimits>;
  /** Login attempts allowed per client address in a window; 5 a minute by default. */
  loginAttempts?: { max: number; windowMs: number };
  now?: () => number;
}

/** The console's state, shared by its routes. */
export interface ConsoleContext {
  readonly options: ConsoleOptions;
  readonly namespaces: WatchedNamespaces;
  readonly now: () => number;
  /** The operators' tokens, by operator; empty when none log in with a token. */
  readonly tokens: Map<string, string>;
  readonly keys: SessionKeys;
  /** Sessions logged out, by id, with when each would have expired (seconds). */
  readonly revoked: Map<string, number>;
  readonly attempts: LoginAttempts;
  /** The Host values (and Origin hosts) the console answers to; known once it listens. */
  selfHosts: Set<string>;
}

/** The console's state from its options; throws ConsoleConfigError on settings that would expose it. */
export function consoleContext(options: ConsoleOptions): ConsoleContext {
  const namespaces = new WatchedNamespaces(options.clients ?? (options.client ? [options.client] : []));
  const tokens = checkConsoleAccess(options);
  return {
    options,
    namespaces,
    now: options.now ?? Date.now,
    tokens,
    keys: {
      secret: options.sessionSecret !== undefined ? Buffer.from(options.sessionSecret) : randomBytes(32),
      tokens,
    },
    revoked: new Map(),
    attempts: new LoginAttempts(
      options.loginAttempts?.max ?? LOGIN_ATTEMPTS.max,
      options.loginAttempts?.windowMs ?? LOGIN_ATTEMPTS.windowMs,
    ),
    selfHosts: new Set(),
  };
}

/** Who is acting on a request: the certificate's subject, a valid session's operator, or loopback; else none. */
export function actorFor(ctx: ConsoleContext, req: IncomingMessage): Actor | undefined {
  const { tls } = ctx.options;
  return actorOf(req, {
    ...(tls ? { tls } : {}),
    keys: ctx.keys,
    revoked: new Set(ctx.revoked.keys()),
    nowMs: ctx.now(),
  });
}

/** Whether a POST comes from the console's own page (a browser sends Origin with every POST). */
export function fromOwnPage(ctx: ConsoleContext, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return origin === undefined || ctx.selfHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase());
}

/** What every page shows around its content: who acts, whether they may log out, the Web UI's address. */
export function linksFor(ctx: ConsoleContext, operator: string) {
  return {
    operator,
    signedIn: ctx.tokens.size > 0,
    namespaces: ctx.namespaces.names,
    ...(ctx.options.webUiUrl ? { webUiUrl: ctx.options.webUiUrl } : {}),
  };
}
