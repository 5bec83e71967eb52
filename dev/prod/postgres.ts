/**
 * A private PostgreSQL cluster for the production topology: its own data folder and port, created on the
 * first start and reused after, so a second `npm run stack:prod` finds its bookings again.
 *
 * PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user (Debian's
 * package creates it) and its data lives where that user can reach it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import versions from '../temporal/versions.json';

export interface PostgresOptions {
  /** The stack's data folder; the cluster lives in `<dataDir>/postgres` when its user can reach it. */
  dataDir: string;
  port: number;
  user: string;
  /** Folder of initdb, pg_ctl and postgres (default: Debian's for the pinned major version). */
  binDir?: string;
}

export interface Postgres {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Where the cluster's files are. */
  pgData: string;
  /** pg_ctl stop -m fast then start: what an operator's restart or a failover looks like to Temporal. */
  restart(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = () => process.getuid?.() === 0;

/** Runs a PostgreSQL tool as the user that owns the cluster. */
function run(binDir: string, tool: string, args: string[], options: { allowFailure?: boolean } = {}): string {
  const file = path.join(binDir, tool);
  const [cmd, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8', cwd: '/' });
  if (result.status !== 0 && !options.allowFailure)
    throw new Error(`${tool} ${args[0] ?? ''} failed (exit ${result.status}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** True when the postgres user can reach (and so own a folder inside) `dir`. */
function reachableByPostgres(dir: string): boolean {
  return spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', dir], { cwd: '/' }).status === 0;
}

/** As root, a data folder under a home the postgres user cannot enter moves to /var/tmp, keyed by the stack's folder. */
export function pgDataFor(dataDir: string): string {
  const inside = path.join(dataDir, 'postgres');
  if (!asRoot()) return inside;
  mkdirSync(dataDir, { recursive: true });
  if (reachableByPostgres(dataDir)) return inside;
  const key = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12);
  return path.join('/var/tmp/hotel-booking-orchestrator', `postgres-${key}`);
}

function initCluster(binDir: string, pgData: string, user: string, password: string): void {
  // The parent holds initdb's password file, which the postgres user reads: only the cluster's own folder is
  // private (a recursive mkdir with 0700 would also close a new parent, as /var/tmp/hotel-booking-orchestrator).
  mkdirSync(path.dirname(pgData), { recursive: true });
  mkdirSync(pgData, { recursive: true, mode: 0o700 });
  if (asRoot()) execFileSync('chown', ['-R', 'postgres:postgres', pgData]);
  // The password file must be readable by the cluster's user only for the moment initdb reads it.
  const pwfile = path.join(pgData, '..', `.pwfile-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot()) execFileSync('chown', ['postgres:postgres', pwfile]);
  try {
    run(binDir, 'initdb', [
      '-D',
      pgData,
      '-U',
      user,
      `--pwfile=${pwfile}`,
      '--auth-host=scram-sha-256',
      '--auth-local=trust',
      '-E',
      'UTF8',
      '--no-instructions',
    ]);
  } finally {
    execFileSync('rm', ['-f', pwfile]);
  }
}

/**
 * Settings for the cluster (on the command line, so the data folder stays initdb's own):
 * two Temporal nodes each open a pool per service and store, well past PostgreSQL's default 100 connections.
 */
export const POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  max_connections: '400',
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  shared_buffers: '256MB',
};

/**
 * The cluster's password: random, made with the cluster and kept beside it in `<dataDir>/postgres-password` (mode
 * 0600, the launcher's only), so no two data folders share one and none is written in the repository.
 */
function clusterPassword(dataDir: string, fresh: boolean, pgData: string): string {
  const file = path.join(dataDir, 'postgres-password');
  if (fresh) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  } else if (!existsSync(file)) {
    throw new Error(
      `${pgData} has no password file (${file}): it was made before each data folder had its own password. ` +
        `Remove ${pgData} (its bookings go with it) and start again.`,
    );
  }
  return readFileSync(file, 'utf8').trim();
}

export async function startPostgres(options: PostgresOptions): Promise<Postgres> {
  const binDir = options.binDir ?? `/usr/lib/postgresql/${versions.postgres}/bin`;
  if (!existsSync(path.join(binDir, 'pg_ctl')))
    throw new Error(`PostgreSQL ${versions.postgres} not found in ${binDir} (Debian: apt-get install postgresql-15)`);
  const pgData = pgDataFor(options.dataDir);
  const fresh = !existsSync(pgData) || readdirSync(pgData).length === 0;
  const password = clusterPassword(options.dataDir, fresh, pgData);
  if (fresh) initCluster(binDir, pgData, options.user, password);
  if (asRoot()) chmodSync(pgData, 0o700);

  const settings = { ...POSTGRES_SETTINGS, port: String(options.port) };
  const opts = Object.entries(settings)
    .map(([key, value]) => `-c ${key}=${value === '' ? "''" : value}`)
    .join(' ');
  const logFile = path.join(pgData, 'server.log');
  const start = async () => {
    run(binDir, 'pg_ctl', ['start', '-D', pgData, '-w', '-t', '60', '-l', logFile, '-o', opts]);
  };
  const stop = async () => {
    run(binDir, 'pg_ctl', ['stop', '-D', pgData, '-m', 'fast', '-w', '-t', '60'], { allowFailure: true });
  };
  // A cluster left running by a killed launcher is stopped first, so it restarts with today's settings.
  if (!fresh) await stop();
  await start();
  // If this process exits without stopping the cluster (an uncaught error, a second Ctrl-C), stop it
  // anyway, at once: nothing the launcher started may outlive it.
  const stopNow = () => run(binDir, 'pg_ctl', ['stop', '-D', pgData, '-m', 'immediate'], { allowFailure: true });
  process.on('exit', stopNow);
  return {
    host: '127.0.0.1',
    port: options.port,
    user: options.user,
    password,
    pgData,
    start,
    async restart() {
      await stop();
      await start();
    },
    async stop() {
      process.off('exit', stopNow);
      await stop();
    },
  };
}
