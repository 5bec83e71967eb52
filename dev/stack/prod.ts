/**
 * `npm run stack:prod`: the production topology on one machine. A private PostgreSQL cluster, the
 * Temporal schemas set up and upgraded, two Temporal server nodes behind one frontend address, the
 * standalone Web UI, the namespace and search attributes registered, two booking workers (separate
 * processes, as `npm run worker` runs them), the codec server and the sandbox supplier.
 *
 * Temporal takes only mutual TLS: a private CA and one certificate per job are made in the data folder on first
 * start (dev/prod/certs.ts; the CA's key in a folder of its own, `ca/`, that no process is pointed at), and every
 * process the stack starts reaches Temporal with its job's certificate through Temporal's own variables
 * (TEMPORAL_TLS_CLIENT_CERT_PATH, …). Workers and receivers have one per namespace (CN=worker:<namespace>,
 * CN=receiver:<namespace>), which the authorizer binds to it; the stack's setup, the console and the Web UI are
 * operators with a CN each (operator:stack-setup, operator:console, operator:web-ui), and the person running the stack
 * gets an operator certificate of their own (CN=operator:<STACK_OPERATOR>), so the audit log tells them apart. The
 * stack writes each identity's variables to `certs/<identity>.env` for another terminal.
 *
 * Partners apart (dev/prod/partners.ts): the stack's own partner books in `default`; each partner in STACK_PARTNERS
 * (default `acme`) gets a namespace of its own (`partner-<name>`, with the search attributes), a worker process for it
 * with the partner's own payload key, and a booking-caller certificate (CN=partner:<name>) that the authorizer lets
 * act in that namespace only. Its variables are in `partners/partner-<name>.env`.
 *
 * The data stays under STACK_DATA_DIR/prod, so a second start finds its bookings. Ctrl-C stops the
 * workers first (in-flight Books finish), then the rest; no process outlives it.
 */
import { WORKER_NODE_FLAGS } from '../../src/runtime/config/node-flags';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundlerOptions } from '../../src/workflow-bundle';
import { z } from 'zod';
import { loadConfig } from '../../src/runtime/config/index';
import { BookingStageKey, CustomerReferenceNoKey, DEFAULT_TASK_QUEUE } from '../../src/api/contract/index';
import { createEncryptionCodec } from '../../src/api/codec/encryption';
import { startCodecServer } from '../../src/servers/codec/server';
import { connectClient } from '../../src/api/client/index';
import { dataConverterFor } from '../../src/api/codec/config';
import { runDeployStep } from '../../src/operators/deploy/main';
import { describeDeployment } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { startConsole } from '../../src/operators/console/server';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { SANDBOX_PROFILE, startSandbox } from '../sandbox/server';
import { userInfo } from 'node:os';
import {
  connectionTls,
  ensureCertificates,
  issueClientCertificate,
  OPERATOR_NAME,
  STACK_OPERATORS,
  temporalTlsEnv,
  type CertPair,
  type StackCertificates,
} from '../prod/certs';
import { startProdCluster, waitForSearchAttributes } from '../prod/cluster';
import { ensurePartner, partnerNamespace, STACK_PARTNER, type StackPartner } from '../prod/partners';
import { startWebUi, webUiTlsFromEnv } from '../prod/ui';
import { stackEncryptionEnv } from './main';

const REPO = path.resolve(__dirname, '../..');

