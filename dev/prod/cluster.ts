/**
 * The production topology on one machine: a PostgreSQL cluster, the Temporal schemas set up and upgraded,
 * and several Temporal server nodes (each runs all four services) that form one cluster through membership
 * on loopback, behind one frontend address. Used by `npm run stack:prod`, the integration tier's prod
 * engine, the chaos run's prod mode and the benchmarks; every piece can be killed and brought back.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { parse, stringify } from 'yaml';
import { resolveProdBinaries, type ProdBinaries } from '../temporal/binaries';
import { freePort, waitForPort } from '../temporal/dev-server';
import { connectionTls, type StackCertificates } from './certs';
import { partnerNamespacesEnv, STACK_PARTNER, type PartnerNamespaces } from './partners';
import { startPostgres, type Postgres } from './postgres';
import { startFrontendProxy, type FrontendProxy } from './proxy';
import { PROD_TOPOLOGY } from './topology';

/** The dynamic config file every server we run reads: the same file docker-compose mounts. */
export const DYNAMIC_CONFIG_FILE = path.resolve(__dirname, '../../infra/dynamicconfig/booking.yaml');

export interface ClusterOptions {
  dataDir: string;
  /** The address clients dial (a proxy over the frontends); 0 picks a free port. */
  frontendPort: number;
  /** Node i takes ports from basePort + 100 × i (below 32768); 0 picks a free block. */
  basePort: number;
  postgresPort: number;
  nodes?: number;
  historyShards?: number;
  /**
   * Dynamic config values over infra/dynamicconfig/booking.yaml (KEY → JSON value), for a benchmark that
   * tries a setting; the nodes then read a merged copy in the data folder.
   */
  dynamicConfig?: Record<string, string>;
  namespace?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  log?: (line: string) => void;
  /**
   * Mutual TLS (dev/prod/certs.ts): the frontend and internode listeners take only clients with a certificate
   * from this CA. Without it the nodes take plaintext gRPC (the test harness, chaos runs and benchmarks).
   */
  tls?: StackCertificates;
  /**
   * With TLS: the namespaces each partner's booking callers may act in (the authorizer's TEMPORAL_PARTNER_NAMESPACES).
   * Default: the stack's own partner in `namespace`, and nobody else anywhere.
   */
  partnerNamespaces?: PartnerNamespaces;
  /**
   * With TLS: the task queues a start may name, but an operator's (the authorizer's TEMPORAL_BOOKING_TASK_QUEUES).
   * Default: any, for the test clusters, which run a queue per test file.
   */
  bookingTaskQueues?: readonly string[];
  /** Namespaces registered besides `namespace` (a partner's, dev/prod/partners.ts), each served by every node. */
  extraNamespaces?: readonly string[];
}

interface NodePorts {
  frontend: number;
  history: number;
  matching: number;
  worker: number;
  frontendMembership: number;
  historyMembership: number;
  matchingMembership: number;
  workerMembership: number;
  frontendHttp: number;
  metrics: number;
}

export interface ServerNode {
  name: string;
  ports: NodePorts;
  /** The authorizer's audit log (one JSON line per write or refusal), with mutual TLS: logs/<name>-audit.jsonl. */
  auditLog: string;
  pid(): number | undefined;
  running(): boolean;
  /** SIGKILL, as a crashed machine: no graceful handoff of shards. */
  kill(): Promise<void>;
  /** Starts the node again on its ports; resolves when its frontend answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ProdCluster {
  /** host:port of the frontend proxy: what TEMPORAL_ADDRESS is set to. */
  address: string;
  /** The certificates the nodes require from clients, when they run with mutual TLS. */
  tls?: StackCertificates;
  namespace: string;
  nodes: ServerNode[];
  postgres: Postgres;
  historyShards: number;
  dataDir: string;
  stop(): Promise<void>;
}

/** True when nothing listens on the port (it can be bound on 127.0.0.1 right now). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A base port whose block (100 per node) is free. Below 32768: the server stores membership ports in a
 * PostgreSQL smallint, so the OS's ephemeral ports cannot be used for them.
 */
async function freeBasePort(nodes: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + 100 * Math.floor(Math.random() * 120);
    const ports = Array.from({ length: nodes }, (_, i) => PORT_NAMES.map((_, j) => base + 100 * i + j)).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free block of ports for the Temporal nodes between 20000 and 32767');
}

