/** docker-compose.yml stays in step with the worker's config schema and the booking contract. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { EnvSchema, loadConfig, supplierTimeoutBoundMs } from '../../src/config';
import { SEARCH_ATTRIBUTES } from '../../src/contract';
import { shutdownGraceMs, STOP_PERIOD_MARGIN_MS } from '../../src/worker';
import { WORKER_NODE_FLAGS } from '../../src/config/node-flags';
import { CodecServerEnv } from '../../src/codec/main';
import { isLoopbackHost } from '../../src/codec/server';

const ROOT = path.join(__dirname, '../..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  networks?: Record<string, { aliases?: string[] } | null> | string[];
  ports?: Array<string | number | { host_ip?: string; published?: string | number; target?: number }>;
}

// merge: the Temporal nodes share their settings through a YAML anchor (<<: *temporal-node).
const compose = parse(readFileSync(path.join(__dirname, '../../docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;

/** A service's environment as a map, whichever of the two compose forms it is written in. */
function envOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((kv) => [kv.split('=')[0]!, kv.slice(kv.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v == null ? '' : String(v)]));
}

/** A value an operator must supply (`${VAR:?message}`), as a test stand-in. */
const REQUIRED: Record<string, string> = {
  PAYLOAD_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  CODEC_SERVER_TOKEN: 'a-codec-token-an-operator-chose',
};

/** What compose substitutes: `${VAR:-default}` -> default; `${VAR:?message}` -> the operator's value. */
function resolveDefaults(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-?])((?:[^}$]|\$\([^)]*\))*))?\}/g,
    (_m, name: string, op: string | undefined, rest: string | undefined) =>
      op === '?' ? (REQUIRED[name] ?? '') : (rest ?? ''),
  );
}

const worker = services.worker!;
const workerEnv = envOf(worker);

test('the worker is set only through variables the config reads', () => {
  const known = new Set(Object.keys(EnvSchema.shape));
  const unknown = Object.keys(workerEnv).filter((k) => !known.has(k) && !k.startsWith('TEMPORAL_'));
  expect(unknown).toEqual([]);
});

test('the worker environment (defaults resolved) passes loadConfig', () => {
  const env = Object.fromEntries(Object.entries(workerEnv).map(([k, v]) => [k, resolveDefaults(v)]));
  const config = loadConfig(env);
  expect(config.temporal.connection.address).toBe('temporal:7233');
  expect(config.temporal.namespace).toBe('default');
  expect(config.supplier.credentials).toEqual({ kind: 'ticket', appKey: 'sandbox-app', appSecret: 'sandbox-secret' });
  expect(config.encryption?.activeKeyId).toBe('k1');
});