const ProdStackEnv = z.object({
  /** The frontend address clients and workers dial (a proxy over the nodes' frontends). */
  STACK_TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
  /** Node i takes ports STACK_NODE_BASE_PORT + 100 × i (frontend, history, matching, worker, membership…). */
  STACK_NODE_BASE_PORT: z.coerce.number().int().positive().max(32_000).default(7300),
  STACK_POSTGRES_PORT: z.coerce.number().int().positive().default(5433),
  STACK_UI_PORT: z.coerce.number().int().positive().default(8233),
  STACK_SANDBOX_PORT: z.coerce.number().int().nonnegative().default(8787),
  STACK_CODEC_PORT: z.coerce.number().int().nonnegative().default(8235),
  /** Port of the operator console (what needs a person), on loopback; CONSOLE_TOKEN as on `npm start`. */
  CONSOLE_PORT: z.coerce.number().int().nonnegative().default(8238),
  /** Booking worker processes. */
  STACK_WORKERS: z.coerce.number().int().min(1).max(8).default(2),
  /** Partners with a namespace of their own (`partner-<name>`), comma-separated; each gets one worker. Empty: none. */
  STACK_PARTNERS: z
    .string()
    .default('acme')
    .transform((s) =>
      s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    ),
  STACK_DATA_DIR: z.string().default(path.join(REPO, '.data')),
  /**
   * The person running the stack: `certs/operator.env` holds their own operator certificate (CN=operator:<name>),
   * never the stack's. Default: this account's name.
   */
  STACK_OPERATOR: z
    .string()
    .default(() => accountOperatorName())
    .refine((name) => OPERATOR_NAME.test(name) && !(Object.values(STACK_OPERATORS) as string[]).includes(name), {
      message: `a person's name, ${OPERATOR_NAME}, not one of the stack's own (${Object.values(STACK_OPERATORS).join(', ')})`,
    }),
});

/** This account's name as an operator's name (lowercase letters, digits, `-`); `local` when there is none. */
function accountOperatorName(): string {
  let name = '';
  try {
    name = userInfo().username;
  } catch {
    // no account name (a container with an unnamed uid): `local` below
  }
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return cleaned && !(Object.values(STACK_OPERATORS) as string[]).includes(cleaned) ? cleaned : 'local';
}

