/** docker-compose.yml stays in step with the worker's config schema, the booking contract and the mutual TLS of dev/prod. */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { EnvSchema, loadConfig, supplierTimeoutBoundMs } from '../../src/runtime/config/index';
import { SEARCH_ATTRIBUTES } from '../../src/api/contract/index';
import { shutdownGraceMs, STOP_PERIOD_MARGIN_MS } from '../../src/worker';
import { WORKER_NODE_FLAGS } from '../../src/runtime/config/node-flags';
import { CODEC_SERVER_SECRETS, CodecServerEnv } from '../../src/servers/codec/main';
import { isLoopbackHost } from '../../src/servers/codec/server';
import {
  ensureCertificates,
  IDENTITY_UNITS,
  main as certsMain,
  TEMPORAL_SERVER_NAME,
  type StackCertificates,
} from '../../dev/prod/certs';
import { serverConfig } from '../../dev/prod/cluster';
import versions from '../../dev/temporal/versions.json';
import { PLACEHOLDER_NODE_PORTS } from '../fixtures/node-ports';

const ROOT = path.join(__dirname, '../..');

interface Service {
  image?: string;
  secrets?: Array<string | { source: string }>;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  networks?: Record<string, { aliases?: string[] } | null> | string[];
  ports?: Array<string | number | { host_ip?: string; published?: string | number; target?: number }>;
  depends_on?: Record<string, { condition?: string }> | string[];
  volumes?: Array<string | { type?: string; source?: string; target?: string; read_only?: boolean }>;
}

// merge: the Temporal nodes share their settings through a YAML anchor (<<: *temporal-node).
const compose = parse(readFileSync(path.join(__dirname, '../../docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string; environment?: string }>;
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
const REQUIRED: Record<string, string> = {};

/** What each compose secret's file holds once infra/compose/make-secrets.sh made it, as a test stand-in. */
const SECRET_STANDINS: Record<string, string> = {
  postgres_password: 'f'.repeat(64),
  payload_encryption_keys: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  codec_server_token: '0123456789abcdef'.repeat(4),
  supplier_app_secret: 'a'.repeat(64),
  grafana_admin_password: 'b'.repeat(48),
  web_ui_htpasswd: 'operator:$apr1$x$y',
};
const SECRETS_MOUNT = '/run/secrets';

/** The secrets a service is given (its `secrets:`), by name. */
const secretsOf = (service: Service) => (service.secrets ?? []).map((s) => (typeof s === 'string' ? s : s.source));

/**
 * The environment a program in the service sees: each `X_FILE=/run/secrets/<name>` as `X` with that secret's stand-in
 * (what the program itself, or infra/compose/file-env.sh before it, reads).
 */
function withSecretFiles(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    const file = /^(.*?)_{1,2}FILE$/.exec(k);
    if (file && v.startsWith(`${SECRETS_MOUNT}/`)) out[file[1]!] = SECRET_STANDINS[path.posix.basename(v)] ?? '';
    else out[k] = v;
  }
  return out;
}

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

/** Where the certificates of one identity are mounted in every container that reads them. */
const CERTS_MOUNT = '/certs';

/** A service's volume mounts as source, target and read-only, whichever of the two compose forms. */
function mountsOf(service: Service): Array<{ source: string; target: string; readOnly: boolean }> {
  return (service.volumes ?? []).map((v) => {
    if (typeof v === 'object')
      return { source: v.source ?? '', target: v.target ?? '', readOnly: v.read_only === true };
    const [source = '', target = '', mode = ''] = v.split(':');
    return { source, target, readOnly: mode.split(',').includes('ro') };
  });
}

function dependsOn(service: Service): Record<string, string | undefined> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, undefined]));
  return Object.fromEntries(Object.entries(deps).map(([name, d]) => [name, d?.condition]));
}

const scriptOf = (service: Service) => [service.entrypoint, service.command].flat().filter(Boolean).join('\n');

/** The certificates dev/prod/certs.ts makes, in a folder of this test's own: what the certs service makes in its volume. */
let certs: StackCertificates;
let certsDir: string;
beforeAll(() => {
  certsDir = mkdtempSync(path.join(os.tmpdir(), 'compose-certs-'));
  certs = ensureCertificates(path.join(certsDir, 'ca'));
});
afterAll(() => rmSync(certsDir, { recursive: true, force: true }));

/** A container's /certs/<file> as the same file of this test's certificates (every identity's files are in one folder there). */
const onHost = (value: string) =>
  value.startsWith(`${CERTS_MOUNT}/`) ? path.join(certs.dir, path.posix.basename(value)) : value;

