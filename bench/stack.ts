/**
 * One benchmark's own stack on free ports: a Temporal CLI dev server (SQLite in memory or in a temp
 * file, Web UI on), the sandbox supplier in a child process, a NativeConnection shared by the bench's
 * client and any in-process worker (eager workflow start needs exactly that), and workers, in
 * process or as child processes.
 *
 * `stop()` takes everything down in reverse order and removes the temp directory; it is safe to
 * call twice. Live stacks are also remembered so that Ctrl-C in bench/main.ts can stop them.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { dataConverterFor } from '../src/api/codec/config';
import type { RateLimits } from '../dev/sandbox/rate-limit';
import type {
  SandboxCall,
  SandboxOperation,
  SandboxOrderView,
  SandboxRuntimeConfig,
  SandboxStats,
} from '../dev/sandbox/server';
import { resolveServerExecutable } from '../dev/temporal/binaries';
import { startDevServer } from '../dev/temporal/dev-server';
import { buildBookingWorker, type BookingWorkerSpec, type WorkerKind } from './workers';
import { benchConfig, type WorkerTuning } from './config';
import { defaultSupplierProfile } from '../src/runtime/config/supplier-profile';
import { startBookBarrier, type BookBarrier } from './book-barrier';
import { compiledForChildren } from './compile';
import { startChild, type ChildHandle } from './ipc';
import { freePort, procCpuSeconds, procRssMb, withChildren } from './measure';
import { startProdCluster, waitForSearchAttributes } from '../dev/prod/cluster';
import { BookingStageKey, CustomerReferenceNoKey } from '../src/api/contract/definitions';
import type { SandboxProcessInput, SandboxProcessReady } from './sandbox-process';
import { WORKER_NODE_FLAGS } from '../src/runtime/config/node-flags';
import type { WorkerProcessInput } from './worker-process';
import { SDK_PRELOAD_MODULES, workflowBundlerOptions } from '../src/workflow-bundle';

export type { WorkerTuning } from './config';

/** Limits so high the sandbox never answers 429: benchmarks measure the orchestrator, not the quota. */
export const UNLIMITED: RateLimits = { overall: 1e6, checkAvail: 1e6, book: 1e6, queryOrders: 1e6 };

export type Placement = 'inline' | 'child';

export interface StackOptions {
  /** Names the task queues and the temp directory. */
  name: string;
  /** The sandbox's limits, merged over UNLIMITED; workers are configured with the same. */
  rateLimits?: Partial<RateLimits>;
  /** See bench/sandbox-process.ts; on unless a benchmark asks for the sandbox as is. */
  memoizeOrderViews?: boolean;
  /** A prebuilt workflow bundle (the integration tier's global setup has one); built when absent. */
  bundlePath?: string;
  /** A prebuilt bundle of bench/floor-workflow.ts; built on first use when absent. */
  floorBundlePath?: string;
  /** Bundles built here preload the shipped modules (default) or none (see buildBundle). */
  preload?: boolean;
  /** Encrypt payloads (src/servers/codec) with a key made for this run, in worker and client alike. */
  encrypt?: boolean;
  /** The dev server's SQLite database: a temp file, as `npm start` uses (the default), or in memory. */
  db?: 'file' | 'memory';
  /** Server dynamic config (`--dynamic-config-value KEY=VALUE`), e.g. history.transferProcessorMaxPollRPS. */
  dynamicConfig?: Record<string, string>;
  /** The Temporal service: the CLI dev server (default) or the production topology (dev/prod). */
  engine?: 'dev' | 'prod';
  /** Prod engine: history shards (default: infra/temporal-server.env). */
  historyShards?: number;
  /** Workers reach the sandbox through bench/book-barrier.ts: the first `count` Book answers are released together. */
  bookBarrier?: { count: number; maxHoldMs: number };
}

/** The sandbox in its child process, seen through IPC. */
export interface SandboxHandle {
  url: string;
  pid: number;
  stats(): Promise<SandboxStats>;
  orders(): Promise<SandboxOrderView[]>;
  calls(op?: SandboxOperation): Promise<SandboxCall[]>;
  configure(config: SandboxRuntimeConfig): Promise<void>;
}

export interface WorkerStatusView {
  numInFlightWorkflowActivations: number;
  numInFlightActivities: number;
  numCachedWorkflows: number;
}

export interface MemoryView {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  gcForced: boolean;
}

