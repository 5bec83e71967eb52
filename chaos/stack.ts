/**
 * The chaos run's own stack, every piece of it killable: a Temporal dev server on a temp SQLite file
 * (restartable on the same file and ports), the sandbox supplier in process, and booking workers as child
 * processes run from a one-off build of src/ (plain `node`: a restart polls again in about a second, and
 * edits others make to src/ mid-run cannot break a restart).
 *
 * Every child is tracked so `stop()`, a signal, or the process's own exit can kill it: nothing outlives
 * the run.
 */
import { WORKER_NODE_FLAGS } from '../src/runtime/config/node-flags';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundlerOptions } from '../src/workflow-bundle';
import { startSandbox, type Sandbox } from '../dev/sandbox/server';
import { resolveServerExecutable } from '../dev/temporal/binaries';
import { startDevServer, type DevServer } from '../dev/temporal/dev-server';
import { freePort } from '../dev/temporal/dev-server';
import { startProdCluster } from '../dev/prod/cluster';
import { chmodSync } from 'node:fs';

const REPO = path.resolve(__dirname, '..');

/** Rate limits far above the run's traffic: 429s come from the scenarios and the injector, never by accident. */
const UNLIMITED = { overall: 1e6, checkAvail: 1e6, book: 1e6, queryOrders: 1e6 };

/** Printed by src/worker.ts once its worker is created: from then on it polls. */
const READY_LINE = 'Worker polling task queue';

export type Log = (line: string) => void;

/** Processes still alive, killed synchronously if this process exits without cleaning up. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of liveChildren) c.kill('SIGKILL');
    });
  }
}

/** Resolves when the child has exited, or after `ms` (then false). */
function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Compiles src/ once, without type checking (tsc's own job elsewhere), into `outDir`; returns the worker's entry. */
export async function compileWorker(outDir: string): Promise<string> {
  const tsc = require.resolve('typescript/bin/tsc');
  const args = ['-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', outDir, '--noCheck'];
  const child = spawn(process.execPath, [tsc, ...args, '--declaration', 'false', '--sourceMap', 'false'], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  if (!(await exited(child, 180_000))) {
    child.kill('SIGKILL');
    throw new Error('tsc did not finish within 3 minutes');
  }
  const entry = path.join(outDir, 'worker.js');
  // tsc emits despite errors; only a missing entry point is fatal (others may be mid-edit in src/).
  if (!existsSync(entry)) throw new Error(`tsc produced no ${entry}:\n${output.slice(0, 2000)}`);
  return entry;
}

/** The workflow bundle every worker loads (WORKER_WORKFLOW_BUNDLE), built once. */
export async function buildBundle(dir: string): Promise<string> {
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    logger: quiet as never,
  });
  const file = path.join(dir, 'workflow-bundle.js');
  writeFileSync(file, code);
  return file;
}

/**
 * The deploy drill's build B (dev/builds/changed-commands: src/workflows with a 1 ms timer first in every booking, no
 * patch), bundled with the options every shipped bundle has.
 */
export async function buildChangedCommandsBundle(dir: string): Promise<string> {
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve(path.join(REPO, 'dev', 'builds', 'changed-commands')),
    logger: quiet as never,
    ...workflowBundlerOptions(),
  });
  const file = path.join(dir, 'workflow-bundle-changed-commands.js');
  writeFileSync(file, code);
  return file;
}

export interface ServerHandle {
  address: string;
  dbFile: string;
  /** Kills the server and starts it again on the same database file and ports; returns the downtime. */
  restart(signal: 'SIGKILL' | 'SIGTERM'): Promise<number>;
  stop(): Promise<void>;
}