test('the worker is set only through variables the config reads (its secrets through file-env.sh)', () => {
  const known = new Set(Object.keys(EnvSchema.shape));
  const unknown = Object.keys(withSecretFiles(workerEnv)).filter((k) => !known.has(k) && !k.startsWith('TEMPORAL_'));
  expect(unknown).toEqual([]);
});

test('the worker environment (defaults and secret files resolved) passes loadConfig', () => {
  const env = Object.fromEntries(
    Object.entries(withSecretFiles(workerEnv)).map(([k, v]) => [k, onHost(resolveDefaults(v))]),
  );
  const config = loadConfig(env);
  expect(config.temporal.connection.address).toBe('temporal:7233');
  // Mutual TLS with the workers' pair and the CA that dev/prod/certs.ts makes, checked against the nodes' name.
  const tls = config.temporal.connection.tls as {
    serverNameOverride?: string;
    serverRootCACertificate?: Uint8Array;
    clientCertPair?: { crt: Uint8Array; key: Uint8Array };
  };
  expect(tls.serverNameOverride).toBe(TEMPORAL_SERVER_NAME);
  expect(Buffer.from(tls.serverRootCACertificate!).toString()).toBe(readFileSync(certs.ca.cert, 'utf8'));
  expect(Buffer.from(tls.clientCertPair!.crt).toString()).toBe(readFileSync(certs.clients.worker.cert, 'utf8'));
  expect(Buffer.from(tls.clientCertPair!.key).toString()).toBe(readFileSync(certs.clients.worker.key, 'utf8'));
  expect(config.temporal.namespace).toBe('default');
  expect(config.supplier.credentials).toEqual({
    kind: 'ticket',
    appKey: 'sandbox-app',
    appSecret: SECRET_STANDINS.supplier_app_secret,
  });
  expect(config.encryption?.activeKeyId).toBe('k1');
  // Prometheus scrapes each replica from its own container: the worker's metrics listen beyond loopback here
  // (the default is loopback), on compose's private network, and the port is not published.
  expect(config.observability?.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
  expect(JSON.stringify(worker.ports ?? [])).not.toContain('9464');
});

test('the worker and the codec server must be given the same encryption keys, and the UI uses that codec server', () => {
  const codec = services['codec-server']!;
  expect(envOf(codec).PAYLOAD_ENCRYPTION_KEYS_FILE).toBe(workerEnv.PAYLOAD_ENCRYPTION_KEYS_FILE);
  expect(workerEnv.PAYLOAD_ENCRYPTION_KEYS_FILE).toBe(`${SECRETS_MOUNT}/payload_encryption_keys`);
  for (const s of [codec, worker]) expect(secretsOf(s)).toContain('payload_encryption_keys');
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

test('every pulled image is pinned to an exact version (a digest, or a tag with a minor version at least)', () => {
  const pulled = Object.entries(services).filter(([, s]) => s.build === undefined);
  expect(pulled.length).toBeGreaterThan(0);
  for (const [name, s] of pulled) {
    const image = s.image ?? '';
    const tag = image.includes('@') ? 'digest' : (image.slice(image.lastIndexOf('/') + 1).split(':')[1] ?? '');
    // `15`, `2`, `latest`, `alpine` move under you; `15.10-bookworm`, `1.29.1`, `v2.55.1` do not.
    const exact = tag === 'digest' || /^v?\d+\.\d+(\.\d+)?([-.][A-Za-z0-9.-]+)?$/.test(tag);
    expect({ name, image, exact }).toEqual({ name, image, exact: true });
  }
});

describe('secrets', () => {
  const SECRETS_DIR = path.join(ROOT, 'infra/compose/secrets');
  const declared = compose.secrets ?? {};

  test('every secret is a file in infra/compose/secrets, which git ignores, made by make-secrets.sh', () => {
    expect(Object.keys(declared).sort()).toEqual(Object.keys(SECRET_STANDINS).sort());
    const script = readFileSync(path.join(ROOT, 'infra/compose/make-secrets.sh'), 'utf8');
    for (const [name, { file, environment }] of Object.entries(declared)) {
      expect({ name, environment }).toEqual({ name, environment: undefined });
      expect({ name, dir: path.dirname(path.resolve(ROOT, file ?? '')) }).toEqual({ name, dir: SECRETS_DIR });
      expect(script).toMatch(new RegExp(`^secret ${path.basename(file!)} `, 'm'));
    }
    expect(readFileSync(path.join(SECRETS_DIR, '.gitignore'), 'utf8').split('\n')).toEqual(['*', '!.gitignore', '']);
  });

  test('no service is given a secret in its environment: each comes from a file of a secret it is given', () => {
    const SECRET_NAME = /(PASSWORD|PWD|SECRET|TOKEN|ENCRYPTION_KEYS)(_FILE|__FILE)?$/;
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(envOf(s)).filter(([k]) => SECRET_NAME.test(k))) {
        expect({ name, key, fromFile: /_FILE$/.test(key) }).toEqual({ name, key, fromFile: true });
        const secret = path.posix.basename(value);
        expect({ name, key, value }).toEqual({ name, key, value: `${SECRETS_MOUNT}/${secret}` });
        expect({ name, key, given: secretsOf(s).includes(secret) }).toEqual({ name, key, given: true });
      }
    }
    // The database password reaches the nodes and the schema job from the secret only (the settings file names none).
    for (const node of Object.values(services).filter((s) => s.image?.startsWith('temporalio/server:'))) {
      expect(envOf(node).POSTGRES_PWD_FILE).toBe(`${SECRETS_MOUNT}/postgres_password`);
    }
    const schemaJob = scriptOf(services['temporal-schema']!);
    expect(schemaJob).toContain(`POSTGRES_PWD="$$(cat ${SECRETS_MOUNT}/postgres_password)"`);
  });

  test('no settings file a service reads (env_file) names a credential, so no installation starts with a default one', () => {
    const SECRET_NAME = /(PASSWORD|PWD|SECRET|TOKEN|ENCRYPTION_KEYS)$/;
    const files = new Set(
      Object.values(services).flatMap((s) => [(s as { env_file?: string | string[] }).env_file ?? []].flat()),
    );
    expect(files).toContain('./infra/temporal-server.env');
    for (const file of files) {
      const keys = readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'))
        .map((line) => line.slice(0, line.indexOf('=')));
      expect({ file, credentials: keys.filter((k) => SECRET_NAME.test(k)) }).toEqual({ file, credentials: [] });
    }
    // Nor does compose itself, as a default for a variable an operator may leave unset (`${X:-value}`).
    const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    expect(text.match(/\$\{[A-Z_]*(PASSWORD|PWD|SECRET|TOKEN)[A-Z_]*:-[^}]*\}/g)).toBeNull();
  });

  test('a service whose program reads secrets from the environment only runs it through file-env.sh', () => {
    // Our codec server and Grafana read `*_FILE` themselves; the database's image reads POSTGRES_PASSWORD_FILE.
    const native = new Set(['codec-server', 'grafana', 'postgres', 'temporal-schema']);
    for (const [name, s] of Object.entries(services)) {
      const fileVars = Object.keys(envOf(s)).filter((k) => k.endsWith('_FILE') && !k.startsWith('TEMPORAL_'));
      if (fileVars.length === 0 || native.has(name)) continue;
      const entrypoint = [s.entrypoint].flat();
      expect({ name, entrypoint: entrypoint.slice(0, 2) }).toEqual({
        name,
        entrypoint: ['/bin/sh', '/deploy/file-env.sh'],
      });
      expect(mountsOf(s)).toContainEqual({
        source: './infra/compose/file-env.sh',
        target: '/deploy/file-env.sh',
        readOnly: true,
      });
    }
  });

  test('file-env.sh sets each X from a secret file X_FILE (over a value given), then runs the command; an unreadable file stops it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'file-env-'));
    try {
      writeFileSync(path.join(dir, 'pw'), 's3cret value\n');
      const run = (env: Record<string, string>) =>
        spawnSync(
          'sh',
          [path.join(ROOT, 'infra/compose/file-env.sh'), 'sh', '-c', 'echo "[$POSTGRES_PWD][${POSTGRES_PWD_FILE:-}]"'],
          {
            env: { PATH: process.env.PATH ?? '', ...env },
            encoding: 'utf8',
          },
        );
      const ok = run({ FILE_ENV_DIR: dir, POSTGRES_PWD: 'temporal', POSTGRES_PWD_FILE: path.join(dir, 'pw') });
      expect(ok.status).toBe(0);
      expect(ok.stdout).toBe('[s3cret value][]\n');
      // A *_FILE outside the secrets folder is a path its program reads (TEMPORAL_CONFIG_FILE): left alone.
      const other = run({ POSTGRES_PWD: 'temporal', POSTGRES_PWD_FILE: path.join(dir, 'pw') });
      expect(other.stdout).toBe(`[temporal][${path.join(dir, 'pw')}]\n`);
      const missing = run({ FILE_ENV_DIR: dir, POSTGRES_PWD_FILE: path.join(dir, 'absent') });
      expect(missing.status).toBe(1);
      expect(missing.stderr).toContain('POSTGRES_PWD_FILE: cannot read');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('make-secrets.sh makes every secret file with random values, and keeps them on the next run', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'make-secrets-'));
    try {
      const copy = (d: string) => {
        writeFileSync(path.join(d, 'make-secrets.sh'), readFileSync(path.join(ROOT, 'infra/compose/make-secrets.sh')));
        return spawnSync('sh', [path.join(d, 'make-secrets.sh')], { encoding: 'utf8' });
      };
      const [a, b] = ['a', 'b'].map((n) => path.join(dir, n));
      for (const d of [a!, b!]) {
        mkdirSync(d);
        expect(copy(d).status).toBe(0);
      }
      const files = Object.values(declared).map((d) => path.basename(d.file!));
      const read = (d: string, f: string) => readFileSync(path.join(d, 'secrets', f), 'utf8');
      for (const f of files) {
        expect({ f, made: read(a!, f).length > 10 }).toEqual({ f, made: true });
        // Random per installation: no two share one.
        expect({ f, same: read(a!, f) === read(b!, f) }).toEqual({ f, same: false });
      }
      expect(read(a!, 'payload-encryption-keys')).toMatch(/^key1:[A-Za-z0-9+/]{43}=\n$/);
      expect(read(a!, 'web-ui-htpasswd')).toMatch(/^operator:\$apr1\$/);
      const before = files.map((f) => read(a!, f));
      expect(copy(a!).stdout).toMatch(/kept {4}secrets\/postgres-password/);
      expect(files.map((f) => read(a!, f))).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('the Web UI, which holds the operator certificate, publishes no port: only the login in front of it does', () => {
  const ui = services['temporal-ui']!;
  expect(ui.ports ?? []).toEqual([]);
  const login = services['web-ui-login']!;
  expect(login.ports).toEqual(['127.0.0.1:8233:8080']);
  expect(secretsOf(login)).toEqual(['web_ui_htpasswd']);
  const [conf] = mountsOf(login).filter((m) => m.target === '/etc/nginx/conf.d/default.conf');
  const text = readFileSync(path.join(ROOT, conf!.source), 'utf8');
  expect(text).toMatch(/auth_basic_user_file \/run\/secrets\/web_ui_htpasswd;/);
  expect(text).toMatch(/proxy_pass http:\/\/temporal-ui:8080;/);
  // Every location asks for the login: one location, with auth_basic.
  expect(text.match(/location /g)).toHaveLength(1);
  expect(text).toMatch(/auth_basic "/);
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

test('every way of running a worker passes the same Node flags (src/runtime/config/node-flags.ts)', () => {
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
  const env = Object.fromEntries(Object.entries(withSecretFiles(codecEnv)).map(([k, v]) => [k, resolveDefaults(v)]));
  const parsed = CodecServerEnv.parse(env);
  expect(isLoopbackHost(parsed.CODEC_SERVER_HOST)).toBe(false);
  expect(codecEnv.CODEC_SERVER_TOKEN_FILE).toBe(`${SECRETS_MOUNT}/codec_server_token`);
  expect(CODEC_SERVER_SECRETS).toContain('CODEC_SERVER_TOKEN');
  expect(parsed.CODEC_SERVER_ALLOW_ANONYMOUS).toBe('off');
  // The UI image's codec.includeCredentials: the browser sends the cookie from the codec server's /login.
  expect(envOf(services['temporal-ui']!).TEMPORAL_CODEC_INCLUDE_CREDENTIALS).toBe('true');
  expect(new URL(envOf(services['temporal-ui']!).TEMPORAL_CODEC_ENDPOINT!).port).toBe(String(parsed.CODEC_SERVER_PORT));
  expect(parsed.CODEC_ALLOWED_ORIGIN).toBe('http://localhost:8233');
});

describe('mutual TLS to Temporal', () => {
  const nodes = Object.entries(services).filter(([, s]) => s.image?.startsWith('temporalio/server:'));
  /** Every service but the nodes that dials the frontend (an address or a `--address` naming temporal:7233). */
  const clients = Object.entries(services).filter(
    ([name, s]) => !nodes.some(([node]) => node === name) && JSON.stringify(s).includes('temporal:7233'),
  );
  /** The OU of each identity's certificate (the authorizer's identity), by the file name dev/prod/certs.ts gives it. */
  const IDENTITY_OU: Record<string, string> = {
    server: IDENTITY_UNITS.node,
    'booking-caller': IDENTITY_UNITS.caller,
    worker: IDENTITY_UNITS.worker,
    'callback-receiver': IDENTITY_UNITS.receiver,
    operator: IDENTITY_UNITS.operator,
    'operator-web-ui': IDENTITY_UNITS.operator,
  };
  /** The identity each client presents: the workers' (only they poll and answer tasks), the operators' for admin. */
  const IDENTITY: Record<string, string> = {
    worker: 'worker',
    // An operator certificate of its own (CN=operator:web-ui), so the audit log tells its calls from a person's.
    'temporal-ui': 'operator-web-ui',
    'temporal-setup': 'operator',
    'worker-build-current': 'operator',
  };
  /** The job each service does, as the OU the authorizer must see from it. */
  const JOB_OU: Record<string, string> = {
    worker: IDENTITY_UNITS.worker,
    'temporal-ui': IDENTITY_UNITS.operator,
    'temporal-setup': IDENTITY_UNITS.operator,
    'worker-build-current': IDENTITY_UNITS.operator,
  };
  /** The identity a service's certificate volume holds: the nodes', a client's, or none. */
  const identityOf = (name: string) => (nodes.some(([node]) => node === name) ? 'server' : IDENTITY[name]);
  const certsService = services.certs!;
  const identityVolume = (who: string) => `temporal-certs-${who}`;
  const isCertVolume = (source: string) => source === 'temporal-ca' || source.startsWith('temporal-certs-');
  /** The identities the certs service copies, in its order (`for who in ...`). */
  const copiedBy = (script: string) => /for who in ([^;]+);/.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
  /** The OU of a certificate file's subject. */
  const unitOf = (cert: string) => {
    const out = spawnSync('openssl', ['x509', '-in', cert, '-noout', '-subject', '-nameopt', 'RFC2253'], {
      encoding: 'utf8',
    });
    return /(?:^|[=,])OU=([^,\n]+)/.exec(out.stdout.replace(/^subject=\s*/, ''))?.[1];
  };

  test('the certs service makes the CA and certificates with dev/prod/certs.ts into its own volume and copies each identity into one of its own', () => {
    expect(certsService.build).toMatchObject({ context: '.', target: 'certs' });
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const tsconfig = JSON.parse(readFileSync(path.join(ROOT, 'infra/certs/tsconfig.json'), 'utf8')) as {
      files: string[];
    };
    expect(tsconfig.files.map((f) => path.resolve(ROOT, 'infra/certs', f))).toEqual([
      path.join(ROOT, 'dev/prod/certs.ts'),
    ]);
    expect(dockerfile).toMatch(/RUN npx tsc -p infra\/certs\/tsconfig.json/);
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends openssl/);
    const script = scriptOf(certsService);
    expect(script).toContain(`node certs.js ${CERTS_MOUNT}/ca`);
    const mounts = mountsOf(certsService);
    expect(mounts).toContainEqual({ source: 'temporal-ca', target: `${CERTS_MOUNT}/ca`, readOnly: false });
    // Every certificate certs.ts makes, besides the CA, is copied into a volume of its own: one per identity.
    const copied = copiedBy(script);
    // (The console's operator certificate is made for stacks that run the console; compose runs none.)
    const made = [certs.server, ...Object.values(certs.clients), certs.operators.webUi].map((p) =>
      path.basename(p.cert, '.pem'),
    );
    expect([...copied].sort()).toEqual([...made].sort());
    expect(copied).toEqual(['server', 'booking-caller', 'worker', 'callback-receiver', 'operator', 'operator-web-ui']);
    // The certificate in each is the identity's own: its OU is the one the authorizer gives that job.
    for (const who of copied) {
      expect({ who, ou: unitOf(path.join(certs.dir, `${who}.pem`)) }).toEqual({ who, ou: IDENTITY_OU[who] });
    }
    expect(script).toContain(`cp ${CERTS_MOUNT}/ca/ca.pem ${CERTS_MOUNT}/ca/$$who.pem ${CERTS_MOUNT}/ca/$$who.key`);
    expect(script).not.toContain('ca.key');
    for (const who of copied) {
      expect(mounts).toContainEqual({ source: identityVolume(who), target: `${CERTS_MOUNT}/${who}`, readOnly: false });
    }
    expect(mounts.map((m) => m.source).sort()).toEqual(['temporal-ca', ...copied.map(identityVolume)].sort());
    expect([...new Set(Object.values(IDENTITY))].every((who) => copied.includes(who))).toBe(true);
    // The CA's key never leaves the certs service: no other service mounts its volume.
    const caReaders = Object.entries(services).filter(([, s]) => mountsOf(s).some((m) => m.source === 'temporal-ca'));
    expect(caReaders.map(([name]) => name)).toEqual(['certs']);
  });

  test("the certs service's copy, run on a folder here, gives each identity's volume ca.pem and that identity's pair only, never the CA's key", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'compose-certs-copy-'));
    try {
      // The volumes as the certs service mounts them, the CA's one holding what certs.js made (its key included).
      for (const m of mountsOf(certsService)) mkdirSync(path.join(root, path.posix.relative(CERTS_MOUNT, m.target)));
      cpSync(certs.dir, path.join(root, 'ca'), { recursive: true });
      // Compose's `$$` is a `$` in the container; certs.js is what the test above checks; ownership needs root.
      const [script] = [certsService.command].flat() as string[];
      const local = script!.replace(/\$\$/g, '$').replaceAll(`${CERTS_MOUNT}/`, `${root}/`);
      const run = spawnSync('sh', ['-c', `node() { :; }\nchown() { :; }\n${local}`], { encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      const ca = readFileSync(certs.ca.cert, 'utf8');
      for (const who of copiedBy(scriptOf(certsService))) {
        const dir = path.join(root, who);
        expect({ who, files: readdirSync(dir).sort() }).toEqual({
          who,
          files: ['ca.pem', `${who}.key`, `${who}.pem`].sort(),
        });
        expect({ who, ca: readFileSync(path.join(dir, 'ca.pem'), 'utf8') === ca }).toEqual({ who, ca: true });
        expect({
          who,
          dir: statSync(dir).mode & 0o777,
          key: statSync(path.join(dir, `${who}.key`)).mode & 0o777,
        }).toEqual({ who, dir: 0o700, key: 0o600 });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('certs.js, as the certs service runs it, makes the files on the first run and keeps them on the next', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(certsMain([])).toBe(2);
      const dir = path.join(certsDir, 'cli');
      expect(certsMain([dir])).toBe(0);
      const first =
        readFileSync(path.join(dir, 'ca.pem'), 'utf8') + readFileSync(path.join(dir, 'operator.pem'), 'utf8');
      expect(certsMain([dir])).toBe(0);
      expect(
        readFileSync(path.join(dir, 'ca.pem'), 'utf8') + readFileSync(path.join(dir, 'operator.pem'), 'utf8'),
      ).toBe(first);
      expect(out.mock.calls.map(([line]) => String(line))).toContainEqual(
        `operator: ${path.join(dir, 'operator.pem')} ${path.join(dir, 'operator.key')}\n`,
      );
    } finally {
      write.mockRestore();
      out.mockRestore();
    }
  });

  test('every service that connects to Temporal waits for the certs, mounts its identity read-only and is given it', () => {
    expect(clients.map(([name]) => name).sort()).toEqual(Object.keys(IDENTITY).sort());
    for (const [name, service] of clients) {
      const who = IDENTITY[name]!;
      expect({ name, certs: dependsOn(service).certs }).toEqual({ name, certs: 'service_completed_successfully' });
      // The certificate it presents names the OU of its job (a worker presenting a booking caller's is refused polls).
      expect({ name, ou: unitOf(path.join(certs.dir, `${who}.pem`)) }).toEqual({ name, ou: JOB_OU[name] });
      const env = envOf(service);
      const expected =
        name === 'temporal-ui'
          ? // The UI image's own names for its config's tls section (server/config/docker.yaml in temporalio/ui).
            {
              TEMPORAL_TLS_CA: `${CERTS_MOUNT}/ca.pem`,
              TEMPORAL_TLS_CERT: `${CERTS_MOUNT}/${who}.pem`,
              TEMPORAL_TLS_KEY: `${CERTS_MOUNT}/${who}.key`,
              TEMPORAL_TLS_SERVER_NAME: TEMPORAL_SERVER_NAME,
              TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true',
            }
          : // Temporal's client variables (envconfig), which the worker and the `temporal` CLI read.
            {
              TEMPORAL_TLS_CLIENT_CERT_PATH: `${CERTS_MOUNT}/${who}.pem`,
              TEMPORAL_TLS_CLIENT_KEY_PATH: `${CERTS_MOUNT}/${who}.key`,
              TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${CERTS_MOUNT}/ca.pem`,
              TEMPORAL_TLS_SERVER_NAME: TEMPORAL_SERVER_NAME,
            };
      expect({ name, env }).toMatchObject({ name, env: expected });
    }
  });

  test("every service but certs mounts exactly its own identity's certificate volume, read-only, and names no other file of it", () => {
    const others = Object.entries(services).filter(([name]) => name !== 'certs');
    for (const [name, service] of others) {
      const who = identityOf(name);
      const certMounts = mountsOf(service).filter((m) => isCertVolume(m.source));
      expect({ name, certMounts }).toEqual({
        name,
        certMounts: who ? [{ source: identityVolume(who), target: CERTS_MOUNT, readOnly: true }] : [],
      });
      // The files it points at under /certs: the CA's certificate and its own pair, never another's or the CA's key.
      const named = [...JSON.stringify(service).matchAll(new RegExp(`${CERTS_MOUNT}/([\\w.-]+)`, 'g'))].map(
        (m) => m[1],
      );
      const own = who ? ['ca.pem', `${who}.pem`, `${who}.key`] : [];
      expect({ name, foreign: named.filter((f) => !own.includes(f!)) }).toEqual({ name, foreign: [] });
    }
    // Each identity's volume is mounted by the services of that job only: the nodes', the workers', the operators'.
    const mountedBy = (who: string) =>
      others.filter(([, s]) => mountsOf(s).some((m) => m.source === identityVolume(who))).map(([name]) => name);
    expect(mountedBy('worker')).toEqual(['worker']);
    expect(mountedBy('operator').sort()).toEqual(['temporal-setup', 'worker-build-current']);
    expect(mountedBy('operator-web-ui')).toEqual(['temporal-ui']);
    expect(mountedBy('server').sort()).toEqual(nodes.map(([name]) => name).sort());
    // The booking callers' and the receiver's are for processes outside compose: no container here holds them.
    expect(mountedBy('booking-caller')).toEqual([]);
    expect(mountedBy('callback-receiver')).toEqual([]);
  });

  test('the nodes require a client certificate from the CA on the frontend and between nodes, and authorize by its OU', () => {
    expect(nodes.length).toBeGreaterThan(1);
    const launcher = serverConfig({
      ports: PLACEHOLDER_NODE_PORTS,
      postgres: { port: 5433, user: 'u', password: 'p' },
      historyShards: 1,
      clusterAddress: '127.0.0.1:7233',
      logLevel: 'warn',
      tls: certs,
    }) as { global: { authorization: { claimMapper: string; authorizer: string } } };
    const authzMain = readFileSync(path.join(ROOT, 'dev/temporal/authz-server/main.go'), 'utf8');
    for (const [name, node] of nodes) {
      const env = envOf(node);
      expect({ name, certs: dependsOn(node).certs }).toEqual({ name, certs: 'service_completed_successfully' });
      expect(mountsOf(node)).toContainEqual({ source: identityVolume('server'), target: CERTS_MOUNT, readOnly: true });
      // The temporalio/server image's config template (docker/config_template.yaml of the server at that version).
      expect({ name, env }).toMatchObject({
        name,
        env: {
          TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
          TEMPORAL_TLS_FRONTEND_CERT: `${CERTS_MOUNT}/server.pem`,
          TEMPORAL_TLS_FRONTEND_KEY: `${CERTS_MOUNT}/server.key`,
          TEMPORAL_TLS_CLIENT1_CA_CERT: `${CERTS_MOUNT}/ca.pem`,
          TEMPORAL_TLS_CLIENT2_CA_CERT: `${CERTS_MOUNT}/ca.pem`,
          TEMPORAL_TLS_SERVER_CERT: `${CERTS_MOUNT}/server.pem`,
          TEMPORAL_TLS_SERVER_KEY: `${CERTS_MOUNT}/server.key`,
          TEMPORAL_TLS_SERVER_CA_CERT: `${CERTS_MOUNT}/ca.pem`,
          TEMPORAL_TLS_INTERNODE_SERVER_NAME: TEMPORAL_SERVER_NAME,
          TEMPORAL_TLS_FRONTEND_SERVER_NAME: TEMPORAL_SERVER_NAME,
          TEMPORAL_AUTH_CLAIM_MAPPER: launcher.global.authorization.claimMapper,
          TEMPORAL_AUTH_AUTHORIZER: launcher.global.authorization.authorizer,
        },
      });
      expect(authzMain).toContain(`claimMapperName = "${env.TEMPORAL_AUTH_CLAIM_MAPPER}"`);
      expect(authzMain).toContain(`authorizerName  = "${env.TEMPORAL_AUTH_AUTHORIZER}"`);
    }
  });

  test('the nodes run our server build with that authorization, of the same server version as their image', () => {
    const authz = services['temporal-authz']!;
    expect(authz.build).toMatchObject({ context: '.', target: 'temporal-authz' });
    const [out] = mountsOf(authz).filter((m) => m.source === 'temporal-authz');
    expect(scriptOf(authz)).toMatch(new RegExp(`mv -f \\S+ ${out!.target}/temporal-server$`));
    for (const [name, node] of nodes) {
      expect({ name, authz: dependsOn(node)['temporal-authz'] }).toEqual({
        name,
        authz: 'service_completed_successfully',
      });
      const [bin] = mountsOf(node).filter((m) => m.source === 'temporal-authz');
      expect(bin?.readOnly).toBe(true);
      // The image's entrypoint runs `temporal-server` from the PATH: ours comes first.
      expect(envOf(node).PATH!.split(':')[0]).toBe(bin!.target);
      expect(node.image).toBe(`temporalio/server:${versions.server.replace(/^v/, '')}`);
    }
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const goMod = readFileSync(path.join(ROOT, 'dev/temporal/authz-server/go.mod'), 'utf8');
    expect(dockerfile).toContain(`FROM temporalio/server:${versions.server.replace(/^v/, '')} AS temporal-authz`);
    expect(goMod).toMatch(
      new RegExp(`^require go\\.temporal\\.io/server ${versions.server.replace(/\./g, '\\.')}$`, 'm'),
    );
    // The Go image builds the go.mod's language version (no toolchain download in the build).
    const goVersion = /^go (\d+\.\d+)/m.exec(goMod)?.[1];
    expect(dockerfile).toMatch(
      new RegExp(`FROM golang:${goVersion!.replace('.', '\\.')}[-.]\\S* AS temporal-authz-build`),
    );
  });
});

/** The Dockerfile's stage `name`, from its FROM line to the next one. */
function dockerfileStage(name: string): string {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const start = dockerfile.search(new RegExp(`^FROM \\S+ AS ${name}$`, 'm'));
  expect(start).toBeGreaterThanOrEqual(0);
  const next = dockerfile.slice(start + 1).search(/^FROM /m);
  return next < 0 ? dockerfile.slice(start) : dockerfile.slice(start, start + 1 + next);
}

test('the booking image refuses to build without the commit it is built from, and compose passes it to every build of it', () => {
  const runtime = dockerfileStage('runtime');
  // No default: an empty or absent BUILD_COMMIT would give every image of one version the same build id.
  expect(runtime).toMatch(/^ARG BUILD_COMMIT$/m);
  expect(runtime).not.toMatch(/^ARG BUILD_COMMIT=/m);
  // The guard is the stage's first RUN, so a build without a commit stops before anything else is done.
  const guard = /^RUN ((?:.*\\\n)*.*)$/m.exec(runtime)?.[1]?.replace(/\\\n/g, '\n');
  expect(guard).toContain('BUILD_COMMIT');
  const run = (commit: string | undefined) =>
    spawnSync('sh', ['-c', guard!], {
      env: { PATH: process.env.PATH, ...(commit === undefined ? {} : { BUILD_COMMIT: commit }) },
      encoding: 'utf8',
    });
  for (const bad of [
    undefined,
    '',
    '1.0.0',
    'abc12',
    'HEAD',
    '9cbc003-dirty',
    'sha256:' + 'a'.repeat(64),
    'f'.repeat(65),
  ]) {
    const result = run(bad);
    expect({ bad, status: result.status }).toEqual({ bad, status: 1 });
    expect(result.stderr).toMatch(/BUILD_COMMIT must be the commit .*BUILD_COMMIT=\$\(git rev-parse --short=12 HEAD\)/);
  }
  for (const good of ['9cbc003', '9cbc003a1b2c', 'a'.repeat(40), 'b'.repeat(64)]) {
    expect({ good, status: run(good).status }).toEqual({ good, status: 0 });
  }
  expect(runtime).toMatch(/^ENV BUILD_COMMIT=\$\{BUILD_COMMIT\}$/m);
  // Every service that builds the default target (the booking image) passes the operator's BUILD_COMMIT.
  const booking = Object.entries(services).filter(
    ([, s]) => s.build !== undefined && (typeof s.build === 'string' || !(s.build as { target?: string }).target),
  );
  expect(booking.map(([name]) => name).sort()).toEqual(['codec-server', 'worker', 'worker-build-current']);
  for (const [name, s] of booking) {
    expect({ name, build: s.build }).toEqual({
      name,
      build: { context: '.', args: { BUILD_COMMIT: '${BUILD_COMMIT:-}' } },
    });
  }
});
