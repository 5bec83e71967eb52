/**
 * overhead: what the orchestrator adds to one booking.
 *
 * The same sandbox answers N bookings each way, one at a time and interleaved, so drift (a growing
 * database, GC, other load on the machine) hits every path alike:
 *  - direct: the supplier client's CheckAvail then Book, no Temporal;
 *  - floor: a workflow with just those two calls as activities (bench/floor-workflow.ts): what
 *    Temporal itself costs for this shape on this server;
 *  - workflow: bookingWorkflow end to end (startBooking → awaitOutcome).
 * The difference workflow − direct per percentile is the overhead; floor splits it into Temporal's
 * share and the booking workflow's own, and the workflow histories show where the time goes.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { awaitOutcome, startBooking } from '../src/client';
import { createSupplierStack } from '../src/supplier/stack';
import { guests, holder } from '../test/harness/booking';
import { benchConfig, projectTuning, stackFlags, stackOptions, type WorkerTuning } from './config';
import { startFloorBooking } from './floor';
import { phaseBreakdown, type PhaseFigures, type TimedRun } from './history';
import { nowMs, percentiles, round, roundPercentiles, type Percentiles } from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import { startStack } from './stack';
import { benchRequest, duplicateOrders } from './workload';

export const OverheadOptions = z.object({
  n: z.number().int().positive().default(300),
  warmup: z.number().int().nonnegative().default(20),
  ...stackFlags('memory'),
});
export type OverheadOptions = z.input<typeof OverheadOptions>;

type Triple = { p50: number; p90: number; p99: number };

export interface OverheadFigures {
  n: number;
  warmup: number;
  tuning: WorkerTuning;
  workerPlacement: 'inline';
  directMs: Percentiles;
  floorMs: Percentiles;
  workflowMs: Percentiles;
  /** workflow − direct, per percentile (not the percentile of per-booking differences). */
  differenceMs: Triple;
  /** floor − direct: Temporal's own share. */
  temporalShareMs: Triple;
  /** workflow − floor: the booking workflow's own share. */
  bookingWorkflowShareMs: Triple;
  /** Time until startBooking returned (the start request's round trip). */
  startRequestMs: Percentiles;
  phases: { workflow: PhaseFigures[]; floor: PhaseFigures[] };
  outcomes: Record<string, number>;
  sandboxOrders: number;
  duplicateOrders: number;
  targets: { p50OverheadMs: number; p99OverheadMs: number; met: boolean };
}

const TEST_HEADER = 'confirmAfterMs=0';
const RATE_PKG = 'pkg-standard-double';

