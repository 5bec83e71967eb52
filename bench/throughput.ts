/**
 * throughput: completed bookings per second with a fixed number of bookings in flight.
 *
 * `concurrency` lanes each start a booking with the client helper and wait for its outcome, then
 * start the next (a closed loop: what a booking front end with that many callers does). The rate is
 * taken over the steady window between the 10 % and the 90 % completion, so start-up and the tail
 * do not count. CPU seconds are read before and after each variant for the dev server and the
 * sandbox (child processes, /proc) and for this process (process.cpuUsage: the worker, when it
 * runs here, plus the starting client) or the worker child (/proc).
 *
 * `--tuning` sweeps a few worker settings and reports the best; `--eager` adds a run with eager
 * workflow start on the best setting; a run of the reference workflow (bench/floor-workflow.ts: the same
 * two supplier calls in the booking's shape, nothing else; `--no-floor` skips it) on the best setting, which is
 * what Temporal itself manages on this machine. Eager start needs the worker and the client on one
 * NativeConnection in one process, so that variant always runs the worker in process.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { awaitOutcome, startBooking } from '../src/api/client/index';
import {
  cpuSnapshot,
  forEachConcurrently,
  nowMs,
  percentiles,
  round,
  roundPercentiles,
  steadyPerSecond,
  type Percentiles,
} from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import type { WorkerKind } from './workers';
import { startFloorBooking, type FloorShape } from './floor';
import { buildBundle, startStack, type Placement, type Stack } from './stack';
import { projectTuning, stackFlags, stackOptions, type WorkerTuning } from './config';
import { benchRequest, duplicateOrders } from './workload';

export const ThroughputOptions = z.object({
  n: z.number().int().positive().default(2000),
  concurrency: z.number().int().positive().default(50),
  /** Bookings before measuring (worker caches, connections, JIT), same concurrency, not counted. */
  warmup: z.number().int().nonnegative().default(100),
  tuning: z.boolean().default(false),
  eager: z.boolean().default(false),
  /** On by default: every run prints the booking's ratio to the floor workflow measured beside it. */
  floor: z.boolean().default(true),
  worker: z.enum(['inline', 'child']).default('inline'),
  /**
   * Every variant on one stack (`--one-stack`) instead of a fresh one each: each variant then finds the earlier
   * ones' workflows in the server's database, so figures of a long run drift; for short runs (the test suite's
   * smoke) it spares a dev server, a sandbox and their start and stop per variant.
   */
  oneStack: z.boolean().default(false),
  ...stackFlags('memory'),
});
export type ThroughputOptions = z.input<typeof ThroughputOptions>;

/** The sweep: the project's defaults first, then fewer and more slots, then a small cache. */
export const tuningSweep = (): WorkerTuning[] => [
  projectTuning(),
  { maxConcurrentActivityTaskExecutions: 50, maxConcurrentWorkflowTaskExecutions: 10, maxCachedWorkflows: 1000 },
  { maxConcurrentActivityTaskExecutions: 500, maxConcurrentWorkflowTaskExecutions: 100, maxCachedWorkflows: 2000 },
  { maxConcurrentActivityTaskExecutions: 200, maxConcurrentWorkflowTaskExecutions: 40, maxCachedWorkflows: 100 },
];

export interface CpuFigures {
  devServerSeconds: number;
  sandboxSeconds: number;
  /** This process: the worker when inline, plus the starting client. */
  benchProcessSeconds: number;
  /** The worker child, when the worker runs as a child. */
  workerChildSeconds?: number;
  /** All of the above per completed booking. */
  totalMsPerBooking: number;
}

export interface VariantFigures {
  label: string;
  workflow: WorkerKind;
  tuning: WorkerTuning;
  workerPlacement: Placement;
  eagerRequested: boolean;
  eagerlyStarted: number;
  n: number;
  concurrency: number;
  /** Completed bookings per second between the 10 % and 90 % completions. */
  steadyBookingsPerSecond: number;
  /** n over the time from the first start to the last completion. */
  overallBookingsPerSecond: number;
  wallSeconds: number;
  latencyMs: Percentiles;
  outcomes: Record<string, number>;
  cpu: CpuFigures;
  /** Orders in this variant's sandbox (warm-up included) and references with more than one. */
  sandboxOrders: number;
  duplicateOrders: number;
  /** 1-minute load average before and after the measured run. */
  load: { before: number; after: number };
}