export interface BenchWorker {
  placement: Placement;
  taskQueue: string;
  tuning: WorkerTuning;
  /** The child's pid; undefined in process. */
  pid?: number;
  status(): Promise<WorkerStatusView>;
  /** The worker process's memory; in process, that is the whole bench process. */
  memory(): Promise<MemoryView>;
  stop(): Promise<void>;
}

export interface StartCounts {
  started: number;
  eagerlyStarted: number;
}

export interface Stack {
  address: string;
  namespace: string;
  uiUrl: string;
  dbFile: string;
  devServerPid: number;
  sandbox: SandboxHandle;
  /** The Book barrier workers go through, when the stack has one. */
  barrier?: BookBarrier;
  connection: NativeConnection;
  bundlePath: string;
  encrypted: boolean;
  /**
   * A client on the shared NativeConnection. With `eager`, every start asks for eager execution
   * (the client helper has no option for it, so an interceptor adds it); `counts` tells how many
   * the server actually started eagerly.
   */
  createClient(eager: boolean): { client: Client; counts: StartCounts };
  /** A booking worker, or the reference worker of bench/floor-workflow.ts (`kind: 'floor'`). */
  startWorker(options: {
    taskQueue: string;
    tuning: WorkerTuning;
    placement: Placement;
    kind?: WorkerKind;
    /** SUPPLIER_MAX_CONNECTIONS for this worker, when not the configuration's. */
    maxConnections?: number;
  }): Promise<BenchWorker>;
  /**
   * CPU seconds so far of the Temporal service and the sandbox (children, from /proc). On the prod
   * engine `devServer` is both Temporal nodes plus PostgreSQL (postmaster and backends).
   */
  childCpu(): { devServer: number; sandbox: number };
  childRssMb(): { devServer: number; sandbox: number };
  stop(): Promise<void>;
}

const live = new Set<Stack>();

/** Stops every stack still running (Ctrl-C). */
export async function stopAllStacks(): Promise<void> {
  await Promise.all([...live].map((s) => s.stop()));
}

/** Temporal's own INFO lines would drown the tables; warnings and errors still show. */
export function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by the host (jest's install-worker-logs setup): that one is quiet too.
  }
}

export function temporalCliPath(): string {
  const exe = resolveServerExecutable('cli', { ...process.env, TEMPORAL_ALLOW_SDK_DOWNLOAD: '0' });
  if (exe.type !== 'existing-path') throw new Error('No Temporal CLI executable (run `npm run temporal:install`)');
  return exe.path;
}

/** `temporal --version`, e.g. "temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)". */
export function temporalVersion(): string {
  return execFileSync(temporalCliPath(), ['--version'], { encoding: 'utf8' }).trim();
}

/**
 * startDevServer takes no extra flags, so dynamic config goes through a wrapper script that adds
 * them. It `exec`s the CLI, so the server keeps the pid startDevServer knows (stop, /proc readings).
 */
function cliWithDynamicConfig(dir: string, dynamicConfig: Record<string, string>): string {
  const cli = temporalCliPath();
  const entries = Object.entries(dynamicConfig);
  if (entries.length === 0) return cli;
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const flags = entries.map(([k, v]) => `--dynamic-config-value ${quote(`${k}=${v}`)}`).join(' ');
  const wrapper = path.join(dir, 'temporal-with-dynamic-config.sh');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${quote(cli)} "$@" ${flags}\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

/**
 * Bundles workflow code into `dir` once, so workers start in a second instead of running webpack. The booking's
 * bundle gets the options the worker ships with (src/workflow-bundle.ts: stateless modules preloaded, shared per
 * V8 context); the floor's preloads the SDK's modules alike, so the floor stays "Temporal alone" under the same
 * SDK settings. `preload: false` builds both without (to measure what preloading changes: `--preload off`).
 */
export async function buildBundle(dir: string, kind: WorkerKind = 'booking', preload = true): Promise<string> {
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: kind === 'booking' ? require.resolve('../src/workflows') : require.resolve('./floor-workflow'),
    ...(preload ? (kind === 'booking' ? workflowBundlerOptions() : { preloadModules: [...SDK_PRELOAD_MODULES] }) : {}),
    logger: quiet as never,
  });
  const file = path.join(dir, `${kind}-workflow-bundle${preload ? '' : '-no-preload'}.js`);
  writeFileSync(file, code);
  return file;
}

