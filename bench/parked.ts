/**
 * parked: memory of many bookings waiting in recovery.
 *
 * Each booking's Book ends ambiguously and its order stays pending, so after one immediate poll the
 * workflow sleeps on a one-hour timer. After each step (a cumulative number of parked bookings) the
 * worker's RSS and heap (a child process by default, so nothing else is counted; heap after a forced
 * GC) and the dev server's RSS are read, and the growth per 1,000 parked bookings is reported. The
 * workflows are terminated at the end.
 *
 * `--workflow floor` parks the reference workflow of bench/floor-workflow.ts instead (one activity,
 * then the same timer, none of the booking workflow's code), to tell the SDK's own cost per parked
 * workflow from the booking workflow's.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { bookingWorkflowId, startBooking } from '../src/api/client/index';
import { startFloorParked } from './floor';
import {
  fileSizeMb,
  forEachConcurrently,
  nowMs,
  ownCpuSeconds,
  procCpuSeconds,
  procRssMb,
  round,
  sleep,
  waitFor,
} from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import { startStack, type BenchWorker, type Placement, type Stack } from './stack';
import { projectTuning, stackFlags, stackOptions, type WorkerTuning } from './config';
import {
  benchRequest,
  countWorkflows,
  duplicateOrders,
  runningOn,
  terminateWorkflows,
  waitUntilNoneRunning,
} from './workload';

export const ParkedOptions = z
  .object({
    /** Cumulative numbers of parked bookings at which to measure, ascending. */
    steps: z.array(z.number().int().positive()).min(1).default([1000, 5000, 10000]),
    /** Shorthand for a single step. */
    n: z.number().int().positive().optional(),
    worker: z.enum(['inline', 'child']).default('child'),
    workflow: z.enum(['booking', 'floor']).default('booking'),
    maxCached: z.number().int().nonnegative().default(projectTuning().maxCachedWorkflows),
    concurrency: z.number().int().positive().default(50),
    /** After bookings, park the floor workflow as many as the first step on a stack of its own, for the ratio. */
    floor: z.boolean().default(true),
    ...stackFlags('memory'),
  })
  .refine((o) => o.steps.every((s, i) => i === 0 || s > o.steps[i - 1]!), { message: 'steps must be ascending' });
export type ParkedOptions = z.input<typeof ParkedOptions>;

export interface ParkedStep {
  /** Workflows that made their supplier call, i.e. reached the timer (less than `started` if the wait timed out). */
  parked: number;
  started: number;
  secondsToPark: number;
  /**
   * CPU milliseconds per newly parked workflow during the step: the worker (child, /proc; in
   * process: the whole bench process) and the dev server.
   */
  parkCpuMsPerWorkflow: { worker: number; devServer: number };
  workerRssMb: number;
  workerHeapUsedMb: number;
  workerExternalMb: number;
  cachedWorkflows: number;
  devServerRssMb: number;
  /** SQLite file with its journal; NaN when the database is in memory (then it is in the dev server's RSS). */
  databaseMb: number;
  /** Growth since the previous measurement, per 1,000 newly parked bookings. */
  workerRssMbPer1k?: number;
  devServerRssMbPer1k?: number;
}

export interface ParkedFigures {
  steps: ParkedStep[];
  baseline: Measurement;
  tuning: WorkerTuning;
  workerPlacement: Placement;
  /** From the baseline to the last step, per 1,000 parked bookings. */
  growthPer1k: { workerRssMb: number; workerHeapUsedMb: number; devServerRssMb: number; databaseMb: number };
  /**
   * Worker RSS above the baseline divided by the workflows in its cache at the last step: what one
   * cached workflow costs (parked workflows beyond the cache are evicted and cost the worker little).
   */
  workerRssMbPerCachedWorkflow: number;
  /** Every step parked all it started. */
  complete: boolean;
  runningBeforeTerminate: number;
  termination: { terminated: number; seconds: number; stillRunning: number };
  sandboxOrders: number;
  duplicateOrders: number;
  targets: { workerRssMbAt10k: number; met?: boolean };
  /** The floor workflow parked as many as the first step, on a stack of its own (same run). */
  floorComparison?: { parked: number; bookingWorkerRssMb: number; floorWorkerRssMb: number; ratio: number };
}

const TEST_HEADER = 'book=504AfterCreate&outcome=pending';

