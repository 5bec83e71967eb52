/**
 * Runs the Temporal CLI's dev server (server + embedded Web UI) as a child process, for `npm start`.
 * Tests use the SDK's TestWorkflowEnvironment with the same executable instead (test/harness).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parse } from 'yaml';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../src/api/contract/index';

export const DYNAMIC_CONFIG_FILE = path.resolve(__dirname, '../../infra/dynamicconfig/booking.yaml');

/**
 * The dynamic config every server we start gets, read from the file docker-compose and `npm run stack:prod`
 * use, as the dev server's `KEY=JSON` flag values. Only unconstrained (cluster-wide) values can be
 * flags; a constrained entry in the file is refused here rather than silently widened.
 */
export function readDynamicConfig(file: string = DYNAMIC_CONFIG_FILE): Record<string, string> {
  const doc = (parse(readFileSync(file, 'utf8')) ?? {}) as Record<
    string,
    Array<{ value: unknown; constraints?: unknown }>
  >;
  return Object.fromEntries(
    Object.entries(doc).map(([key, entries]) => {
      if (entries.length !== 1 || entries[0]!.constraints !== undefined)
        throw new Error(`${file}: ${key} has constraints; the dev server takes one cluster-wide value`);
      return [key, JSON.stringify(entries[0]!.value)];
    }),
  );
}

/** Server settings every server we start gets (see infra/dynamicconfig/booking.yaml for why each). */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = readDynamicConfig();

/** `--dynamic-config-value K=V` flags for the CLI dev server. */
export function dynamicConfigArgs(config: Readonly<Record<string, string>> = SERVER_DYNAMIC_CONFIG): string[] {
  return Object.entries(config).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
}

export interface DevServerOptions {
  cliPath: string;
  ip?: string;
  port: number;
  uiPort: number;
  /** SQLite file: workflows survive a restart. */
  dbFile: string;
  namespace?: string;
  /** Passed to the UI so it can decode encrypted payloads. */
  codecEndpoint?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Register the workflow's search attributes at start (default); false: a bare server, as others run it. */
  searchAttributes?: boolean;
}

export interface DevServer {
  address: string;
  uiUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  mkdirSync(path.dirname(options.dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--db-filename',
    options.dbFile,
    '--namespace',
    options.namespace ?? 'default',
    '--log-level',
    options.logLevel ?? 'warn',
    ...(options.searchAttributes === false
      ? []
      : SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', `${sa.name}=${sa.type}`])),
    ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
    ...dynamicConfigArgs(),
  ];
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = Promise.all([
    waitForPort(ip, options.port, 60_000).then(() => waitForFrontend(`${ip}:${options.port}`, 60_000)),
    waitForPort(ip, options.uiPort, 60_000),
  ]);
  const first = await Promise.race([ready.then(() => 'ready' as const), exited.then((code) => code)]);
  if (first !== 'ready') throw new Error(`Temporal dev server exited with code ${first} before it was ready`);

  return {
    address: `${ip}:${options.port}`,
    uiUrl: `http://${ip}:${options.uiPort}`,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Resolves once the frontend answers a client (the SDK's connect asks for its system info): it opens its port before
 * it serves, and a client that connects in between is told "Frontend is not healthy yet".
 */
async function waitForFrontend(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: '2 seconds' });
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`Nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A TCP port nothing listens on right now (on 127.0.0.1), for servers started on free ports. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
