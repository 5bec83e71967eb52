/**
 * `npm run console`: the operator console on its own (`npm start` runs it beside the worker). Configured by
 * CONSOLE_HOST, CONSOLE_PORT, who the operators are (named tokens in CONSOLE_OPERATOR_TOKENS_FILE, one shared
 * CONSOLE_TOKEN, or client certificates: CONSOLE_TLS_CERT, CONSOLE_TLS_KEY, CONSOLE_TLS_CLIENT_CA), the session key
 * CONSOLE_SESSION_SECRET, the namespaces it watches (CONSOLE_NAMESPACES, with CONSOLE_NAMESPACE_KEYS_FILE for those
 * with payload keys of their own), the proxies in front of it (CONSOLE_TRUSTED_PROXIES, CONSOLE_PUBLIC_URL),
 * TEMPORAL_UI_URL, BOOKING_TASK_QUEUE, Temporal's own connection variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_TLS_*) and the workers' PAYLOAD_ENCRYPTION_KEYS / PAYLOAD_ENCRYPTION_KEY_ID, with which it reads results
 * server-side. Every secret may come from a file (`<name>_FILE`: compose secrets). Beyond loopback it will not start
 * without tokens or client certificates.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { connectClient } from '../../api/client/index';
import { DEFAULT_TASK_QUEUE } from '../../api/contract/index';
import { dataConverterFor, EncryptionEnv, encryptionFromEnv } from '../../api/codec/config';
import { withSecretFiles } from '../../runtime/config/secret-files';
import { ConsoleConfigError } from './access';
import { namespaceClients, parseNamespaceKeys, parseNamespaceList } from './namespaces';
import { checkConsoleAccess, startConsole, type ConsoleOptions } from './server';

const unsetIfEmpty = (v: unknown) => (v === '' ? undefined : v);

/** The settings that may be given as a file (`<name>_FILE`). */
export const CONSOLE_SECRETS = ['CONSOLE_TOKEN', 'CONSOLE_SESSION_SECRET', 'PAYLOAD_ENCRYPTION_KEYS'] as const;

export const ConsoleEnv = z.object({
  /** Interface to listen on; beyond loopback operator tokens or client certificates are required. */
  CONSOLE_HOST: z.string().default('127.0.0.1'),
  CONSOLE_PORT: z.coerce.number().int().nonnegative().default(8238),
  /** One token for every operator (recorded as `console-token`), typed into `/login`; 128 bits or more. */
  CONSOLE_TOKEN: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /**
   * A file of `name:token` lines, one per operator (`#` comments): who logs in with a token is recorded by its
   * name in notes and cancellations. 128 bits or more each (`openssl rand -hex 32`).
   */
  CONSOLE_OPERATOR_TOKENS_FILE: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** The key sessions are signed with, 128 bits or more; random at each start when unset (log in again then). */
  CONSOLE_SESSION_SECRET: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** HTTPS with client certificates: the console's certificate and key (PEM files)... */
  CONSOLE_TLS_CERT: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  CONSOLE_TLS_KEY: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** ...and the CA operators' certificates chain to; the operator is the certificate's subject. */
  CONSOLE_TLS_CLIENT_CA: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** The OU a client certificate must have to use the console. */
  CONSOLE_OPERATOR_OU: z.string().min(1).default('operators'),
  /**
   * The namespaces whose items it lists and acts on, comma-separated (`default,partner-acme`), over one connection;
   * unset: TEMPORAL_NAMESPACE only. A request naming another namespace is refused.
   */
  CONSOLE_NAMESPACES: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** A file of `namespace=keyId:base64key,…` lines: the payload keys of a namespace whose worker has its own. */
  CONSOLE_NAMESPACE_KEYS_FILE: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /**
   * Addresses or CIDR blocks of the proxies in front of it, comma-separated; their X-Forwarded-For and
   * X-Forwarded-Proto are believed (the login limit counts by the client's address, the cookie is Secure over https).
   */
  CONSOLE_TRUSTED_PROXIES: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
  /** The address operators use through a proxy (https://console.example): its host is accepted as Host and Origin. */
  CONSOLE_PUBLIC_URL: z.preprocess(unsetIfEmpty, z.url().optional()),
  /** The Temporal Web UI's address, for a link to each item's history. */
  TEMPORAL_UI_URL: z.url().optional(),
  BOOKING_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
});