export async function parked(raw: ParkedOptions, ctx: BenchContext): Promise<BenchOutput<ParkedFigures>> {
  const options = ParkedOptions.parse(raw);
  const output = await parkOnce(options, ctx);
  if (!options.floor || options.workflow === 'floor') return output;
  // The same count of floor workflows, on a fresh stack and worker: the RSS of one process cannot be split
  // between two workflow types, so the floor parks in a process of its own.
  const first = output.figures.steps[0]!;
  ctx.progress(`parked: the floor workflow, ${first.started} parked, for the ratio`);
  const floor = await parkOnce(
    ParkedOptions.parse({ ...raw, workflow: 'floor', steps: [first.started], n: undefined, floor: false }),
    ctx,
  );
  const floorStep = floor.figures.steps[0]!;
  const floorComparison = {
    parked: first.started,
    bookingWorkerRssMb: first.workerRssMb,
    floorWorkerRssMb: floorStep.workerRssMb,
    ratio: round(first.workerRssMb / floorStep.workerRssMb, 2),
  };
  return {
    figures: { ...output.figures, floorComparison },
    tables: [...output.tables, ...floor.tables],
    notes: [
      ...output.notes,
      `Ratio to the floor workflow at ${first.started} parked (same run, own stack): worker RSS ${first.workerRssMb} against ${floorStep.workerRssMb} MB, ${floorComparison.ratio}×.`,
    ],
  };
}

