/**
 * What the dev-server tests of the deploy command (and of the sweep Schedule it writes) share: a booking rig,
 * builds A, B and C of one deployment, extra versioned workers, bundles of other workflow code, the runs a file
 * opens, and the clean-up of all of them at the file's end.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { sweepScheduleId } from '../../src/api/contract/index';
import { parseDeployArgs, type DeployArgs } from '../../src/operators/deploy/command';
import { lastPolls } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import type { ReconciliationConfig } from '../../src/runtime/config/index';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { workflowBundlerOptions } from '../../src/workflow-bundle';
import { createBookingRig, eventually, testProfile, type BookingRig } from './booking';
import { connectDevServer, workflowBundle } from './temporal';

/** Builds A, B and C of a deployment named for the file, so that files never share routing. */
export function deployBuilds(prefix: string): {
  deploymentName: string;
  a: WorkerBuild;
  b: WorkerBuild;
  c: WorkerBuild;
} {
  const deploymentName = `${prefix}-${randomUUID().slice(0, 8)}`;
  return {
    deploymentName,
    a: { deploymentName, buildId: '1.0.0+aaaaaaa' },
    b: { deploymentName, buildId: '1.0.0+bbbbbbb' },
    c: { deploymentName, buildId: '1.0.0+ccccccc' },
  };
}

/** A sweep Schedule's configuration, as a worker reads it from its environment. */
export const sweepConfig = (everyMinutes: number, more: Partial<ReconciliationConfig> = {}): ReconciliationConfig => ({
  schedule: true,
  everyMinutes,
  lookbackMinutes: 60,
  settleMinutes: 0,
  sliceMinutes: 30,
  cancelOrphans: false,
  ...more,
});

export interface DeployTestOptions {
  /** Names the rig's queue, the io's identity ('<name> test') and the reason runs are terminated for. */
  name: string;
  /** The rig's own queue name, when it should differ from `name`. */
  queue?: string;
  /** The build the rig's worker runs as; without it the worker is unversioned. */
  deployment?: WorkerBuild;
  /** false: no rig of the file's own (a test makes its own with addRig). */
  rig?: boolean;
  /** The rig queue's sweep Schedule is deleted at the end (a test made one). */
  sweepSchedule?: boolean;
  /** Flags every `args` call adds after the deployment and queue (read at each call, not when the file loads). */
  moreArgs?: () => string[];
}

export interface ExtraWorker {
  worker: BookingWorker;
  running: Promise<void>;
}

/** What useDeployTest gives a file; env, rig and dir are set in its beforeAll. */
export interface DeployTest {
  env: TestWorkflowEnvironment;
  rig: BookingRig;
  /** A folder for bundles and their sources, removed at the end. */
  dir: string;
  /** Runs terminated at the end, whatever state they are in. */
  handles: WorkflowHandle[];
  /** What the deploy steps said, in order. */
  lines: string[];
  io: { say: (line: string) => void; identity: string };
  /** A deploy step's arguments on this file's deployment ('fleet' when its rig is unversioned) and rig queue. */
  args(...argv: string[]): DeployArgs;
  /** Another rig, closed at the end. */
  addRig(name: string, deployment?: WorkerBuild): Promise<BookingRig>;
  /** Waits until the build's three queues (booking workflows and activities, QueryOrders activities) were each polled. */
  waitServed(build: WorkerBuild): Promise<void>;
  /** A worker of `build` on a rig's queue (this file's by default), stopped at the end. */
  startWorker(
    build: WorkerBuild,
    options?: { codePath?: string; rig?: BookingRig; waitServed?: boolean },
  ): Promise<ExtraWorker>;
  /** Bundles the workflows at `workflowsPath` into `file` under dir; returns the bundle's path. */
  bundle(file: string, workflowsPath: string): Promise<string>;
}

const served = (polls: Array<{ lastPollMs?: number }>) =>
  polls.length >= 3 && polls.every((p) => p.lastPollMs !== undefined) ? true : undefined;

/** Registers the file's beforeAll and afterAll, and returns what its tests use. */
export function useDeployTest(options: DeployTestOptions): DeployTest {
  const identity = `${options.name} test`;
  const rigs: BookingRig[] = [];
  const workers: ExtraWorker[] = [];
  const lines: string[] = [];
  // env, rig and dir are set by the beforeAll below, before any test reads them.
  const t = {
    handles: [],
    lines,
    io: { say: (line: string) => lines.push(line), identity },
    args: (...argv: string[]) =>
      parseDeployArgs(
        [
          ...argv,
          '--deployment',
          options.deployment?.deploymentName ?? 'fleet',
          '--task-queue',
          t.rig.taskQueue,
          ...(options.moreArgs?.() ?? []),
        ],
        {},
      ),
    async addRig(name, deployment) {
      const rig = await createBookingRig(t.env, name, deployment ? { deployment } : {});
      rigs.push(rig);
      return rig;
    },
    async waitServed(build) {
      await eventually(async () => (served(await lastPolls(t.env.client, build)) ? true : undefined));
    },
    async startWorker(build, { codePath = workflowBundle().codePath, rig = t.rig, waitServed = true } = {}) {
      const worker = await createBookingWorker({
        connection: t.env.nativeConnection,
        namespace: t.env.namespace ?? 'default',
        taskQueue: rig.taskQueue,
        supplier: rig.supplier,
        profile: testProfile,
        workflowBundle: { codePath },
        recoveryTesting: true,
        deployment: build,
      });
      const entry = { worker, running: worker.run() };
      workers.push(entry);
      if (waitServed) await t.waitServed(build);
      return entry;
    },
    async bundle(file, workflowsPath) {
      const { code } = await bundleWorkflowCode({
        workflowsPath,
        ...workflowBundlerOptions(),
        logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
      });
      const bundlePath = path.join(t.dir, file);
      writeFileSync(bundlePath, code);
      return bundlePath;
    },
  } as Omit<DeployTest, 'env' | 'rig' | 'dir'> as DeployTest;

  beforeAll(async () => {
    t.env = await connectDevServer();
    // Under node_modules/.cache: the bundler resolves the SDK's modules from there (not from the system's temp dir)
    // when a source written here is bundled.
    const cache = path.resolve(__dirname, '../../node_modules/.cache');
    mkdirSync(cache, { recursive: true });
    t.dir = mkdtempSync(path.join(cache, `${options.name}-`));
    if (options.rig !== false) t.rig = await t.addRig(options.queue ?? options.name, options.deployment);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(t.handles.map((h) => h.terminate(`${identity} done`).catch(() => undefined)));
    for (const w of workers) {
      if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await w.running;
    }
    if (options.sweepSchedule && t.rig)
      await t.env.client.schedule
        .getHandle(sweepScheduleId(t.rig.taskQueue))
        .delete()
        .catch(() => undefined);
    for (const rig of rigs) await rig.close();
    if (t.dir) rmSync(t.dir, { recursive: true, force: true });
  });
  return t;
}