/** `name:token` lines (blank lines and `#` comments skipped) as tokens by operator name. */
export function parseOperatorTokens(text: string): Record<string, string> {
  const operators: Record<string, string> = {};
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const at = line.indexOf(':');
    if (at <= 0) throw new Error(`CONSOLE_OPERATOR_TOKENS_FILE: line ${i + 1} is not name:token`);
    operators[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return operators;
}

async function main(): Promise<void> {
  const { env, issues } = withSecretFiles(process.env, CONSOLE_SECRETS);
  const parsed = ConsoleEnv.safeParse(env);
  if (!parsed.success) issues.push(...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  if (!parsed.success || issues.length > 0) throw new Error(`Invalid configuration:\n  ${issues.join('\n  ')}`);
  const e = parsed.data;
  const tlsFiles = [e.CONSOLE_TLS_CERT, e.CONSOLE_TLS_KEY, e.CONSOLE_TLS_CLIENT_CA];
  if (tlsFiles.some(Boolean) && !tlsFiles.every(Boolean)) {
    throw new Error(
      'Invalid configuration:\n  CONSOLE_TLS_CERT, CONSOLE_TLS_KEY, CONSOLE_TLS_CLIENT_CA: give all three or none',
    );
  }
  const access: Pick<ConsoleOptions, 'host' | 'token' | 'operators' | 'sessionSecret' | 'tls' | 'trustedProxies'> = {
    host: e.CONSOLE_HOST,
    ...(e.CONSOLE_TRUSTED_PROXIES
      ? {
          trustedProxies: e.CONSOLE_TRUSTED_PROXIES.split(',')
            .map((p) => p.trim())
            .filter(Boolean),
        }
      : {}),
    token: e.CONSOLE_TOKEN,
    ...(e.CONSOLE_OPERATOR_TOKENS_FILE
      ? { operators: parseOperatorTokens(readFileSync(e.CONSOLE_OPERATOR_TOKENS_FILE, 'utf8')) }
      : {}),
    ...(e.CONSOLE_SESSION_SECRET ? { sessionSecret: e.CONSOLE_SESSION_SECRET } : {}),
    ...(e.CONSOLE_TLS_CERT
      ? {
          tls: {
            cert: readFileSync(e.CONSOLE_TLS_CERT),
            key: readFileSync(e.CONSOLE_TLS_KEY!),
            clientCa: readFileSync(e.CONSOLE_TLS_CLIENT_CA!),
            operatorOu: e.CONSOLE_OPERATOR_OU,
          },
        }
      : {}),
  };
  // Refused before anything is connected: a weak token or a missing one beyond loopback names its setting.
  checkConsoleAccess(access);
  const listed = e.CONSOLE_NAMESPACES ? parseNamespaceList(e.CONSOLE_NAMESPACES) : undefined;
  const ownKeys = e.CONSOLE_NAMESPACE_KEYS_FILE
    ? parseNamespaceKeys(readFileSync(e.CONSOLE_NAMESPACE_KEYS_FILE, 'utf8'))
    : new Map();
  const home = await connectClient(env);
  const namespaces = listed ?? [home.options.namespace];
  const stray = [...ownKeys.keys()].find((ns) => !namespaces.includes(ns));
  if (stray) throw new ConsoleConfigError(`CONSOLE_NAMESPACE_KEYS_FILE: namespace ${stray} is not watched`);
  // connectClient has checked these already; every namespace without keys of its own reads with them.
  const { encryption } = encryptionFromEnv(EncryptionEnv.parse(env));
  const server = await startConsole({
    ...access,
    clients: namespaceClients(home, namespaces, (ns) => dataConverterFor(ownKeys.get(ns) ?? encryption)),
    port: e.CONSOLE_PORT,
    taskQueue: e.BOOKING_TASK_QUEUE,
    ...(e.TEMPORAL_UI_URL ? { webUiUrl: e.TEMPORAL_UI_URL } : {}),
    ...(e.CONSOLE_PUBLIC_URL ? { publicUrl: e.CONSOLE_PUBLIC_URL } : {}),
  });
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const how = e.CONSOLE_TLS_CERT
    ? `client certificates of OU=${e.CONSOLE_OPERATOR_OU}`
    : e.CONSOLE_TOKEN || e.CONSOLE_OPERATOR_TOKENS_FILE
      ? `operators log in at ${server.url}/login`
      : 'loopback only, no login';
  console.log(`Operator console on ${server.url} (${how}), watching ${namespaces.join(', ')}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
