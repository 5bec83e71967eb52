/**
 * docker-compose.yml and the one-machine launcher (dev/prod, `npm run stack:prod`) describe the same
 * production topology: the same pinned versions, the same server settings file, the same dynamic config,
 * the same number of server nodes. Neither can be run by the other's tooling here (no Docker engine), so
 * this is what keeps them from drifting apart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import versions from '../../dev/temporal/versions.json';
import { DYNAMIC_CONFIG_FILE, serverConfig } from '../../dev/prod/cluster';
import { PROD_TOPOLOGY, SERVER_ENV_FILE, readEnvFile } from '../../dev/prod/topology';
import { readDynamicConfig, SERVER_DYNAMIC_CONFIG } from '../../dev/temporal/dev-server';
import { PLACEHOLDER_NODE_PORTS } from '../fixtures/node-ports';

const REPO = path.resolve(__dirname, '../..');
type Service = {
  image?: string;
  env_file?: string | string[];
  environment?: Record<string, string>;
  volumes?: string[];
  command?: string[];
};
const compose = parse(readFileSync(path.join(REPO, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = Object.entries(compose.services);
const byImage = (prefix: string) => services.filter(([, s]) => s.image?.startsWith(prefix));
const serverEnv = readEnvFile(SERVER_ENV_FILE);
const bare = (v: string) => v.replace(/^v/, '');
const envFiles = (s: Service) => [s.env_file ?? []].flat().map((f) => path.resolve(REPO, f));

test('compose runs as many Temporal server nodes as the launcher, all on the pinned server version', () => {
  const nodes = byImage('temporalio/server:');
  expect(nodes).toHaveLength(PROD_TOPOLOGY.serverNodes);
  for (const [, node] of nodes) expect(node.image).toBe(`temporalio/server:${bare(versions.server)}`);
});

test('every Temporal node and the schema job read the one server settings file', () => {
  const readers = [...byImage('temporalio/server:'), ...services.filter(([name]) => name === 'temporal-schema')];
  expect(readers.length).toBe(PROD_TOPOLOGY.serverNodes + 1);
  for (const [, service] of readers) expect(envFiles(service)).toContain(SERVER_ENV_FILE);
});

test('the Web UI, admin tools and PostgreSQL images match the versions the launcher builds and runs', () => {
  expect(byImage('temporalio/ui:').map(([, s]) => s.image)).toEqual([`temporalio/ui:${bare(versions.ui)}`]);
  const adminTools = byImage('temporalio/admin-tools:');
  expect(adminTools.length).toBeGreaterThan(0);
  for (const [, s] of adminTools) {
    expect(s.image).toMatch(new RegExp(`^temporalio/admin-tools:${bare(versions.server)}-`));
    expect(s.image).toMatch(new RegExp(`-cli-${bare(versions.cli)}$`));
  }
  const [[, postgres] = ['', {} as Service]] = byImage('postgres:');
  // The launcher's major version, pinned in compose to an exact release of it.
  expect(postgres.image).toMatch(new RegExp(`^postgres:${versions.postgres}\\.\\d+(-[a-z]+)?$`));
  // The same user; the password is compose's own secret (docker-compose.test.ts), which the nodes read too (the
  // postgres image names it POSTGRES_PASSWORD_FILE; the server's template reads POSTGRES_PWD, set from
  // POSTGRES_PWD_FILE).
  expect(postgres.environment).toMatchObject({
    POSTGRES_USER: serverEnv.POSTGRES_USER,
    POSTGRES_PASSWORD_FILE: '/run/secrets/postgres_password',
  });
  for (const [, node] of byImage('temporalio/server:')) {
    expect(node.environment).toMatchObject({ POSTGRES_PWD_FILE: '/run/secrets/postgres_password' });
  }
});

test('compose mounts the dynamic config file the launcher and the dev server read, where the settings point', () => {
  const target = `/etc/temporal/${serverEnv.DYNAMIC_CONFIG_FILE_PATH}`;
  for (const [, node] of byImage('temporalio/server:')) {
    const mounts = (node.volumes ?? []).map((v) => v.split(':'));
    expect(mounts).toContainEqual([`./${path.relative(REPO, DYNAMIC_CONFIG_FILE)}`, target, 'ro']);
  }
  expect(SERVER_DYNAMIC_CONFIG).toEqual(readDynamicConfig(DYNAMIC_CONFIG_FILE));
  expect(Object.keys(SERVER_DYNAMIC_CONFIG).length).toBeGreaterThan(0);
});

test("the launcher's node config takes its shards, databases, pools and user from the settings file, and the cluster's own password", () => {
  const config = serverConfig({
    ports: PLACEHOLDER_NODE_PORTS,
    postgres: { port: 5433, user: PROD_TOPOLOGY.postgres.user, password: 'made-per-folder' },
    historyShards: PROD_TOPOLOGY.historyShards,
    clusterAddress: '127.0.0.1:7233',
    logLevel: 'warn',
  }) as {
    persistence: { numHistoryShards: number; datastores: Record<string, { sql: Record<string, unknown> }> };
    dynamicConfigClient: { filepath: string };
  };
  expect(config.persistence.numHistoryShards).toBe(Number(serverEnv.NUM_HISTORY_SHARDS));
  expect(config.persistence.datastores.default!.sql).toMatchObject({
    pluginName: serverEnv.DB,
    databaseName: serverEnv.DBNAME,
    user: serverEnv.POSTGRES_USER,
    password: 'made-per-folder',
    maxConns: Number(serverEnv.SQL_MAX_CONNS),
  });
  expect(config.persistence.datastores.visibility!.sql).toMatchObject({
    databaseName: serverEnv.VISIBILITY_DBNAME,
    maxConns: Number(serverEnv.SQL_VIS_MAX_CONNS),
  });
  expect(config.dynamicConfigClient.filepath).toBe(DYNAMIC_CONFIG_FILE);
  expect(DYNAMIC_CONFIG_FILE.endsWith(path.basename(serverEnv.DYNAMIC_CONFIG_FILE_PATH!))).toBe(true);
});

test('the build script takes every version from versions.json, so no second copy can drift', () => {
  const script = readFileSync(path.join(REPO, 'scripts/install-temporal.sh'), 'utf8');
  for (const version of Object.values(versions)) {
    if (version.length > 2) expect(script).not.toContain(version);
  }
  expect(script).toContain('versions.json');
});