export interface ThroughputFigures {
  variants: VariantFigures[];
  best: { label: string; steadyBookingsPerSecond: number; tuning: WorkerTuning };
  eagerComparison?: { withoutBookingsPerSecond: number; withBookingsPerSecond: number; eagerlyStartedShare: number };
  /** The reference workflow against the booking workflow, same tuning: Temporal's share of the cost. */
  floorComparison?: {
    floorBookingsPerSecond: number;
    bookingBookingsPerSecond: number;
    floorCpuMsPerBooking: number;
    bookingCpuMsPerBooking: number;
    /** The floor with the order hand-off's floor added (floorBookingHandOff). */
    floorHandOffBookingsPerSecond: number;
    floorHandOffCpuMsPerBooking: number;
  };
  sandboxOrders: number;
  duplicateOrders: number;
  targets: { bookingsPerSecond: number; met: boolean };
}

export async function throughput(raw: ThroughputOptions, ctx: BenchContext): Promise<BenchOutput<ThroughputFigures>> {
  const options = ThroughputOptions.parse(raw);
  if (options.eager && options.worker === 'child') {
    throw new Error('--eager needs the worker in the bench process (one shared NativeConnection); drop --worker child');
  }
  // Each variant gets a fresh stack (unless --one-stack): on a shared dev server every variant would find the
  // previous ones' workflows in its database, and the server slows as it grows. Bundles are built once.
  const bundleDir = mkdtempSync(path.join(os.tmpdir(), 'bench-throughput-bundles-'));
  try {
    const bundles = {
      bundlePath: options.bundlePath ?? (await buildBundle(bundleDir, 'booking', options.preload === 'on')),
      floorBundlePath: options.floor ? await buildBundle(bundleDir, 'floor', options.preload === 'on') : undefined,
    };
    let shared: Stack | undefined;
    const runOnStack = async (variant: Variant) => {
      if (options.oneStack) {
        shared ??= await startStack({ name: 'throughput', ...stackOptions(options), ...bundles });
        return runVariant(shared, options, variant, ctx);
      }
      const stack = await startStack({ name: 'throughput', ...stackOptions(options), ...bundles });
      try {
        return await runVariant(stack, options, variant, ctx);
      } finally {
        await stack.stop();
      }
    };
    try {
      return await runVariants(options, runOnStack);
    } finally {
      await shared?.stop();
    }
  } finally {
    rmSync(bundleDir, { recursive: true, force: true });
  }
}

