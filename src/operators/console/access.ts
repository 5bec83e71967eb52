/**
 * Who may use the operator console, and who is acting on a request: the settings that say who the operators are
 * (named tokens, one shared token, client certificates, or loopback with none), checked once at start, and the
 * operator a request comes from. What the console records as the actor is only ever what this module returns:
 * the certificate's subject, the operator a valid session names, or `loopback`, never a name typed in a form.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { cookieValues } from '../../servers/http/credentials';
import { isLoopbackHost, type ClientCertificateTls } from '../../servers/http/listener';
import { weakTokenProblem } from '../../servers/http/login-guard';
import { parseTrustedProxy } from './proxy';
import { CONSOLE_SESSION_COOKIE, readConsoleSession, type SessionKeys } from './session';

export class ConsoleConfigError extends Error {
  override readonly name = 'ConsoleConfigError';
}

/** Who `token` (CONSOLE_TOKEN) is recorded as: one token shared by several people names nobody in particular. */
export const SHARED_TOKEN_OPERATOR = 'console-token';

/** Who acts on a console on loopback without TLS or a token: anyone on this machine. */
export const LOOPBACK_OPERATOR = 'loopback';

const OPERATOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** The settings that say who may use the console. */
export interface AccessOptions {
  host?: string;
  /** One operators' token (CONSOLE_TOKEN): whoever logs in with it is recorded as `console-token`. */
  token?: string;
  /** Named operator tokens (CONSOLE_OPERATOR_TOKENS_FILE), by operator: who logs in with one is recorded by name. */
  operators?: Record<string, string>;
  /** The key sessions (and the console's own messages) are signed with (CONSOLE_SESSION_SECRET, 128 bits or more). */
  sessionSecret?: string;
  /**
   * Mutual TLS: HTTPS that takes only client certificates from `clientCa`, with `operatorOu` (default `operators`)
   * in their subject; the operator is the certificate's subject. Tokens are not used then.
   */
  tls?: ClientCertificateTls & { operatorOu?: string };
  /** Addresses (or CIDR blocks) of the proxies in front of the console (CONSOLE_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[];
}

/** Who is acting on a request: the operator recorded, and the login it acts under (what the console's messages are bound to). */
export interface Actor {
  operator: string;
  /** The session id, the certificate's fingerprint, or `loopback`: a message the console made is shown to this login only. */
  login: string;
}

/**
 * The operators' tokens by name, once the settings that say who may use the console are sound: tokens (each of 128
 * bits or more, under valid, distinct names) or client certificates, not both; one of them beyond loopback or behind
 * a proxy; a session secret of 128 bits when given. Throws ConsoleConfigError naming the setting; `npm run console`
 * calls it before it connects to Temporal, startConsole again.
 */
export function checkConsoleAccess(options: AccessOptions): Map<string, string> {
  const host = options.host ?? '127.0.0.1';
  const tokens = operatorTokens(options);
  if (options.tls && tokens.size > 0) {
    throw new ConsoleConfigError(
      'CONSOLE_TOKEN, CONSOLE_OPERATOR_TOKENS_FILE: not used with CONSOLE_TLS_CERT: the client certificate names the ' +
        'operator. Give one of the two.',
    );
  }
  for (const entry of options.trustedProxies ?? []) {
    if (!parseTrustedProxy(entry)) {
      throw new ConsoleConfigError(
        `CONSOLE_TRUSTED_PROXIES: "${entry.slice(0, 60)}" is not an address or a CIDR block (e.g. 10.0.0.5, 10.0.0.0/8, ::1)`,
      );
    }
  }
  const open = !options.tls && tokens.size === 0;
  if (open && !isLoopbackHost(host)) {
    throw new ConsoleConfigError(
      `CONSOLE_TOKEN: required to listen on ${host} (beyond loopback): the console shows bookings and cancels ` +
        'orders. Set operator tokens (CONSOLE_OPERATOR_TOKENS_FILE or CONSOLE_TOKEN, 128 bits each: `openssl rand ' +
        '-hex 32`), serve it with client certificates (CONSOLE_TLS_*), or listen on 127.0.0.1.',
    );
  }
  if (open && (options.trustedProxies ?? []).length > 0) {
    // A proxy on this machine brings in whoever reaches the proxy: "loopback" would no longer mean "on this machine".
    throw new ConsoleConfigError(
      'CONSOLE_TOKEN: required with CONSOLE_TRUSTED_PROXIES: behind a proxy the console is reached from beyond ' +
        'loopback. Set operator tokens (CONSOLE_OPERATOR_TOKENS_FILE or CONSOLE_TOKEN).',
    );
  }
  if (options.sessionSecret !== undefined) {
    const weak = weakTokenProblem('CONSOLE_SESSION_SECRET', options.sessionSecret);
    if (weak) throw new ConsoleConfigError(weak);
  }
  return tokens;
}

/** The operators' tokens by name: `operators` and `token`, each of 128 bits or more, every name valid. */
function operatorTokens(options: Pick<AccessOptions, 'token' | 'operators'>): Map<string, string> {
  const tokens = new Map<string, string>();
  if (options.token !== undefined) {
    const weak = weakTokenProblem('CONSOLE_TOKEN', options.token);
    if (weak) throw new ConsoleConfigError(weak);
    tokens.set(SHARED_TOKEN_OPERATOR, options.token);
  }
  for (const [name, token] of Object.entries(options.operators ?? {})) {
    if (!OPERATOR_NAME.test(name) || tokens.has(name)) {
      throw new ConsoleConfigError(
        `CONSOLE_OPERATOR_TOKENS_FILE: operator "${name.slice(0, 64)}" is ${tokens.has(name) ? 'named twice' : 'not a name (letters, digits, ._@-, up to 64)'}`,
      );
    }
    const weak = weakTokenProblem(`CONSOLE_OPERATOR_TOKENS_FILE (operator ${name})`, token);
    if (weak) throw new ConsoleConfigError(weak);
    if ([...tokens.values()].includes(token)) {
      throw new ConsoleConfigError(`CONSOLE_OPERATOR_TOKENS_FILE: operator ${name} has another operator's token`);
    }
    tokens.set(name, token);
  }
  return tokens;
}

/**
 * The actor of a request, or undefined when nobody is authenticated: the certificate's subject (TLS), the operator a
 * valid session cookie names (tokens), or `loopback` (neither).
 */
export function actorOf(
  req: IncomingMessage,
  how: { tls?: AccessOptions['tls']; keys: SessionKeys; revoked: ReadonlySet<string>; nowMs: number },
): Actor | undefined {
  if (how.tls) return certificateActor(req.socket as TLSSocket, how.tls.operatorOu ?? 'operators');
  if (how.keys.tokens.size === 0) return { operator: LOOPBACK_OPERATOR, login: LOOPBACK_OPERATOR };
  for (const value of cookieValues(req.headers.cookie, CONSOLE_SESSION_COOKIE)) {
    const session = readConsoleSession(how.keys, value, how.nowMs, how.revoked);
    if (session) return { operator: session.operator, login: `session:${session.sessionId}` };
  }
  return undefined;
}

/** The operator a verified client certificate names (its subject), or undefined when its OU is not `operatorOu`. */
function certificateActor(socket: TLSSocket, operatorOu: string): Actor | undefined {
  if (!socket.authorized) return undefined;
  const certificate = socket.getPeerCertificate();
  const subject = certificate?.subject as unknown as Record<string, string | string[]> | undefined;
  if (!subject) return undefined;
  const ous = [subject.OU ?? []].flat();
  if (!ous.includes(operatorOu)) return undefined;
  const part = (k: string) => [subject[k] ?? []].flat().map((v) => `${k}=${v}`);
  const operator = [...part('CN'), ...part('OU'), ...part('O')].join(',').slice(0, 200);
  return { operator, login: `certificate:${certificate.fingerprint256}` };
}
