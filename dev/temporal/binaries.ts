/**
 * Finds the real Temporal servers this project runs: the Temporal CLI (dev server with the Web UI) and
 * the Java time-skipping test server.
 *
 * The SDK would download both from the internet at run time, which fails on locked-down machines and
 * in CI. So the order is: an explicit path (TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH) → a build
 * cached by scripts/install-temporal.sh → a build from the package registries now (Go module proxy,
 * Maven Central) → the SDK's own download, where the internet is reachable.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

import versions from './versions.json';

/** Pinned versions, shared with scripts/install-temporal.sh and checked against docker-compose.yml by a test. */
export const TEMPORAL_VERSIONS = versions;
export const TEMPORAL_CLI_VERSION = versions.cli;
export const TEMPORAL_TEST_SERVER_VERSION = versions.testServer;

export type ServerExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };
export type ServerKind = 'cli' | 'test-server';

const INSTALL_SCRIPT = path.resolve(__dirname, '../../scripts/install-temporal.sh');

function cacheDir(env: NodeJS.ProcessEnv): string {
  return env.TEMPORAL_BIN_CACHE ?? path.join(homedir(), '.cache', 'hotel-booking-orchestrator');
}

/** Where scripts/install-temporal.sh puts each executable. */
export function cachedPath(kind: ServerKind, env: NodeJS.ProcessEnv = process.env): string {
  return kind === 'cli'
    ? path.join(cacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal')
    : path.join(cacheDir(env), `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`, 'temporal-test-server');
}

/** The production engine's executables (scripts/install-temporal.sh prod builds them; not built on demand). */
export interface ProdBinaries {
  server: string;
  /**
   * temporal-server with the certificate-subject claim mapper and the certificate-roles authorizer
   * (dev/temporal/authz-server): the nodes' binary when the topology runs with mutual TLS.
   */
  serverAuthz: string;
  sqlTool: string;
  /** PostgreSQL schema folders shipped with the server module (`<schemaDir>/v12/{temporal,visibility}/versioned`). */
  schemaDir: string;
  uiServer: string;
}

export function prodBinaries(env: NodeJS.ProcessEnv = process.env): ProdBinaries {
  const serverDir = path.join(cacheDir(env), `temporal-server-${versions.server}`);
  return {
    server: env.TEMPORAL_SERVER_PATH ?? path.join(serverDir, 'temporal-server'),
    serverAuthz: env.TEMPORAL_SERVER_AUTHZ_PATH ?? path.join(serverDir, `temporal-server-authz-${authzSourceHash()}`),
    sqlTool: env.TEMPORAL_SQL_TOOL_PATH ?? path.join(serverDir, 'temporal-sql-tool'),
    schemaDir: env.TEMPORAL_SCHEMA_DIR ?? path.join(serverDir, 'schema', 'postgresql'),
    uiServer: env.TEMPORAL_UI_SERVER_PATH ?? path.join(cacheDir(env), `temporal-ui-server-${versions.ui}`, 'ui-server'),
  };
}

/**
 * A short hash of the authorizing server's sources: a change to them names a new binary, which install-temporal.sh
 * builds (the same hash, computed there with sha256sum over the same files in the same order).
 */
export function authzSourceHash(): string {
  const dir = path.resolve(__dirname, 'authz-server');
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(path.join(dir, file)));
  return hash.digest('hex').slice(0, 12);
}

/** Resolves the production engine, building it from the Go module proxy once when it is missing. */
export function resolveProdBinaries(env: NodeJS.ProcessEnv = process.env): ProdBinaries {
  const found = prodBinaries(env);
  const missing = () => Object.values(found).filter((file) => !existsSync(file));
  if (missing().length > 0 && hasCommand('go')) {
    process.stderr.write(`Building the Temporal server and Web UI from the Go module proxy (once)...\n`);
    execFileSync('bash', [INSTALL_SCRIPT, 'prod'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  }
  if (missing().length > 0)
    throw new Error(`Production engine not found (${missing().join(', ')}): run \`npm run temporal:install -- prod\``);
  return found;
}

/** A cached test server is only usable while every jar on its classpath is still in the Maven repository. */
function cacheUsable(kind: ServerKind, file: string): boolean {
  if (!existsSync(file)) return false;
  if (kind === 'cli') return true;
  const classpath = path.join(path.dirname(file), 'classpath.txt');
  if (!existsSync(classpath)) return false;
  return readFileSync(classpath, 'utf8')
    .trim()
    .split(path.delimiter)
    .every((jar) => existsSync(jar));
}

function hasCommand(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves one server executable, building it from registries when needed. Set
 * TEMPORAL_ALLOW_SDK_DOWNLOAD=0 to fail instead of falling back to the SDK's download.
 */
export function resolveServerExecutable(kind: ServerKind, env: NodeJS.ProcessEnv = process.env): ServerExecutable {
  const explicit = kind === 'cli' ? env.TEMPORAL_CLI_PATH : env.TEMPORAL_TEST_SERVER_PATH;
  const variable = kind === 'cli' ? 'TEMPORAL_CLI_PATH' : 'TEMPORAL_TEST_SERVER_PATH';
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`${variable}=${explicit}: no such file`);
    return { type: 'existing-path', path: explicit };
  }
  const cached = cachedPath(kind, env);
  if (cacheUsable(kind, cached)) return { type: 'existing-path', path: cached };

  const tool = kind === 'cli' ? 'go' : 'mvn';
  if (hasCommand(tool)) {
    process.stderr.write(`Building the Temporal ${kind} from registries into ${path.dirname(cached)} (once)...\n`);
    execFileSync('bash', [INSTALL_SCRIPT, kind], { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (cacheUsable(kind, cached)) return { type: 'existing-path', path: cached };
  }
  if (env.TEMPORAL_ALLOW_SDK_DOWNLOAD === '0') {
    throw new Error(
      `No Temporal ${kind} found. Run \`npm run temporal:install\` (needs ${kind === 'cli' ? 'Go' : 'Java 17 and Maven'}), ` +
        `or set ${variable} to an existing executable.`,
    );
  }
  // Last resort: let the SDK download it (works only where the internet is reachable).
  return { type: 'cached-download' };
}