/** The variants one after another (a tuning sweep, eager, the floors), and the tables and notes of them all. */
async function runVariants(
  options: z.output<typeof ThroughputOptions>,
  runOnStack: (variant: Variant) => Promise<VariantFigures>,
): Promise<BenchOutput<ThroughputFigures>> {
  const variants: VariantFigures[] = [];
  const sweep = options.tuning ? tuningSweep() : [projectTuning()];
  for (const [i, tuning] of sweep.entries()) {
    variants.push(await runOnStack({ tuning, placement: options.worker, label: `T${i + 1}` }));
  }
  const bestPlain = variants.reduce((a, b) => (b.steadyBookingsPerSecond > a.steadyBookingsPerSecond ? b : a));
  let eagerComparison: ThroughputFigures['eagerComparison'];
  if (options.eager) {
    const eager = await runOnStack({
      tuning: bestPlain.tuning,
      placement: 'inline',
      eager: true,
      label: `${bestPlain.label}+eager`,
    });
    variants.push(eager);
    eagerComparison = {
      withoutBookingsPerSecond: bestPlain.steadyBookingsPerSecond,
      withBookingsPerSecond: eager.steadyBookingsPerSecond,
      eagerlyStartedShare: round(eager.eagerlyStarted / eager.n, 3),
    };
  }
  let floorComparison: ThroughputFigures['floorComparison'];
  if (options.floor) {
    const floor = await runOnStack({
      tuning: bestPlain.tuning,
      placement: options.worker,
      kind: 'floor',
      label: `${bestPlain.label} floor`,
    });
    variants.push(floor);
    // The same, plus the order hand-off's floor: what the second workflow per confirmed booking costs.
    const withHandOff = await runOnStack({
      tuning: bestPlain.tuning,
      placement: options.worker,
      kind: 'floor',
      floorShape: 'floorBookingHandOff',
      label: `${bestPlain.label} floor+hand-off`,
    });
    variants.push(withHandOff);
    floorComparison = {
      floorBookingsPerSecond: floor.steadyBookingsPerSecond,
      bookingBookingsPerSecond: bestPlain.steadyBookingsPerSecond,
      floorCpuMsPerBooking: floor.cpu.totalMsPerBooking,
      bookingCpuMsPerBooking: bestPlain.cpu.totalMsPerBooking,
      floorHandOffBookingsPerSecond: withHandOff.steadyBookingsPerSecond,
      floorHandOffCpuMsPerBooking: withHandOff.cpu.totalMsPerBooking,
    };
  }
  const bookingVariants = variants.filter((v) => v.workflow === 'booking');
  const best = bookingVariants.reduce((a, b) => (b.steadyBookingsPerSecond > a.steadyBookingsPerSecond ? b : a));
  const figures: ThroughputFigures = {
    variants,
    best: { label: best.label, steadyBookingsPerSecond: best.steadyBookingsPerSecond, tuning: best.tuning },
    ...(eagerComparison ? { eagerComparison } : {}),
    ...(floorComparison ? { floorComparison } : {}),
    sandboxOrders: variants.reduce((sum, v) => sum + v.sandboxOrders, 0),
    duplicateOrders: variants.reduce((sum, v) => sum + v.duplicateOrders, 0),
    targets: { bookingsPerSecond: 150, met: best.steadyBookingsPerSecond >= 150 },
  };
  const workerChild = variants.some((v) => v.workerPlacement === 'child');
  const tables = [
    table(
      `throughput: ${options.n} bookings per variant, ${options.concurrency} in flight (closed loop), warm-up ${options.warmup}`,
      [
        'variant',
        'workflow',
        'act/wft/cache',
        'worker',
        'eager',
        'steady/s',
        'overall/s',
        'p50 ms',
        'p99 ms',
        'outcomes',
        'load 1m',
      ],
      variants.map((v) => [
        v.label === best.label ? `${v.label} (best)` : v.label,
        v.workflow,
        `${v.tuning.maxConcurrentActivityTaskExecutions}/${v.tuning.maxConcurrentWorkflowTaskExecutions}/${v.tuning.maxCachedWorkflows}`,
        v.workerPlacement,
        v.eagerRequested ? `${v.eagerlyStarted} started eagerly` : 'off',
        v.steadyBookingsPerSecond,
        v.overallBookingsPerSecond,
        round(v.latencyMs.p50, 1),
        round(v.latencyMs.p99, 1),
        Object.entries(v.outcomes)
          .map(([k, c]) => `${k} ${c}`)
          .join(', '),
        `${v.load.before} → ${v.load.after}`,
      ]),
    ),
    table(
      'throughput: CPU seconds per variant (during the measured run)',
      [
        'variant',
        'dev server',
        'sandbox',
        workerChild ? 'bench process' : 'bench process (worker + client)',
        ...(workerChild ? ['worker child'] : []),
        'CPU ms/booking',
      ],
      variants.map((v) => [
        v.label,
        v.cpu.devServerSeconds,
        v.cpu.sandboxSeconds,
        v.cpu.benchProcessSeconds,
        ...(workerChild ? [v.cpu.workerChildSeconds] : []),
        v.cpu.totalMsPerBooking,
      ]),
    ),
  ];
  const notes = [
    `Target ≥ 150 bookings/s → ${figures.targets.met ? 'met' : 'missed'} (best ${best.steadyBookingsPerSecond}/s, ${best.label}).`,
    'CPU: dev server and sandbox are child processes read from /proc/<pid>/stat; "bench process" is process.cpuUsage() of the process that starts the bookings' +
      (workerChild
        ? '; the worker child is read from /proc.'
        : ' and runs the worker (JS thread and the SDK core threads).'),
    options.oneStack
      ? "Variants run one after another on one stack (--one-stack: one dev server and sandbox, a worker each), each finding the earlier ones' workflows in the database; the load average before and after each is in the JSON, since other work on the machine skews a variant."
      : 'Variants run one after another, each on a fresh stack (dev server, sandbox, worker); the load average before and after each is in the JSON, since other work on the machine skews a variant.',
    ...(floorComparison
      ? [
          "The floor variant runs bench/floor-workflow.ts's floorBookingLocalCheck (the booking's shape: CheckAvail a local activity, Book an activity; none of the booking workflow's own code) with the best tuning: Temporal's own ceiling on this stack.",
          `Ratio to the floor: throughput ${round(floorComparison.bookingBookingsPerSecond / floorComparison.floorBookingsPerSecond, 2)}×, ` +
            `CPU per booking ${round(floorComparison.bookingCpuMsPerBooking / floorComparison.floorCpuMsPerBooking, 2)}×; ` +
            `to the floor with the order hand-off (floorBookingHandOff: a local activity starting a workflow that waits, as a confirmed booking's order workflow does): ` +
            `throughput ${round(floorComparison.bookingBookingsPerSecond / floorComparison.floorHandOffBookingsPerSecond, 2)}×, ` +
            `CPU ${round(floorComparison.bookingCpuMsPerBooking / floorComparison.floorHandOffCpuMsPerBooking, 2)}×.`,
        ]
      : []),
    ...(options.eager
      ? [
          'Eager start: WorkflowOptions.requestEagerStart (@temporalio/client 1.24), added by a client interceptor because startBooking has no option for it; ' +
            'it needs a Client built on the worker\'s NativeConnection (the SDK throws otherwise). "started eagerly" counts starts whose response carried the first workflow task.',
        ]
      : []),
  ];
  return { figures, tables, notes };
}