export async function startServer(dir: string, log: Log): Promise<ServerHandle> {
  const exe = resolveServerExecutable('cli', { ...process.env, TEMPORAL_ALLOW_SDK_DOWNLOAD: '0' });
  if (exe.type !== 'existing-path') throw new Error('No Temporal CLI executable (run `npm run temporal:install`)');
  const options = {
    cliPath: exe.path,
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.db'),
    logLevel: 'error' as const,
  };
  const start = async (): Promise<DevServer> => {
    // A port held by the killed server's last connections can take a moment to free: try a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        const server = await startDevServer(options);
        track(server.process);
        return server;
      } catch (err) {
        if (attempt >= 5) throw err;
        log(`dev server start failed (${err instanceof Error ? err.message : err}); retrying`);
        await new Promise((r) => setTimeout(r, 1_000 * attempt));
      }
    }
  };
  let server = await start();
  return {
    address: server.address,
    dbFile: options.dbFile,
    async restart(signal) {
      const down = Date.now();
      server.process.kill(signal);
      if (!(await exited(server.process, 20_000))) {
        server.process.kill('SIGKILL');
        await exited(server.process, 5_000);
      }
      server = await start();
      return Date.now() - down;
    },
    stop: () => server.stop(),
  };
}

/** The production topology under fire: a node or PostgreSQL goes down and comes back. */
export interface ProdServerHandle {
  address: string;
  nodeNames: string[];
  /** SIGKILLs node `index`, waits `downMs`, starts it again; resolves with the time until its frontend answered. */
  killNode(index: number, downMs: number): Promise<number>;
  /** Stops PostgreSQL (fast shutdown: open connections are cut) and starts it again; returns the downtime. */
  restartPostgres(): Promise<number>;
  stop(): Promise<void>;
}