async function parkOnce(
  options: z.output<typeof ParkedOptions>,
  ctx: BenchContext,
): Promise<BenchOutput<ParkedFigures>> {
  const steps = options.n !== undefined ? [options.n] : options.steps;
  const defaults = projectTuning();
  const tuning: WorkerTuning = { ...defaults, maxCachedWorkflows: options.maxCached ?? defaults.maxCachedWorkflows };
  const stack = await startStack({
    name: 'parked',
    ...stackOptions(options),
  });
  const workflowIds: string[] = [];
  const floor = options.workflow === 'floor';
  try {
    const taskQueue = `bench-parked-${randomUUID().slice(0, 8)}`;
    const worker = await stack.startWorker({ taskQueue, tuning, placement: options.worker, kind: options.workflow });
    const { client } = stack.createClient(false);

    await sleep(2_000);
    const baseline = await measure(stack, worker);
    ctx.progress(
      `parked: baseline worker RSS ${baseline.workerRssMb} MB, dev server RSS ${baseline.devServerRssMb} MB`,
    );

    const results: ParkedStep[] = [];
    let previous = { parked: 0, ...baseline };
    for (const target of steps) {
      const t0 = nowMs();
      const cpu0 = { worker: workerCpu(worker), devServer: stack.childCpu().devServer };
      const from = workflowIds.length;
      ctx.progress(`parked: parking ${target - from} more (to ${target})`);
      await forEachConcurrently(target - from, options.concurrency, async () => {
        if (floor) {
          const input = {
            customerReferenceNo: randomUUID(),
            ratePkgId: 'pkg-standard-double',
            test: 'confirmAfterMs=0',
          };
          workflowIds.push((await startFloorParked(client, taskQueue, input)).workflowId);
        } else {
          const request = benchRequest(TEST_HEADER, { delaysSeconds: [3600] });
          workflowIds.push(bookingWorkflowId(request.customerReferenceNo));
          await startBooking(client, request, { taskQueue });
        }
      });
      // Bounded generously (a small machine parks fewer than 10 a second once the cache is full).
      const parkedNow = await waitParked(stack, worker, target, floor, 120_000 + (target - from) * 500, ctx);
      const m = await measure(stack, worker);
      const added = (parkedNow - previous.parked) / 1000;
      const step: ParkedStep = {
        parked: parkedNow,
        started: target,
        secondsToPark: round((nowMs() - t0) / 1000, 1),
        parkCpuMsPerWorkflow: {
          worker: round(((workerCpu(worker) - cpu0.worker) * 1000) / (parkedNow - previous.parked), 1),
          devServer: round(((stack.childCpu().devServer - cpu0.devServer) * 1000) / (parkedNow - previous.parked), 1),
        },
        ...m,
        workerRssMbPer1k: round((m.workerRssMb - previous.workerRssMb) / added, 2),
        devServerRssMbPer1k: round((m.devServerRssMb - previous.devServerRssMb) / added, 2),
      };
      results.push(step);
      previous = step;
      if (parkedNow < target) break;
      ctx.progress(`parked: ${target} parked, worker RSS ${m.workerRssMb} MB, dev server RSS ${m.devServerRssMb} MB`);
    }

    const runningBeforeTerminate = await countWorkflows(client, runningOn(taskQueue));
    ctx.progress(`parked: terminating ${workflowIds.length} workflows`);
    const termination = await terminateWorkflows(client, workflowIds, 'parked benchmark finished');
    const stillRunning = await waitUntilNoneRunning(client, taskQueue, 60_000);
    const orders = await stack.sandbox.orders();

    const last = results[results.length - 1]!;
    const per1k = (a: number, b: number) => round((a - b) / (last.parked / 1000), 2);
    const figures: ParkedFigures = {
      steps: results,
      baseline,
      tuning,
      workerPlacement: options.worker,
      growthPer1k: {
        workerRssMb: per1k(last.workerRssMb, baseline.workerRssMb),
        workerHeapUsedMb: per1k(last.workerHeapUsedMb, baseline.workerHeapUsedMb),
        devServerRssMb: per1k(last.devServerRssMb, baseline.devServerRssMb),
        databaseMb: per1k(last.databaseMb, baseline.databaseMb),
      },
      workerRssMbPerCachedWorkflow: round(
        (last.workerRssMb - baseline.workerRssMb) / Math.max(1, last.cachedWorkflows),
        3,
      ),
      complete: results.every((s) => s.parked === s.started) && results.length === steps.length,
      runningBeforeTerminate,
      termination: { ...termination, seconds: round(termination.seconds, 1), stillRunning },
      sandboxOrders: orders.length,
      duplicateOrders: duplicateOrders(orders).length,
      targets: {
        workerRssMbAt10k: 250,
        ...(results.some((s) => s.parked >= 10_000)
          ? { met: results.find((s) => s.parked >= 10_000)!.workerRssMb <= 250 }
          : {}),
      },
    };
    const tables = [
      table(
        `parked: ${floor ? 'floor workflows (bench/floor-workflow.ts)' : 'bookings'} waiting on a 1-hour timer (worker ${options.worker === 'child' ? 'in a child process' : 'in the bench process'}, ` +
          `cache ${tuning.maxCachedWorkflows} workflows)`,
        [
          'parked',
          'worker RSS MB',
          'heap used MB',
          'external MB',
          'cached wf',
          'dev server RSS MB',
          'db MB',
          'worker MB/1k',
          'server MB/1k',
          'park s',
          'worker CPU ms/wf',
          'server CPU ms/wf',
        ],
        [
          [
            '0 (baseline)',
            baseline.workerRssMb,
            baseline.workerHeapUsedMb,
            baseline.workerExternalMb,
            baseline.cachedWorkflows,
            baseline.devServerRssMb,
            baseline.databaseMb,
          ],
          ...results.map((s) => [
            s.parked < s.started ? `${s.parked} of ${s.started}` : s.parked,
            s.workerRssMb,
            s.workerHeapUsedMb,
            s.workerExternalMb,
            s.cachedWorkflows,
            s.devServerRssMb,
            s.databaseMb,
            s.workerRssMbPer1k,
            s.devServerRssMbPer1k,
            s.secondsToPark,
            s.parkCpuMsPerWorkflow.worker,
            s.parkCpuMsPerWorkflow.devServer,
          ]),
        ],
      ),
    ];
    const notes = [
      ...(figures.complete
        ? []
        : [
            `Incomplete: the last step parked ${last.parked} of ${last.started} within its time limit; it was measured as it stood and later steps were skipped.`,
          ]),
      `Worker RSS per cached workflow: ${figures.workerRssMbPerCachedWorkflow} MB (${last.cachedWorkflows} in the cache of ${tuning.maxCachedWorkflows}).`,
      `Growth per 1k parked (baseline → ${last.parked}): worker RSS ${figures.growthPer1k.workerRssMb} MB, heap ${figures.growthPer1k.workerHeapUsedMb} MB, ` +
        `dev server RSS ${figures.growthPer1k.devServerRssMb} MB` +
        (Number.isNaN(figures.growthPer1k.databaseMb) ? '.' : `, database file ${figures.growthPer1k.databaseMb} MB.`),
      figures.targets.met === undefined
        ? 'Target (worker RSS ≤ 250 MB at 10k parked) not measured: no step reached 10,000.'
        : `Target worker RSS ≤ 250 MB at 10k parked → ${figures.targets.met ? 'met' : 'missed'}.`,
      ...(stack.dbFile === ':memory:'
        ? ["The dev server keeps its database in memory (--db memory): its RSS includes the workflows' data."]
        : []),
      options.worker === 'child'
        ? 'Worker RSS is /proc/<pid>/status VmRSS of the worker child; heap figures come from process.memoryUsage() in the child after a forced GC (--expose-gc).'
        : 'Worker in the bench process: RSS and heap include the bench driver and client (no forced GC).',
      `Terminated ${termination.terminated} workflows in ${figures.termination.seconds} s (one call each); ${stillRunning} still running afterwards.`,
    ];
    return { figures, tables, notes };
  } finally {
    await stack.stop();
  }
}