export async function overhead(raw: OverheadOptions, ctx: BenchContext): Promise<BenchOutput<OverheadFigures>> {
  const options = OverheadOptions.parse(raw);
  const stack = await startStack({ name: 'overhead', ...stackOptions(options) });
  try {
    const tuning = projectTuning();
    const taskQueue = `bench-overhead-${randomUUID().slice(0, 8)}`;
    const floorQueue = `bench-overhead-floor-${randomUUID().slice(0, 8)}`;
    await stack.startWorker({ taskQueue, tuning, placement: 'inline' });
    await stack.startWorker({ taskQueue: floorQueue, tuning, placement: 'inline', kind: 'floor' });
    const { client } = stack.createClient(false);
    // The supplier stack a worker uses (rate limiter included), called directly: the no-Temporal baseline.
    const { supplier, close: closeSupplier } = createSupplierStack(benchConfig(stack.sandbox.url).supplier);

    const direct = async (): Promise<number> => {
      const ref = randomUUID();
      const context = { sessionId: `sess-${ref}`, traceId: `bench-direct-${ref}`, test: TEST_HEADER };
      const t0 = nowMs();
      await supplier.checkAvail({ ratePkgId: RATE_PKG }, context);
      const order = await supplier.book({ customerReferenceNo: ref, ratePkgId: RATE_PKG, holder, guests }, context);
      const ms = nowMs() - t0;
      if (order.status !== 2) throw new Error(`direct booking ended in status ${order.status}, expected 2 (confirmed)`);
      return ms;
    };
    const floor = async (): Promise<{ ms: number; run: TimedRun }> => {
      const input = { customerReferenceNo: randomUUID(), ratePkgId: RATE_PKG, test: TEST_HEADER };
      const sentAtMs = Date.now();
      const t0 = nowMs();
      const handle = await startFloorBooking(client, floorQueue, input);
      const status = await handle.result();
      const ms = nowMs() - t0;
      if (status !== 2) throw new Error(`floor booking ended in status ${status}, expected 2 (confirmed)`);
      return { ms, run: { workflowId: handle.workflowId, sentAtMs, resultAtMs: Date.now() } };
    };
    const outcomes: Record<string, number> = {};
    const viaWorkflow = async (): Promise<{ ms: number; startMs: number; run: TimedRun }> => {
      const request = benchRequest(TEST_HEADER);
      const sentAtMs = Date.now();
      const t0 = nowMs();
      const handle = await startBooking(client, request, { taskQueue });
      const startMs = nowMs() - t0;
      const outcome = await awaitOutcome(client, request.customerReferenceNo);
      const ms = nowMs() - t0;
      outcomes[outcome.kind] = (outcomes[outcome.kind] ?? 0) + 1;
      return { ms, startMs, run: { workflowId: handle.workflowId, sentAtMs, resultAtMs: Date.now() } };
    };

    try {
      ctx.progress(`overhead: warm-up, ${options.warmup} of each`);
      for (let i = 0; i < options.warmup; i++) {
        await direct();
        await floor();
        await viaWorkflow();
      }
      for (const k of Object.keys(outcomes)) delete outcomes[k];

      ctx.progress(`overhead: ${options.n} bookings each way (direct, floor, workflow), interleaved`);
      const directMs: number[] = [];
      const floorMs: number[] = [];
      const workflowMs: number[] = [];
      const startMs: number[] = [];
      const runs: TimedRun[] = [];
      const floorRuns: TimedRun[] = [];
      for (let i = 0; i < options.n; i++) {
        directMs.push(await direct());
        const f = await floor();
        floorMs.push(f.ms);
        floorRuns.push(f.run);
        const w = await viaWorkflow();
        workflowMs.push(w.ms);
        startMs.push(w.startMs);
        runs.push(w.run);
        if ((i + 1) % 100 === 0) ctx.progress(`overhead: ${i + 1}/${options.n}`);
      }

      ctx.progress('overhead: reading workflow histories');
      const phases = { workflow: await phaseBreakdown(client, runs), floor: await phaseBreakdown(client, floorRuns) };
      const orders = await stack.sandbox.orders();
      const d = percentiles(directMs);
      const f = percentiles(floorMs);
      const w = percentiles(workflowMs);
      const minus = (a: Triple, b: Triple): Triple => ({
        p50: round(a.p50 - b.p50, 2),
        p90: round(a.p90 - b.p90, 2),
        p99: round(a.p99 - b.p99, 2),
      });
      const differenceMs = minus(w, d);
      const figures: OverheadFigures = {
        n: options.n,
        warmup: options.warmup,
        tuning,
        workerPlacement: 'inline',
        directMs: roundPercentiles(d),
        floorMs: roundPercentiles(f),
        workflowMs: roundPercentiles(w),
        differenceMs,
        temporalShareMs: minus(f, d),
        bookingWorkflowShareMs: minus(w, f),
        startRequestMs: roundPercentiles(percentiles(startMs)),
        phases,
        outcomes,
        sandboxOrders: orders.length,
        duplicateOrders: duplicateOrders(orders).length,
        targets: { p50OverheadMs: 30, p99OverheadMs: 100, met: differenceMs.p50 <= 30 && differenceMs.p99 <= 100 },
      };
      const row = (label: string, p: Triple, extra?: Percentiles) => [
        label,
        round(p.p50, 1),
        round(p.p90, 1),
        round(p.p99, 1),
        extra ? round(extra.mean, 1) : undefined,
        extra ? round(extra.max, 1) : undefined,
      ];
      const byPhase = new Map(phases.floor.map((p) => [p.phase, p]));
      const tables = [
        table(
          `overhead: ${options.n} sequential bookings each way (ms; warm-up ${options.warmup} each, not counted)`,
          ['path', 'p50', 'p90', 'p99', 'mean', 'max'],
          [
            row('direct (CheckAvail + Book)', d, d),
            row('floor workflow (2 activities)', f, f),
            row('booking workflow (start → outcome)', w, w),
            row('overhead (workflow − direct)', differenceMs),
            row('  Temporal (floor − direct)', figures.temporalShareMs),
            row('  booking workflow (workflow − floor)', figures.bookingWorkflowShareMs),
            row('  start request (startBooking)', figures.startRequestMs, figures.startRequestMs),
          ],
        ),
        table(
          'overhead: where the time goes, from workflow histories (ms per booking)',
          ['phase', 'workflow p50', 'workflow mean', '% of mean', 'floor p50', 'floor mean'],
          phases.workflow.map((p) => [
            p.phase,
            p.p50Ms,
            p.meanMs,
            p.sharePercent,
            byPhase.get(p.phase)?.p50Ms,
            byPhase.get(p.phase)?.meanMs,
          ]),
        ),
      ];
      const notes = [
        `Targets: overhead p50 ≤ 30 ms, p99 ≤ 100 ms → ${figures.targets.met ? 'met' : 'missed'}.`,
        'Workers in the bench process (createBookingWorker and the floor worker, project default tuning); sandbox in a child process.',
        'Phases are summed per booking over history event gaps; each gap is charged to the event that ends it. ' +
          '"waiting in queue" is the time from a task being scheduled to a worker taking it (the server’s hand-off); ' +
          '"running in worker" is from taken to completed (worker CPU and the completion round trip).',
      ];
      return { figures, tables, notes };
    } finally {
      await closeSupplier();
    }
  } finally {
    await stack.stop();
  }
}