export async function startProdServer(dir: string, log: Log): Promise<ProdServerHandle> {
  const dataDir = path.join(dir, 'prod');
  mkdirSync(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the run's temp folder.
  chmodSync(dir, 0o755);
  const cluster = await startProdCluster({ dataDir, frontendPort: 0, basePort: 0, postgresPort: 0, log });
  return {
    address: cluster.address,
    nodeNames: cluster.nodes.map((n) => n.name),
    async killNode(index, downMs) {
      const node = cluster.nodes[index]!;
      const down = Date.now();
      await node.kill();
      await new Promise((r) => setTimeout(r, downMs));
      await node.start();
      return Date.now() - down;
    },
    async restartPostgres() {
      const down = Date.now();
      await cluster.postgres.restart();
      return Date.now() - down;
    },
    stop: () => cluster.stop(),
  };
}

/** The sandbox supplier, its limiter out of the way. */
export function startChaosSandbox(): Promise<Sandbox> {
  return startSandbox({ port: 0, rateLimits: UNLIMITED });
}

export interface WorkerFleetOptions {
  entry: string;
  env: Record<string, string>;
  slots: string[];
  logDir: string;
  log: Log;
}

export interface WorkerFleetStats {
  kills: number;
  restarts: number;
  unexpectedExits: number;
  /** Milliseconds from spawn to "polling", per (re)start. */
  startMs: number[];
  /** SIGKILLs per slot. */
  killsBySlot: Record<string, number>;
}

/** A line a worker printed, tagged with the slot and generation that printed it. */
export interface WorkerLogLine {
  worker: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

/**
 * Booking workers in child processes, one per slot. A worker killed on purpose is restarted at once; one
 * that dies by itself is restarted too, and counted, since that is a finding.
 */
export class WorkerFleet {
  readonly stats: WorkerFleetStats = { kills: 0, restarts: 0, unexpectedExits: 0, startMs: [], killsBySlot: {} };
  readonly lines: WorkerLogLine[] = [];
  private readonly children = new Map<string, ChildProcess>();
  /** Every slot started so far, in order, and the environment of those that differ from the fleet's. */
  private readonly slots: string[] = [];
  private readonly slotEnv = new Map<string, Record<string, string>>();
  /** Slots stopped for good (a build taken down): not restarted, not killed. */
  private readonly retired = new Set<string>();
  private readonly ready = new Map<string, boolean>();
  private readonly generation = new Map<string, number>();
  private readonly files = new Map<string, WriteStream>();
  private readonly expectedExit = new Set<ChildProcess>();
  private stopping = false;

  constructor(private readonly options: WorkerFleetOptions) {
    mkdirSync(options.logDir, { recursive: true });
  }

  /** Starts every slot and waits until all poll. */
  async start(timeoutMs = 60_000): Promise<void> {
    await this.add(this.options.slots, {}, timeoutMs);
  }

  /**
   * Starts more slots beside the running ones (another build's workers: `env` over the fleet's), and waits until
   * they poll. A slot keeps its environment through every restart.
   */
  async add(slots: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<void> {
    for (const slot of slots) {
      this.slots.push(slot);
      this.slotEnv.set(slot, env);
      this.files.set(slot, createWriteStream(path.join(this.options.logDir, `worker-${slot}.log`), { flags: 'a' }));
    }
    slots.forEach((slot) => this.spawn(slot));
    await this.waitReady(slots, timeoutMs);
  }

  /** The slots running now (started, not retired), in the order they were added: what a kill may pick from. */
  liveSlots(): string[] {
    return this.slots.filter((s) => !this.retired.has(s));
  }

  /** Stops the slots for good (their build is taken down): an expected exit, never restarted. */
  async retire(slots: string[]): Promise<void> {
    await Promise.all(
      slots.map(async (slot) => {
        this.retired.add(slot);
        const child = this.children.get(slot);
        if (!child) return;
        this.expectedExit.add(child);
        child.kill('SIGKILL');
        await exited(child, 10_000);
      }),
    );
  }

  isReady(slot: string): boolean {
    return this.ready.get(slot) === true;
  }

  /** SIGKILLs the slot's worker and starts a new one at once. */
  async kill(slot: string): Promise<void> {
    const child = this.children.get(slot);
    if (!child || this.retired.has(slot)) return;
    this.expectedExit.add(child);
    child.kill('SIGKILL');
    await exited(child, 10_000);
    this.stats.kills++;
    this.stats.killsBySlot[slot] = (this.stats.killsBySlot[slot] ?? 0) + 1;
    if (this.stopping || this.retired.has(slot)) return;
    this.stats.restarts++;
    this.spawn(slot);
  }

  async waitReady(slots: string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!slots.every((s) => this.isReady(s))) {
      if (Date.now() > deadline) {
        const tail = this.lines.slice(-20).map((l) => `${l.worker} ${l.line}`);
        throw new Error(
          `workers ${slots.filter((s) => !this.isReady(s)).join(', ')} not polling after ${timeoutMs} ms:\n${tail.join('\n')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.children.values()].map(async (child) => {
        this.expectedExit.add(child);
        child.kill('SIGKILL');
        await exited(child, 10_000);
      }),
    );
    await Promise.all([...this.files.values()].map((f) => new Promise((r) => f.end(r))));
  }

  private spawn(slot: string): void {
    const gen = (this.generation.get(slot) ?? 0) + 1;
    this.generation.set(slot, gen);
    const name = `${slot}#${gen}`;
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, this.options.entry], {
      env: { ...this.options.env, ...this.slotEnv.get(slot) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child);
    this.children.set(slot, child);
    this.ready.set(slot, false);
    const file = this.files.get(slot)!;
    for (const stream of ['stdout', 'stderr'] as const) {
      readline.createInterface({ input: child[stream]! }).on('line', (line) => {
        this.lines.push({ worker: name, stream, line });
        file.write(`${name} ${stream} ${line}\n`);
        if (stream === 'stdout' && line.includes(READY_LINE) && this.children.get(slot) === child) {
          this.ready.set(slot, true);
          this.stats.startMs.push(Date.now() - spawnedAt);
        }
      });
    }
    child.once('exit', (code, signal) => {
      if (this.children.get(slot) === child) this.ready.set(slot, false);
      if (this.expectedExit.delete(child) || this.stopping || this.retired.has(slot)) return;
      // A worker that died by itself: a finding. Restart it (bounded), so the run can still finish.
      this.stats.unexpectedExits++;
      this.options.log(`worker ${name} exited by itself (code ${code}, signal ${signal}); restarting`);
      if (this.stats.unexpectedExits <= 50) {
        setTimeout(() => {
          if (!this.stopping && !this.retired.has(slot) && this.children.get(slot) === child) {
            this.stats.restarts++;
            this.spawn(slot);
          }
        }, 1_000);
      }
    });
  }
}

export { freePort };