/** The Temporal service a benchmark runs on, with the pids whose CPU and memory count as the server's. */
async function startTemporal(
  dir: string,
  options: StackOptions,
  dev: { port: number; uiPort: number; dbFile: string },
): Promise<{
  address: string;
  uiUrl: string;
  pids(): number[];
  /** Resolves once every node serves the search attributes a worker registered (prod: each node's cache). */
  searchAttributesReady(): Promise<void>;
  stop(): Promise<void>;
}> {
  if (options.engine === 'prod') {
    // As root, PostgreSQL runs as the postgres user, which must be able to enter the bench's temp folder.
    chmodSync(dir, 0o755);
    const cluster = await startProdCluster({
      dataDir: path.join(dir, 'prod'),
      frontendPort: 0,
      basePort: 0,
      postgresPort: 0,
      log: () => {},
      ...(options.historyShards ? { historyShards: options.historyShards } : {}),
      ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
    });
    const postmaster = Number(
      readFileSync(path.join(cluster.postgres.pgData, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    return {
      address: cluster.address,
      uiUrl: '',
      pids: () => [...cluster.nodes.map((n) => n.pid()!), ...withChildren(postmaster)],
      // Each node maps search attributes registered by a worker only after its namespace cache refreshes; a
      // start before that is refused ("no mapping defined for search attribute").
      searchAttributesReady: () =>
        waitForSearchAttributes(cluster, [CustomerReferenceNoKey.name, BookingStageKey.name]),
      stop: () => cluster.stop(),
    };
  }
  // A port picked free can be taken by another process before the server binds it (several test files start
  // servers at once): the server exits at start, and is started again on other ports.
  const cliPath = cliWithDynamicConfig(dir, options.dynamicConfig ?? {});
  let server: Awaited<ReturnType<typeof startDevServer>> | undefined;
  for (let attempt = 1; !server; attempt++) {
    try {
      server = await startDevServer({ cliPath, ...dev, logLevel: 'error' });
    } catch (err) {
      if (attempt >= 3) throw err;
      dev = { ...dev, port: await freePort(), uiPort: await freePort() };
    }
  }
  return {
    address: server.address,
    uiUrl: server.uiUrl,
    pids: () => [server.process.pid!],
    // One node: the worker's registration is served at once.
    searchAttributesReady: async () => {},
    stop: () => server.stop(),
  };
}

export async function startStack(options: StackOptions): Promise<Stack> {
  installQuietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), `bench-${options.name}-`));
  const stops: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const s of stops.reverse()) await s().catch((err: unknown) => console.error('bench stop:', err));
      live.delete(stack);
    })());
  // Declared before use in `stop`; assigned once everything is up.
  let stack: Stack = undefined as unknown as Stack;

  try {
    const [port, uiPort] = [await freePort(), await freePort()];
    // SQLite opens ':memory:' as an in-memory database: no file, no fsync.
    const dbFile = options.db === 'memory' ? ':memory:' : path.join(dir, 'temporal.db');
    const preload = options.preload ?? true;
    const bundle = options.bundlePath ? Promise.resolve(options.bundlePath) : buildBundle(dir, 'booking', preload);
    const server = await startTemporal(dir, options, { port, uiPort, dbFile });
    stops.push(() => server.stop());
    const devServerPid = server.pids()[0]!;

    const compiled = compiledForChildren();
    const rateLimits: RateLimits = { ...UNLIMITED, ...options.rateLimits };
    const sandboxChild: ChildHandle<SandboxProcessReady> = await startChild(
      path.join(compiled, 'bench', 'sandbox-process.js'),
      {
        rateLimits,
        confirmAfterMs: 0,
        memoizeOrderViews: options.memoizeOrderViews ?? true,
      } satisfies SandboxProcessInput,
    );
    stops.push(() => sandboxChild.stop());
    const sandbox: SandboxHandle = {
      url: sandboxChild.ready.url,
      pid: sandboxChild.pid,
      stats: () => sandboxChild.call('stats'),
      orders: () => sandboxChild.call('orders'),
      calls: (op) => sandboxChild.call('calls', op),
      configure: (config) => sandboxChild.call('configure', config),
    };

    const barrier = options.bookBarrier
      ? await startBookBarrier({
          target: sandbox.url,
          bookPath: defaultSupplierProfile.paths.book,
          ...options.bookBarrier,
        })
      : undefined;
    if (barrier) stops.push(() => barrier.close());
    // Workers talk to the supplier through the barrier when there is one; the bench reads the sandbox directly.
    const supplierUrl = barrier?.url ?? sandbox.url;
    const connection = await NativeConnection.connect({ address: server.address });
    stops.push(() => connection.close());
    const bundlePath = await bundle;
    let floorBundle: Promise<string> | undefined = options.floorBundlePath
      ? Promise.resolve(options.floorBundlePath)
      : undefined;
    const namespace = 'default';
    const encryptionKeys = options.encrypt ? `bench:${randomBytes(32).toString('base64')}` : undefined;
    const dataConverter = dataConverterFor(benchConfig(sandbox.url, { encryptionKeys }).encryption);

    stack = {
      address: server.address,
      namespace,
      uiUrl: server.uiUrl,
      dbFile,
      devServerPid,
      sandbox,
      ...(barrier ? { barrier } : {}),
      connection,
      bundlePath,
      encrypted: encryptionKeys !== undefined,
      createClient(eager) {
        const counts: StartCounts = { started: 0, eagerlyStarted: 0 };
        const interceptor: WorkflowClientInterceptor = {
          async startWithDetails(input, next) {
            const output = await next(
              eager ? { ...input, options: { ...input.options, requestEagerStart: true } } : input,
            );
            counts.started++;
            if (output.eagerlyStarted) counts.eagerlyStarted++;
            return output;
          },
        };
        const client = new Client({
          connection,
          namespace,
          interceptors: { workflow: [interceptor] },
          ...(dataConverter ? { dataConverter } : {}),
        });
        return { client, counts };
      },
      async startWorker({ taskQueue, tuning, placement, kind = 'booking', maxConnections }) {
        const spec: BookingWorkerSpec = {
          kind,
          namespace,
          taskQueue,
          sandboxUrl: supplierUrl,
          rateLimits,
          bundlePath: kind === 'booking' ? bundlePath : await (floorBundle ??= buildBundle(dir, 'floor', preload)),
          tuning,
          encryptionKeys,
          ...(maxConnections ? { maxConnections } : {}),
        };
        const worker =
          placement === 'inline'
            ? await inlineWorker(connection, spec)
            : await childWorker(path.join(compiled, 'bench', 'worker-process.js'), server.address, spec);
        stops.push(() => worker.stop());
        // Only the booking worker registers the search attributes (createWorkerFromConfig); starts need them.
        if (kind === 'booking') await server.searchAttributesReady();
        return worker;
      },
      childCpu: () => ({
        devServer: server.pids().reduce((sum, pid) => sum + (procCpuSeconds(pid) ?? 0), 0),
        sandbox: procCpuSeconds(sandbox.pid) ?? NaN,
      }),
      childRssMb: () => ({
        devServer: server.pids().reduce((sum, pid) => sum + (procRssMb(pid) ?? 0), 0),
        sandbox: procRssMb(sandbox.pid) ?? NaN,
      }),
      stop,
    };
    live.add(stack);
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}