test('the worker and the codec server must be given the same encryption keys, and the UI uses that codec server', () => {
  const codec = services['codec-server']!;
  expect(envOf(codec).PAYLOAD_ENCRYPTION_KEYS).toBe(workerEnv.PAYLOAD_ENCRYPTION_KEYS);
  expect(workerEnv.PAYLOAD_ENCRYPTION_KEYS).toMatch(/^\$\{PAYLOAD_ENCRYPTION_KEYS:\?/);
  const port = envOf(codec).CODEC_SERVER_PORT;
  expect(envOf(services['temporal-ui']!).TEMPORAL_CODEC_ENDPOINT).toBe(`http://localhost:${port}`);
});

test("the worker's TEMPORAL_ADDRESS names every Temporal node, on 7233", () => {
  const [host, port] = workerEnv.TEMPORAL_ADDRESS!.split(':');
  const nodes = Object.values(services).filter((s) => s.image?.startsWith('temporalio/server:'));
  expect(nodes.length).toBeGreaterThan(1);
  for (const node of nodes) {
    const aliases = Array.isArray(node.networks) ? [] : (node.networks?.default?.aliases ?? []);
    expect(aliases).toContain(host);
  }
  expect(port).toBe('7233');
});

test('the setup service registers exactly the contract search attributes', () => {
  const setup = services['temporal-setup']!;
  const script = [setup.entrypoint, setup.command].flat().filter(Boolean).join('\n');
  const registered = [...script.matchAll(/search-attribute create\b[^\n]*?--name\s+(\S+)[^\n]*?--type\s+(\S+)/g)].map(
    (m) => ({
      name: m[1],
      type: m[2],
    }),
  );
  const byName = (a: { name?: string }, b: { name?: string }) => (a.name ?? '').localeCompare(b.name ?? '');
  expect(registered.sort(byName)).toEqual(SEARCH_ATTRIBUTES.map((a) => ({ ...a })).sort(byName));
});

test('every pulled image is pinned to a tag other than latest', () => {
  const pulled = Object.entries(services).filter(([, s]) => s.build === undefined);
  expect(pulled.length).toBeGreaterThan(0);
  for (const [name, s] of pulled) {
    const image = s.image ?? '';
    const tag = image.includes('@') ? 'digest' : image.slice(image.lastIndexOf('/') + 1).split(':')[1];
    expect({ name, image, pinned: Boolean(tag) && tag !== 'latest' }).toEqual({ name, image, pinned: true });
  }
});

test("compose waits for the worker's largest allowed shutdown grace and a margin before it kills the worker", () => {
  const grace = (worker as Service & { stop_grace_period?: string }).stop_grace_period ?? '10s';
  const stopMs = Number(/^(\d+)s$/.exec(grace)?.[1]) * 1000;
  // The longest Book timeout the config accepts (one more millisecond is refused), hence the longest grace.
  const longestBook = supplierTimeoutBoundMs('book')!;
  const env = { ...REQUIRED, SUPPLIER_TOKEN: 't' };
  expect(() =>
    loadConfig({ ...env, SUPPLIER_PROFILE: JSON.stringify({ timeoutsMs: { book: longestBook + 1 } }) }),
  ).toThrow(/timeoutsMs\.book/);
  const profile = loadConfig({ ...env, SUPPLIER_PROFILE: JSON.stringify({ timeoutsMs: { book: longestBook } }) })
    .supplier.profile;
  expect(stopMs).toBeGreaterThanOrEqual(shutdownGraceMs(profile) + STOP_PERIOD_MARGIN_MS);
});

test('every way of running a worker passes the same Node flags (src/config/node-flags.ts)', () => {
  expect(worker.command).toEqual(['node', ...WORKER_NODE_FLAGS, 'lib/worker.js']);
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toContain(
    `CMD ${JSON.stringify(['node', ...WORKER_NODE_FLAGS, 'lib/worker.js']).replace(/,/g, ', ')}`,
  );
  const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  expect(scripts.worker).toBe(`node ${WORKER_NODE_FLAGS.join(' ')} -r ts-node/register/transpile-only src/worker.ts`);
});

test('no published port is bound to all interfaces: every one names 127.0.0.1', () => {
  const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((port) => ({ name, port })));
  expect(published.length).toBeGreaterThanOrEqual(6);
  for (const { name, port } of published) {
    // Short form `[host_ip:][host_port:]container_port[/proto]`; a bare port or `host:container` binds every interface.
    const hostIp =
      typeof port === 'object'
        ? (port.host_ip ?? '')
        : (/^(\d{1,3}(?:\.\d{1,3}){3}|\[[^\]]+\]):\d+(?:-\d+)?:\d+/.exec(String(port))?.[1] ?? '');
    expect({ name, port, hostIp }).toEqual({ name, port, hostIp: '127.0.0.1' });
  }
});

test('the codec server listens on the container interfaces with a token the operator must set, and the UI sends its session cookie', () => {
  const codecEnv = envOf(services['codec-server']!);
  const env = Object.fromEntries(Object.entries(codecEnv).map(([k, v]) => [k, resolveDefaults(v)]));
  const parsed = CodecServerEnv.parse(env);
  expect(isLoopbackHost(parsed.CODEC_SERVER_HOST)).toBe(false);
  expect(codecEnv.CODEC_SERVER_TOKEN).toMatch(/^\$\{CODEC_SERVER_TOKEN:\?/);
  expect(parsed.CODEC_SERVER_ALLOW_ANONYMOUS).toBe('off');
  // The UI image's codec.includeCredentials: the browser sends the cookie from the codec server's /login.
  expect(envOf(services['temporal-ui']!).TEMPORAL_CODEC_INCLUDE_CREDENTIALS).toBe('true');
  expect(new URL(envOf(services['temporal-ui']!).TEMPORAL_CODEC_ENDPOINT!).port).toBe(String(parsed.CODEC_SERVER_PORT));
  expect(parsed.CODEC_ALLOWED_ORIGIN).toBe('http://localhost:8233');
});