/**
 * Waits until every workflow has made its supplier call (a booking's first QueryOrders, the floor
 * workflow's CheckAvail) and the worker has nothing in flight, or `timeoutMs` passed; returns how
 * many made the call. A step that times out is still measured and reported, and ends the run.
 */
async function waitParked(
  stack: Stack,
  worker: BenchWorker,
  total: number,
  floor: boolean,
  timeoutMs: number,
  ctx: BenchContext,
): Promise<number> {
  const answered = async () => {
    const stats = await stack.sandbox.stats();
    // References, not requests: the worker's coalescer asks for several bookings in one QueryOrders.
    return floor ? (stats.byOperation.checkAvail ?? 0) : stats.queryOrders.references;
  };
  let lastLog = 0;
  try {
    await waitFor(
      `${total} workflows to park`,
      async () => {
        const polls = await answered();
        if (nowMs() - lastLog > 15_000) {
          lastLog = nowMs();
          ctx.progress(`parked: ${polls}/${total} supplier calls answered`);
        }
        return polls >= total ? true : undefined;
      },
      timeoutMs,
      250,
    );
  } catch (err) {
    ctx.progress(`parked: ${err instanceof Error ? err.message : String(err)}; measuring what is parked`);
    return Math.min(total, await answered());
  }
  // The poll's answer still has to reach the workflow, which then starts its timer.
  let quietSamples = 0;
  await waitFor(
    'the worker to go idle',
    async () => {
      const s = await worker.status();
      quietSamples = s.numInFlightWorkflowActivations === 0 && s.numInFlightActivities === 0 ? quietSamples + 1 : 0;
      return quietSamples >= 3 ? true : undefined;
    },
    60_000,
    300,
  ).catch(() => ctx.progress('parked: the worker did not go idle within 60 s; measuring anyway'));
  return Math.min(total, await answered());
}

type Measurement = Omit<ParkedStep, 'parked' | 'started' | 'secondsToPark' | 'parkCpuMsPerWorkflow'>;

function workerCpu(worker: BenchWorker): number {
  return worker.pid !== undefined ? (procCpuSeconds(worker.pid) ?? NaN) : ownCpuSeconds();
}

async function measure(stack: Stack, worker: BenchWorker): Promise<Measurement> {
  const [memory, status] = await Promise.all([worker.memory(), worker.status()]);
  const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);
  const workerRss = worker.pid !== undefined ? procRssMb(worker.pid) : memory.rss / (1024 * 1024);
  return {
    workerRssMb: round(workerRss ?? NaN, 1),
    workerHeapUsedMb: mb(memory.heapUsed),
    workerExternalMb: mb(memory.external),
    cachedWorkflows: status.numCachedWorkflows,
    devServerRssMb: round(stack.childRssMb().devServer, 1),
    databaseMb: round(databaseMb(stack.dbFile), 1),
  };
}

/** The SQLite file with its -wal and -shm companions; NaN for an in-memory database. */
function databaseMb(dbFile: string): number {
  if (dbFile === ':memory:') return NaN;
  const dir = path.dirname(dbFile);
  const base = path.basename(dbFile);
  return readdirSync(dir)
    .filter((f) => f.startsWith(base))
    .reduce((sum, f) => sum + fileSizeMb(path.join(dir, f)), 0);
}