const PORT_NAMES: Array<keyof NodePorts> = [
  'frontend',
  'history',
  'matching',
  'worker',
  'frontendMembership',
  'historyMembership',
  'matchingMembership',
  'workerMembership',
  'frontendHttp',
  'metrics',
];

function nodePorts(basePort: number, index: number): NodePorts {
  const ports = {} as NodePorts;
  for (const [i, name] of PORT_NAMES.entries()) ports[name] = basePort + 100 * index + i;
  return ports;
}

/** One node's server config (`temporal-server --config <dir> --env <name>` reads `<dir>/<name>.yaml`). */
export function serverConfig(options: {
  ports: NodePorts;
  postgres: { port: number; user: string; password: string };
  historyShards: number;
  clusterAddress: string;
  logLevel: string;
  dynamicConfigFile?: string;
  tls?: StackCertificates;
}): Record<string, unknown> {
  const { ports, postgres } = options;
  const { persistence } = PROD_TOPOLOGY;
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  return {
    log: { stdout: true, level: options.logLevel },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: options.historyShards,
      datastores: {
        default: store(PROD_TOPOLOGY.databases.default, persistence.maxConns),
        visibility: store(PROD_TOPOLOGY.databases.visibility, persistence.visibilityMaxConns),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: {
        prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${ports.metrics}` },
      },
      ...(options.tls
        ? {
            tls: serverTls(options.tls),
            // The identity from the client certificate's OU, an allow-list per identity, internode ports for the
            // nodes' certificate only (dev/temporal/authz-server, the nodes' binary with TLS).
            authorization: { claimMapper: 'certificate-subject', authorizer: 'certificate-roles' },
          }
        : {}),
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: options.clusterAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: options.dynamicConfigFile ?? DYNAMIC_CONFIG_FILE, pollInterval: '10s' },
  };
}

/**
 * The server's `global.tls` (common/config/config.go, RootTLS in v1.29): frontend and internode listeners
 * present the nodes' certificate and require a client certificate from the stack's CA. A node calling another
 * (history, matching) and its system worker calling a frontend present the same certificate (the internode
 * pair, which is why it carries clientAuth) and check the other side's against the CA and the server name.
 */
export function serverTls(certs: StackCertificates): Record<string, unknown> {
  const group = {
    server: {
      certFile: certs.server.cert,
      keyFile: certs.server.key,
      requireClientAuth: true,
      clientCaFiles: [certs.ca.cert],
    },
    client: { serverName: certs.serverName, rootCaFiles: [certs.ca.cert] },
  };
  return { internode: group, frontend: group };
}

/** Creates both databases and applies every schema version not yet applied: safe on every start. */
export function setupSchemas(bin: ProdBinaries, postgres: Postgres): void {
  const common = [
    '--plugin',
    'postgres12',
    '--ep',
    postgres.host,
    '-p',
    String(postgres.port),
    '-u',
    postgres.user,
    '--pw',
    postgres.password,
  ];
  const tool = (db: string, ...args: string[]) => {
    const result = spawnSync(bin.sqlTool, [...common, '--db', db, ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`temporal-sql-tool ${args[0]} on ${db} failed:\n${result.stderr}`);
  };
  for (const [db, folder] of [
    [PROD_TOPOLOGY.databases.default, 'temporal'],
    [PROD_TOPOLOGY.databases.visibility, 'visibility'],
  ] as const) {
    tool(db, 'create-database');
    tool(db, 'setup-schema', '-v', '0.0');
    tool(db, 'update-schema', '-d', path.join(bin.schemaDir, 'v12', folder, 'versioned'));
  }
}

/** The project's dynamic config with `overrides` on top, written beside the nodes' config; the file itself when none. */
function dynamicConfigFile(configDir: string, overrides: Record<string, string> | undefined): string {
  if (!overrides || Object.keys(overrides).length === 0) return DYNAMIC_CONFIG_FILE;
  const merged = (parse(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8')) ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) merged[key] = [{ value: JSON.parse(value) as unknown }];
  const file = path.join(configDir, 'dynamicconfig.yaml');
  writeFileSync(file, stringify(merged));
  return file;
}

/**
 * The shard count is fixed when the cluster is first created; a data folder keeps the count it was made
 * with, and a different request is refused rather than silently ignored.
 */
function historyShardsFor(dataDir: string, requested: number | undefined): number {
  const file = path.join(dataDir, 'history-shards');
  if (existsSync(file)) {
    const kept = Number(readFileSync(file, 'utf8').trim());
    if (requested !== undefined && requested !== kept)
      throw new Error(
        `${dataDir} was created with ${kept} history shards; the count cannot change (asked: ${requested})`,
      );
    return kept;
  }
  const shards = requested ?? PROD_TOPOLOGY.historyShards;
  writeFileSync(file, `${shards}\n`);
  return shards;
}

function startNode(
  executable: string,
  name: string,
  ports: NodePorts,
  configDir: string,
  logDir: string,
  authzEnv: Record<string, string>,
): ServerNode {
  let child: ChildProcess | undefined;
  const exited = (c: ChildProcess, ms: number) =>
    new Promise<boolean>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve(true);
      const timer = setTimeout(() => resolve(false), ms);
      c.once('exit', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  const auditLog = path.join(logDir, `${name}-audit.jsonl`);
  const node: ServerNode = {
    name,
    ports,
    auditLog,
    pid: () => child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async start() {
      const out = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
      const c = spawn(
        executable,
        [
          '--root',
          path.dirname(configDir),
          '--config',
          path.basename(configDir),
          '--env',
          name,
          '--allow-no-auth',
          'start',
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          // Read by dev/temporal/authz-server only (the nodes' binary with TLS).
          env: { ...process.env, ...authzEnv, TEMPORAL_AUDIT_LOG: auditLog },
        },
      );
      // Both streams into one file, closed when the process is gone: the first stream to end must not end the
      // file while the other still writes (a node's last lines at SIGTERM came after, and threw write-after-end).
      c.stdout!.pipe(out, { end: false });
      c.stderr!.pipe(out, { end: false });
      c.once('close', () => out.end());
      child = c;
      liveServers.add(c);
      c.once('exit', () => liveServers.delete(c));
      const gone = exited(c, 120_000).then(() => 'exited' as const);
      const up = waitForPort('127.0.0.1', ports.frontend, 120_000).then(() => 'up' as const);
      if ((await Promise.race([gone, up])) === 'exited')
        throw new Error(
          `Temporal node ${name} exited at start (code ${c.exitCode}, signal ${c.signalCode}); see ${logDir}/${name}.log`,
        );
    },
    async kill() {
      if (!child || !node.running()) return;
      child.kill('SIGKILL');
      await exited(child, 10_000);
    },
    async stop() {
      if (!child || !node.running()) return;
      child.kill('SIGTERM');
      if (!(await exited(child, 15_000))) {
        child.kill('SIGKILL');
        await exited(child, 5_000);
      }
    },
  };
  return node;
}

/** Server processes still running, killed if this process exits without stopping them. */
const liveServers = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of liveServers) c.kill('SIGKILL');
});

/** A connection to one node's frontend, as an operator (with mutual TLS, the operator certificate). */
function connectNode(port: number, certs: StackCertificates | undefined): Promise<Connection> {
  return Connection.connect({
    address: `127.0.0.1:${port}`,
    connectTimeout: 10_000,
    ...(certs ? { tls: connectionTls(certs, 'operator') } : {}),
  });
}

/** Registers the namespace once and waits until every node serves it (each node caches namespaces). */
async function ensureNamespace(
  cluster: { nodes: ServerNode[]; tls?: StackCertificates },
  namespace: string,
  retentionDays: number,
) {
  const connect = (port: number) => connectNode(port, cluster.tls);
  const first = await connect(cluster.nodes[0]!.ports.frontend);
  try {
    await first.workflowService.describeNamespace({ namespace }).catch(async () => {
      await first.workflowService
        .registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs(retentionDays * 86_400_000),
        })
        .catch((err: { code?: number }) => {
          if (err.code !== 6) throw err; // 6 ALREADY_EXISTS: another start registered it
        });
    });
  } finally {
    await first.close();
  }
  for (const node of cluster.nodes) {
    const connection = await connect(node.ports.frontend);
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        // Describe reads the database; most calls read the node's namespace cache, refreshed every few
        // seconds, so wait for a call of that kind.
        const known = await connection.operatorService.listSearchAttributes({ namespace }).then(
          () => true,
          () => false,
        );
        if (known) break;
        if (Date.now() > deadline) throw new Error(`node ${node.name} does not know namespace ${namespace} after 60 s`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await connection.close();
    }
  }
}

/**
 * Waits until every node maps the search attributes in the namespace: each node reads the mapping from its
 * namespace cache, refreshed every few seconds, so a start that sets one is refused (INVALID_ARGUMENT, "no
 * mapping defined for search attribute") on a node that has not refreshed since they were registered.
 */
export async function waitForSearchAttributes(
  cluster: Pick<ProdCluster, 'nodes' | 'namespace' | 'tls'>,
  names: readonly string[],
  timeoutMs = 60_000,
): Promise<void> {
  const query = names.map((name) => `${name} = 'readiness-probe'`).join(' AND ');
  for (const node of cluster.nodes) {
    const connection = await connectNode(node.ports.frontend, cluster.tls);
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const error = await connection.workflowService
          .countWorkflowExecutions({ namespace: cluster.namespace, query })
          .then(
            () => undefined,
            (err: Error) => err,
          );
        if (!error) break;
        if (Date.now() > deadline)
          throw new Error(`node ${node.name} does not map ${names.join(', ')} after ${timeoutMs} ms: ${error.message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await connection.close();
    }
  }
}

export async function startProdCluster(options: ClusterOptions): Promise<ProdCluster> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[prod] ${line}\n`));
  const bin = resolveProdBinaries();
  const dataDir = path.resolve(options.dataDir);
  const [configDir, logDir] = [path.join(dataDir, 'config'), path.join(dataDir, 'logs')];
  mkdirSync(configDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const namespace = options.namespace ?? 'default';
  const historyShards = historyShardsFor(dataDir, options.historyShards);
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log(`stop: ${String(err)}`));
  };

  try {
    const t0 = Date.now();
    const postgres = await startPostgres({
      dataDir,
      port: options.postgresPort || (await freePort()),
      user: PROD_TOPOLOGY.postgres.user,
    });
    stops.push(() => postgres.stop());
    setupSchemas(bin, postgres);
    log(`PostgreSQL on ${postgres.port} (${postgres.pgData}), schemas current, in ${Date.now() - t0} ms`);

    const count = options.nodes ?? PROD_TOPOLOGY.serverNodes;
    const nodes: ServerNode[] = [];
    // Read by dev/temporal/authz-server only: with TLS.
    const authzEnv: Record<string, string> = options.tls
      ? {
          TEMPORAL_PARTNER_NAMESPACES: partnerNamespacesEnv(
            options.partnerNamespaces ?? { [STACK_PARTNER]: [namespace] },
          ),
          TEMPORAL_BOOKING_TASK_QUEUES: options.bookingTaskQueues?.join(',') ?? '*',
        }
      : {};
    const proxyPort = options.frontendPort || (await freePort());
    const basePort = options.basePort || (await freeBasePort(count));
    for (let i = 0; i < count; i++) {
      const name = `node-${i + 1}`;
      const ports = nodePorts(basePort, i);
      const config = serverConfig({
        ports,
        postgres,
        historyShards,
        clusterAddress: `127.0.0.1:${proxyPort}`,
        dynamicConfigFile: dynamicConfigFile(configDir, options.dynamicConfig),
        logLevel: options.logLevel ?? 'warn',
        ...(options.tls ? { tls: options.tls } : {}),
      });
      writeFileSync(path.join(configDir, `${name}.yaml`), stringify(config));
      // With TLS, the binary that understands the authorization above; without, Temporal's own.
      nodes.push(startNode(options.tls ? bin.serverAuthz : bin.server, name, ports, configDir, logDir, authzEnv));
    }
    stops.push(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    });
    const t1 = Date.now();
    // The first node alone: on a new database each node writes the cluster's metadata record at start, and
    // two doing it at once fail one of them on the primary key.
    await nodes[0]!.start();
    await Promise.all(nodes.slice(1).map((n) => n.start()));
    const proxy: FrontendProxy = await startFrontendProxy({
      port: proxyPort,
      backends: () => nodes.filter((n) => n.running()).map((n) => ({ host: '127.0.0.1', port: n.ports.frontend })),
    });
    stops.splice(1, 0, () => proxy.close());
    for (const ns of [namespace, ...(options.extraNamespaces ?? [])])
      await ensureNamespace({ nodes, ...(options.tls ? { tls: options.tls } : {}) }, ns, PROD_TOPOLOGY.retentionDays);
    log(
      `${count} Temporal nodes up behind ${proxy.address}, ${historyShards} history shards, ` +
        `${options.tls ? 'mutual TLS' : 'plaintext gRPC'}, in ${Date.now() - t1} ms`,
    );
    return {
      address: proxy.address,
      namespace,
      nodes,
      postgres,
      historyShards,
      dataDir,
      stop,
      ...(options.tls ? { tls: options.tls } : {}),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
