/**
 * The production topology's settings, read from the file docker-compose.yml also reads
 * (infra/temporal-server.env), so the one-machine launcher and compose cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const SERVER_ENV_FILE = path.resolve(__dirname, '../../infra/temporal-server.env');

/** KEY=VALUE lines; `#` comments and blank lines skipped (the subset docker compose's env_file reads alike). */
export function readEnvFile(file: string): Record<string, string> {
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`${file}: not KEY=VALUE: ${line}`);
      return [line.slice(0, at), line.slice(at + 1)] as const;
    });
  return Object.fromEntries(entries);
}

function topology(env: Record<string, string>) {
  if (env.POSTGRES_PWD !== undefined) {
    throw new Error(
      `${SERVER_ENV_FILE}: POSTGRES_PWD: no password in the settings file; every installation makes its own`,
    );
  }
  const need = (key: string) => {
    const value = env[key];
    if (value === undefined) throw new Error(`${SERVER_ENV_FILE}: ${key} is missing`);
    return value;
  };
  const count = (key: string) => {
    const value = Number(need(key));
    if (!Number.isInteger(value) || value <= 0)
      throw new Error(`${SERVER_ENV_FILE}: ${key} must be a positive integer`);
    return value;
  };
  return {
    /** Server nodes, each running frontend, history, matching and worker. */
    serverNodes: 2,
    historyShards: count('NUM_HISTORY_SHARDS'),
    /** The database user; its password is each installation's own (compose's secret, the launcher's per folder). */
    postgres: { user: need('POSTGRES_USER') },
    databases: { default: need('DBNAME'), visibility: need('VISIBILITY_DBNAME') },
    persistence: { maxConns: count('SQL_MAX_CONNS'), visibilityMaxConns: count('SQL_VIS_MAX_CONNS') },
    /** How long closed workflows stay visible (registered with the namespace). */
    retentionDays: 3,
  };
}

export const PROD_TOPOLOGY = topology(readEnvFile(SERVER_ENV_FILE));