/** A booking worker in its own process, its lines prefixed with its name. */
function startWorkerProcess(name: string, env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<void> } {
  const tsNode = require.resolve('ts-node/dist/bin.js');
  const child = spawn(
    process.execPath,
    [...WORKER_NODE_FLAGS, tsNode, '--transpile-only', path.join(REPO, 'src/worker.ts')],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited with code ${code} at start`)));
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        console.log(`[${name}] ${line}`);
        if (line.includes('Worker polling task queue')) resolve();
      });
    }
  });
  return { child, ready };
}

/**
 * The lines a terminal exports to call the stack with `pair` in `namespace`, also written to `<certs>/<name>.env` so
 * that `source` works; returns the file's path and its lines.
 */
function writeClientEnvFile(
  certs: StackCertificates,
  name: string,
  pair: CertPair,
  address: string,
  namespace: string,
): { file: string; lines: string[] } {
  const vars = { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, ...temporalTlsEnv(certs, pair) };
  const lines = Object.entries(vars).map(([key, value]) => `export ${key}=${value}`);
  const file = path.join(certs.dir, `${name}.env`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, lines };
}

/** `partners/partner-<name>.env`: what the partner's service exports (its namespace, certificate, payload key). */
function writePartnerEnvFile(certs: StackCertificates, partner: StackPartner, address: string): string {
  const vars = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: partner.namespace,
    TEMPORAL_TLS_CLIENT_CERT_PATH: partner.pair.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: partner.pair.key,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
    PAYLOAD_ENCRYPTION_KEYS: partner.payloadKeys,
  };
  const file = path.join(path.dirname(partner.pair.cert), `partner-${partner.name}.env`);
  const lines = Object.entries(vars).map(([key, value]) => `export ${key}=${value}`);
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function main(): Promise<void> {
  const env = ProdStackEnv.parse(process.env);
  const dataDir = path.join(env.STACK_DATA_DIR, 'prod');
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
  };
  // First Ctrl-C (or SIGTERM): stop in order. A second one leaves at once; the exit hooks of dev/prod still
  // SIGKILL the Temporal nodes and stop PostgreSQL, so nothing outlives the launcher either way.
  let signals = 0;
  const stopped = new Promise<void>((resolve) => {
    const onSignal = () => {
      if (++signals > 1) process.exit(130);
      console.log('Stopping: workers first (in-flight Books finish), then the rest. Ctrl-C again to leave at once.');
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  try {
    // A worker's and a receiver's certificate for the stack's namespace and for each partner's.
    const certs = ensureCertificates(path.join(dataDir, 'certs'), {
      caDir: path.join(dataDir, 'ca'),
      extraNamespaces: env.STACK_PARTNERS.map(partnerNamespace),
    });
    const partners = env.STACK_PARTNERS.map((partner) =>
      ensurePartner({ partner, dir: path.join(dataDir, 'partners'), caDir: certs.caDir }),
    );
    const cluster = await startProdCluster({
      dataDir,
      frontendPort: env.STACK_TEMPORAL_PORT,
      basePort: env.STACK_NODE_BASE_PORT,
      postgresPort: env.STACK_POSTGRES_PORT,
      tls: certs,
      // Each partner's certificate acts in its own namespace only; the stack's own partner in the stack's.
      partnerNamespaces: Object.fromEntries([
        [STACK_PARTNER, ['default']],
        ...partners.map((p) => [p.name, [p.namespace]]),
      ]),
      extraNamespaces: partners.map((p) => p.namespace),
      // Starts name the workers' queue only (the workers below read BOOKING_TASK_QUEUE too).
      bookingTaskQueues: [process.env.BOOKING_TASK_QUEUE || DEFAULT_TASK_QUEUE],
    });
    stops.push(() => cluster.stop());
    // The stack's own setup (namespaces, search attributes, making its build current): CN=operator:stack-setup.
    const connection = await Connection.connect({ address: cluster.address, tls: connectionTls(certs, 'operator') });
    stops.push(() => connection.close());
    for (const namespace of [cluster.namespace, ...partners.map((p) => p.namespace)])
      await ensureTemporalReady({ services: connection, namespace, register: true });
    // Before the first `npm run book` from another terminal can land on a node that does not map them yet.
    for (const namespace of [cluster.namespace, ...partners.map((p) => p.namespace)])
      await waitForSearchAttributes({ ...cluster, namespace }, [CustomerReferenceNoKey.name, BookingStageKey.name]);

    const sandbox = await startSandbox({ port: env.STACK_SANDBOX_PORT });
    stops.push(() => sandbox.close());
    // The key file the dev stack and `npm run book` use: one key for whichever stack is running.
    const encryptionEnv = stackEncryptionEnv(env.STACK_DATA_DIR, process.env);
    const workerEnv = {
      SUPPLIER_APP_KEY: 'sandbox-app',
      SUPPLIER_APP_SECRET: 'sandbox-secret',
      // The production topology, but against the sandbox: test schedules (`recovery.testing`) are accepted as on
      // `npm start`. RECOVERY_TESTING=off in the environment turns it off.
      RECOVERY_TESTING: 'on',
      SUPPLIER_PROFILE: JSON.stringify(SANDBOX_PROFILE),
      // Versioned, as production runs: runs finish on the build they started on (`npm run deploy` moves new ones).
      WORKER_DEPLOYMENT_NAME: 'hotel-booking',
      ...process.env,
      ...encryptionEnv,
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_NAMESPACE: cluster.namespace,
      // The workers' own identity: they alone take and answer tasks.
      ...temporalTlsEnv(certs, 'worker'),
      SUPPLIER_BASE_URL: sandbox.url,
    };
    const config = loadConfig(workerEnv);
    // Every worker of this stack is one build (the id computed once: the package version and the commit).
    if (config.worker.deployment) Object.assign(workerEnv, { WORKER_BUILD_ID: config.worker.deployment.buildId });
    const codecUrl = `http://127.0.0.1:${env.STACK_CODEC_PORT}`;
    const uiOrigin = `http://127.0.0.1:${env.STACK_UI_PORT}`;
    const codecToken = process.env.CODEC_SERVER_TOKEN || undefined;
    const codec = await startCodecServer({
      codec: createEncryptionCodec(config.encryption!),
      port: env.STACK_CODEC_PORT,
      allowedOrigin: uiOrigin,
      token: codecToken,
    });
    stops.push(() => codec.close());
    const ui = await startWebUi({
      dataDir,
      port: env.STACK_UI_PORT,
      temporalAddress: cluster.address,
      namespace: cluster.namespace,
      codecEndpoint: codecUrl,
      // With a token the UI cannot send it: the browser sends the session cookie from the codec server's /login.
      codecIncludeCredentials: codecToken !== undefined,
      tls: webUiTlsFromEnv(temporalTlsEnv(certs, certs.operators.webUi)),
    });
    stops.push(() => ui.stop());
    // The console acts as an operator does (checks, cancels, notes): its own operator certificate
    // (CN=operator:console), the workers' keys. It watches the stack's namespace and each partner's, there with that
    // partner's payload key (one connection).
    const consoleClient = await connectClient({ ...workerEnv, ...temporalTlsEnv(certs, certs.operators.console) });
    stops.push(() => consoleClient.connection.close());
    const partnerConsoleClients = partners.map(
      (p) =>
        new Client({
          connection: consoleClient.connection,
          namespace: p.namespace,
          dataConverter: dataConverterFor(
            loadConfig({ ...workerEnv, PAYLOAD_ENCRYPTION_KEYS: p.payloadKeys }).encryption,
          ),
        }),
    );
    const operatorConsole = await startConsole({
      clients: [consoleClient, ...partnerConsoleClients],
      port: env.CONSOLE_PORT,
      token: process.env.CONSOLE_TOKEN || undefined,
      taskQueue: config.taskQueue,
      webUiUrl: ui.url,
    });
    stops.push(() => operatorConsole.close());

    // One workflow bundle for every worker (each would otherwise run webpack at start).
    const bundle = path.join(dataDir, 'workflow-bundle.js');
    // With the options every worker bundles with (the preloaded modules), or these workers would run without them.
    const { code } = await bundleWorkflowCode({
      ...workflowBundlerOptions(),
      workflowsPath: require.resolve('../../src/workflows'),
      logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
    });
    writeFileSync(bundle, code);
    const workers = [
      ...Array.from({ length: env.STACK_WORKERS }, (_, i) =>
        startWorkerProcess(`worker-${i + 1}`, { ...workerEnv, WORKER_WORKFLOW_BUNDLE: bundle }),
      ),
      // A worker polls one namespace: one per partner, with the partner's payload key and no other, and a worker
      // certificate for that namespace only (CN=worker:partner-<name>).
      ...partners.map((p) =>
        startWorkerProcess(`worker-${p.name}`, {
          ...workerEnv,
          ...temporalTlsEnv(certs, certs.namespaces[p.namespace]!.worker),
          TEMPORAL_NAMESPACE: p.namespace,
          PAYLOAD_ENCRYPTION_KEYS: p.payloadKeys,
          // The sweep lists the whole supplier account, every partner's orders: it runs in the stack's namespace only,
          // so no partner's histories hold them (docs/production.md, "On one supplier account").
          RECONCILIATION_SCHEDULE: 'off',
          WORKER_METRICS_PORT: '',
          WORKER_WORKFLOW_BUNDLE: bundle,
        }),
      ),
    ];
    stops.push(async () => {
      await Promise.all(workers.map((w) => stopWorker(w.child)));
    });
    await Promise.all(workers.map((w) => w.ready));
    if (config.worker.deployment) {
      // The stack's build takes new runs in each namespace, through the replay gate as every deploy does: on data
      // left by another build, the gate refuses when an open run it would continue does not replay.
      const build = config.worker.deployment;
      const setupClient = new Client({
        connection,
        namespace: cluster.namespace,
        dataConverter: dataConverterFor(config.encryption),
      });
      await makeCurrent(setupClient, build, config.taskQueue, bundle);
      for (const p of partners) {
        const partnerClient = new Client({
          connection,
          namespace: p.namespace,
          dataConverter: dataConverterFor(
            loadConfig({ ...workerEnv, PAYLOAD_ENCRYPTION_KEYS: p.payloadKeys }).encryption,
          ),
        });
        await makeCurrent(partnerClient, build, config.taskQueue, bundle);
      }
    }

    const nodes = cluster.nodes.map((n) => `${n.name} :${n.ports.frontend} (pid ${n.pid()})`).join(', ');
    const at = (name: string, pair: CertPair, namespace = cluster.namespace) =>
      writeClientEnvFile(certs, name, pair, cluster.address, namespace);
    const caller = at('booking-caller', certs.clients.caller);
    // A person's own operator certificate (the audit log and the CLI's records name them), never the stack's.
    const person = issueClientCertificate({
      who: 'operator',
      name: env.STACK_OPERATOR,
      caDir: certs.caDir,
      out: path.join(dataDir, 'operators', env.STACK_OPERATOR),
    });
    const operator = at('operator', person.pair);
    // A worker and a receiver act in one namespace each: a file per namespace.
    at('worker', certs.clients.worker);
    const receiver = at('callback-receiver', certs.clients.receiver);
    const partnerReceivers = partners.map((p) => {
      at(`worker-${p.namespace}`, certs.namespaces[p.namespace]!.worker, p.namespace);
      return at(`callback-receiver-${p.namespace}`, certs.namespaces[p.namespace]!.receiver, p.namespace);
    });
    const partnerEnvFiles = partners.map((p) => writePartnerEnvFile(certs, p, cluster.address));
    console.log(
      [
        '',
        'Hotel booking orchestrator, production topology:',
        `  Temporal gRPC     ${cluster.address}  (one address over ${cluster.nodes.length} nodes: ${nodes}), mutual TLS only`,
        `  Certificates      ${certs.dir}  (one per job: worker and callback-receiver per namespace, booking-caller, operator per person; CA key in ${certs.caDir})`,
        `  PostgreSQL        127.0.0.1:${cluster.postgres.port}  (data ${cluster.postgres.pgData})`,
        `  History shards    ${cluster.historyShards}`,
        `  Temporal Web UI   ${ui.url}`,
        `  Sandbox supplier  ${sandbox.url}`,
        `  Codec server      ${codec.url}`,
        ...(codecToken
          ? [`                    the Web UI decodes once you log in: open ${codec.url}/login, type CODEC_SERVER_TOKEN`]
          : []),
        `  Operator console  ${operatorConsole.url}  (what needs a person)`,
        `  Workers           ${env.STACK_WORKERS} processes on task queue "${config.taskQueue}" in ${cluster.namespace}`,
        ...partners.map(
          (p) =>
            `  Partner ${p.name.padEnd(10)}namespace ${p.namespace}, its own worker and payload key (partner:${p.name})`,
        ),
        `  Logs              ${path.join(dataDir, 'logs')}`,
        '',
        'Temporal refuses clients without a certificate from the stack, and lets each do only its job. To book from',
        `another terminal (npm run book, the temporal CLI), export these (or: source ${caller!.file}):`,
        ...caller.lines.map((line) => `  ${line}`),
        `The callback receiver (npm run callbacks), one per namespace: source ${receiver.file}`,
        ...partnerReceivers.map((r, i) => `  for ${partners[i]!.namespace}: source ${r.file}`),
        `Operators (temporal workflow terminate/reset, schedules, task queues): source ${operator.file}`,
        `  (${person.subject}; another person: npx ts-node --transpile-only dev/prod/certs.ts issue-operator <name>)`,
        ...partnerEnvFiles.map((file, i) => `Partner ${partners[i]!.name}, in its own namespace only: source ${file}`),
        '',
        'Try: npm run book -- --scenario confirmAfterMs=0',
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    await stopped;
  } finally {
    await stopAll();
  }
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );

/**
 * `npm run deploy -- rollout` for the stack's own build, once its workers have polled (the server registers a build
 * at its first poll); nothing to do when it is current already. A refused gate stops the stack, naming the runs.
 */
async function makeCurrent(client: Client, build: WorkerBuild, taskQueue: string, bundle: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const routing = await describeDeployment(client, build.deploymentName);
    if (routing?.current === build.buildId) return;
    if (routing?.builds.some((b) => b.buildId === build.buildId)) break;
    if (attempt > 100) throw new Error(`build ${build.buildId} never registered in ${client.options.namespace}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const lines: string[] = [];
  const { exitCode } = await runDeployStep(
    client,
    {
      step: 'rollout',
      deploymentName: build.deploymentName,
      buildId: build.buildId,
      taskQueue,
      bundle,
      strict: false,
      wait: false,
      json: false,
    },
    { say: (line) => lines.push(line), identity: 'npm run stack:prod' },
  );
  if (exitCode !== 0) {
    throw new Error(
      `${client.options.namespace}: the replay gate refused build ${build.buildId}:\n${lines.join('\n')}`,
    );
  }
  console.log(`Build ${build.buildId} current in ${client.options.namespace}`);
}