async function inlineWorker(connection: NativeConnection, spec: BookingWorkerSpec): Promise<BenchWorker> {
  const { worker, close } = await buildBookingWorker(connection, spec);
  const running = worker.run();
  let stopped: Promise<void> | undefined;
  return {
    placement: 'inline',
    taskQueue: spec.taskQueue,
    tuning: spec.tuning,
    status: async () => worker.getStatus(),
    memory: async () => ({ ...process.memoryUsage(), gcForced: false }),
    stop: () =>
      (stopped ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await close();
      })()),
  };
}

async function childWorker(entry: string, address: string, spec: BookingWorkerSpec): Promise<BenchWorker> {
  const child = await startChild<{ pid: number }>(
    entry,
    { address, ...spec } satisfies WorkerProcessInput,
    // Heap figures after a forced GC show live data rather than garbage not yet collected. The worker's own
    // Node flags (as the Dockerfile and `npm run worker` pass them) apply here too.
    { execArgv: ['--expose-gc', ...workerNodeFlags()] },
  );
  return {
    placement: 'child',
    taskQueue: spec.taskQueue,
    tuning: spec.tuning,
    pid: child.pid,
    status: () => child.call('status'),
    memory: () => child.call('memory'),
    stop: () => child.stop(),
  };
}

/**
 * Node flags the worker child runs with: the product's (src/runtime/config/node-flags.ts), or BENCH_WORKER_NODE_FLAGS
 * (space-separated; empty for none) to compare others.
 */
export function workerNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const override = env.BENCH_WORKER_NODE_FLAGS;
  return override === undefined ? [...WORKER_NODE_FLAGS] : override.split(/\s+/).filter(Boolean);
}