interface Variant {
  label: string;
  tuning: WorkerTuning;
  placement: Placement;
  eager?: boolean;
  kind?: WorkerKind;
  floorShape?: FloorShape;
}

async function runVariant(
  stack: Stack,
  options: z.output<typeof ThroughputOptions>,
  variant: Variant,
  ctx: BenchContext,
): Promise<VariantFigures> {
  const { label, tuning, placement, eager = false, kind = 'booking', floorShape = 'floorBookingLocalCheck' } = variant;
  const taskQueue = `bench-throughput-${randomUUID().slice(0, 8)}`;
  // On a stack shared by the variants (--one-stack), this variant's orders are those made from here on.
  const ordersBefore = new Set((await stack.sandbox.orders()).map((o) => o.platformReferenceNo));
  const worker = await stack.startWorker({ taskQueue, tuning, placement, kind });
  const { client, counts } = stack.createClient(eager);
  try {
    const book = async (): Promise<{ ms: number; doneAt: number; kind: string }> => {
      const t0 = nowMs();
      let outcome: string;
      if (kind === 'floor') {
        const input = { customerReferenceNo: randomUUID(), ratePkgId: 'pkg-standard-double', test: 'confirmAfterMs=0' };
        // The floor of the booking's shape: CheckAvail local, Book an activity.
        const status = await (await startFloorBooking(client, taskQueue, input, floorShape)).result();
        outcome = status === 2 ? 'confirmed' : `status ${status}`;
      } else {
        const request = benchRequest('confirmAfterMs=0');
        await startBooking(client, request, { taskQueue });
        outcome = (await awaitOutcome(client, request.customerReferenceNo)).kind;
      }
      const doneAt = nowMs();
      return { ms: doneAt - t0, doneAt, kind: outcome };
    };
    ctx.progress(`throughput ${label}: warm-up ${options.warmup}`);
    await forEachConcurrently(options.warmup, options.concurrency, async () => void (await book()));
    counts.started = 0;
    counts.eagerlyStarted = 0;

    ctx.progress(`throughput ${label}: ${options.n} bookings, ${options.concurrency} in flight`);
    const before = cpuSnapshot(stack, worker.pid);
    const loadBefore = os.loadavg()[0]!;
    const latencies: number[] = [];
    const done: number[] = [];
    const outcomes: Record<string, number> = {};
    const t0 = nowMs();
    await forEachConcurrently(options.n, options.concurrency, async () => {
      const r = await book();
      latencies.push(r.ms);
      done.push(r.doneAt);
      outcomes[r.kind] = (outcomes[r.kind] ?? 0) + 1;
      if (done.length % 500 === 0) ctx.progress(`throughput ${label}: ${done.length}/${options.n}`);
    });
    const wallMs = nowMs() - t0;
    const after = cpuSnapshot(stack, worker.pid);
    const loadAfter = os.loadavg()[0]!;
    const orders = (await stack.sandbox.orders()).filter((o) => !ordersBefore.has(o.platformReferenceNo));

    const delta = (k: keyof typeof before) => round((after[k] ?? NaN) - (before[k] ?? NaN), 2);
    const cpu: CpuFigures = {
      devServerSeconds: delta('devServer'),
      sandboxSeconds: delta('sandbox'),
      benchProcessSeconds: delta('bench'),
      ...(worker.pid !== undefined ? { workerChildSeconds: delta('worker') } : {}),
      totalMsPerBooking: 0,
    };
    cpu.totalMsPerBooking = round(
      ((cpu.devServerSeconds + cpu.sandboxSeconds + cpu.benchProcessSeconds + (cpu.workerChildSeconds ?? 0)) * 1000) /
        options.n,
      2,
    );
    return {
      label,
      workflow: kind,
      tuning,
      workerPlacement: placement,
      eagerRequested: eager,
      eagerlyStarted: counts.eagerlyStarted,
      n: options.n,
      concurrency: options.concurrency,
      steadyBookingsPerSecond: steadyPerSecond(done),
      overallBookingsPerSecond: round((options.n * 1000) / wallMs, 1),
      wallSeconds: round(wallMs / 1000, 2),
      latencyMs: roundPercentiles(percentiles(latencies)),
      outcomes,
      cpu,
      sandboxOrders: orders.length,
      duplicateOrders: duplicateOrders(orders).length,
      load: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
    };
  } finally {
    // The next variant must not share the machine with this worker.
    await worker.stop();
  }
}
