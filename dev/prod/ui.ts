/**
 * The standalone Temporal Web UI server (temporalio/ui-server), pointed at the cluster's frontend address,
 * as the `temporalio/ui` image runs it in docker-compose.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { resolveProdBinaries } from '../temporal/binaries';
import { waitForPort } from '../temporal/dev-server';

/** The UI server's `tls` section (server/config/config.go in ui-server v2.42: TLS). */
export interface WebUiTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  serverName: string;
}

/**
 * The UI server's TLS settings from Temporal's own client variables (TEMPORAL_TLS_CLIENT_CERT_PATH,
 * TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME), as every other
 * process of the stack gets them; undefined when none is set. The UI server's own config names them
 * differently (tls.caFile, certFile, keyFile, serverName; TEMPORAL_TLS_CA/CERT/KEY in its docker image).
 */
export function webUiTlsFromEnv(env: Record<string, string | undefined>): WebUiTls | undefined {
  const names = {
    caFile: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    certFile: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    keyFile: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    serverName: 'TEMPORAL_TLS_SERVER_NAME',
  } as const;
  if (Object.values(names).every((name) => !env[name])) return undefined;
  const missing = Object.values(names).filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`the Web UI server's TLS needs ${missing.join(', ')} as well`);
  return {
    caFile: env[names.caFile]!,
    certFile: env[names.certFile]!,
    keyFile: env[names.keyFile]!,
    serverName: env[names.serverName]!,
  };
}

export interface WebUi {
  url: string;
  stop(): Promise<void>;
}

export async function startWebUi(options: {
  dataDir: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  codecEndpoint?: string;
  /**
   * The browser sends cookies with its calls to the codec endpoint (the UI server's `codec.includeCredentials`):
   * the codec server's session cookie from its `/login`, when the codec server requires a token.
   */
  codecIncludeCredentials?: boolean;
  /** Mutual TLS to the frontend (webUiTlsFromEnv); plaintext without. */
  tls?: WebUiTls;
}): Promise<WebUi> {
  const bin = resolveProdBinaries();
  const root = path.join(options.dataDir, 'ui');
  mkdirSync(path.join(root, 'config'), { recursive: true });
  const config = {
    temporalGrpcAddress: options.temporalAddress,
    host: '127.0.0.1',
    port: options.port,
    enableUi: true,
    defaultNamespace: options.namespace,
    notifyOnNewVersion: false,
    // Plain HTTP on loopback: the CSRF cookie must not require TLS.
    cors: { cookieInsecure: true, allowOrigins: [`http://127.0.0.1:${options.port}`] },
    ...(options.codecEndpoint
      ? { codec: { endpoint: options.codecEndpoint, includeCredentials: options.codecIncludeCredentials ?? false } }
      : {}),
    // The UI server skips checking the frontend's certificate unless told to (enableHostVerification).
    ...(options.tls ? { tls: { ...options.tls, enableHostVerification: true } } : {}),
  };
  writeFileSync(path.join(root, 'config', 'stack.yaml'), stringify(config));
  const out = createWriteStream(path.join(options.dataDir, 'logs', 'web-ui.log'), { flags: 'a' });
  const child = spawn(bin.uiServer, ['--root', root, '--config', 'config', '--env', 'stack', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // One file for both streams, ended once the process is gone (see startNode in ./cluster.ts).
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  child.once('close', () => out.end());
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = await Promise.race([
    waitForPort('127.0.0.1', options.port, 60_000).then(() => true),
    exited.then(() => false),
  ]);
  if (!started) throw new Error(`the Web UI server exited at start; see ${options.dataDir}/logs/web-ui.log`);
  return {
    url: `http://127.0.0.1:${options.port}`,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
