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
import { awaitOutcome, startBooking } from '../src/api/client/index';
import { createSupplierStack } from '../src/runtime/supplier/stack';
import { guests, holder } from '../test/harness/booking';
import { benchConfig, projectTuning, stackFlags, stackOptions, type WorkerTuning } from './config';
import { startFloorBooking, type FloorShape } from './floor';
import { historyCounts, phaseBreakdown, type HistoryCounts, type PhaseFigures, type TimedRun } from './history';
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
  /** The reference workflows (bench/floor-workflow.ts), by shape. */
  floorMs: Percentiles;
  floorLocalCheckMs: Percentiles;
  floorAllLocalMs: Percentiles;
  /** floorBookingLocalCheck and then the order hand-off's floor (a local activity starting a waiting workflow). */
  floorHandOffMs: Percentiles;
  workflowMs: Percentiles;
  /** bookingWorkflow started with `eager: true` on the worker's connection. */
  workflowEagerMs: Percentiles;
  /** workflow − direct, per percentile (not the percentile of per-booking differences). */
  differenceMs: Triple;
  eagerDifferenceMs: Triple;
  /** floor (the booking's shape: CheckAvail local, Book an activity) − direct: Temporal's own share. */
  temporalShareMs: Triple;
  /** workflow − that floor: the booking workflow's own share. */
  bookingWorkflowShareMs: Triple;
  /** workflow p50 / floor p50, both of the booking's shape: 1 is Temporal's own cost and nothing more. */
  ratioToFloor: { p50: number; p99: number };
  /** Time until startBooking returned (the start request's round trip). */
  startRequestMs: Percentiles;
  phases: { workflow: PhaseFigures[]; floor: PhaseFigures[] };
  /** Per booking, from the histories. */
  history: { workflow: HistoryCounts; floor: HistoryCounts };
  /** Of the eager-start bookings, how many the server started eagerly. */
  eagerlyStarted: number;
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
    const eagerClient = stack.createClient(true);
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
    const floor = (shape: FloorShape) => async (): Promise<{ ms: number; run: TimedRun }> => {
      const input = { customerReferenceNo: randomUUID(), ratePkgId: RATE_PKG, test: TEST_HEADER };
      const sentAtMs = Date.now();
      const t0 = nowMs();
      const handle = await startFloorBooking(client, floorQueue, input, shape);
      const status = await handle.result();
      const ms = nowMs() - t0;
      if (status !== 2) throw new Error(`floor booking ended in status ${status}, expected 2 (confirmed)`);
      return { ms, run: { workflowId: handle.workflowId, sentAtMs, resultAtMs: Date.now() } };
    };
    const outcomes: Record<string, number> = {};
    const viaWorkflow = (eager: boolean) => async (): Promise<{ ms: number; startMs: number; run: TimedRun }> => {
      const request = benchRequest(TEST_HEADER);
      const sentAtMs = Date.now();
      const t0 = nowMs();
      const handle = await startBooking(eager ? eagerClient.client : client, request, { taskQueue, eager });
      const startMs = nowMs() - t0;
      const outcome = await awaitOutcome(client, request.customerReferenceNo);
      const ms = nowMs() - t0;
      outcomes[outcome.kind] = (outcomes[outcome.kind] ?? 0) + 1;
      return { ms, startMs, run: { workflowId: handle.workflowId, sentAtMs, resultAtMs: Date.now() } };
    };
    const paths = {
      floor: floor('floorBooking'),
      floorLocalCheck: floor('floorBookingLocalCheck'),
      floorAllLocal: floor('floorBookingAllLocal'),
      floorHandOff: floor('floorBookingHandOff'),
      workflow: viaWorkflow(false),
      workflowEager: viaWorkflow(true),
    };

    try {
      ctx.progress(`overhead: warm-up, ${options.warmup} of each`);
      for (let i = 0; i < options.warmup; i++) {
        await direct();
        for (const run of Object.values(paths)) await run();
      }
      for (const k of Object.keys(outcomes)) delete outcomes[k];
      eagerClient.counts.eagerlyStarted = 0;

      ctx.progress(`overhead: ${options.n} bookings each way (direct, 4 floors, workflow, eager), interleaved`);
      const directMs: number[] = [];
      const ms = Object.fromEntries(Object.keys(paths).map((k) => [k, [] as number[]])) as Record<
        keyof typeof paths,
        number[]
      >;
      const startMs: number[] = [];
      const runs: TimedRun[] = [];
      const floorRuns: TimedRun[] = [];
      for (let i = 0; i < options.n; i++) {
        directMs.push(await direct());
        for (const name of Object.keys(paths) as (keyof typeof paths)[]) {
          const r: { ms: number; startMs?: number; run: TimedRun } = await paths[name]();
          ms[name].push(r.ms);
          if (name === 'floorLocalCheck') floorRuns.push(r.run);
          if (name === 'workflow') {
            startMs.push(r.startMs!);
            runs.push(r.run);
          }
        }
        if ((i + 1) % 100 === 0) ctx.progress(`overhead: ${i + 1}/${options.n}`);
      }

      ctx.progress('overhead: reading workflow histories');
      const phases = { workflow: await phaseBreakdown(client, runs), floor: await phaseBreakdown(client, floorRuns) };
      const history = { workflow: await historyCounts(client, runs), floor: await historyCounts(client, floorRuns) };
      const orders = await stack.sandbox.orders();
      const d = percentiles(directMs);
      const f = percentiles(ms.floorLocalCheck);
      const w = percentiles(ms.workflow);
      const we = percentiles(ms.workflowEager);
      const minus = (a: Triple, b: Triple): Triple => ({
        p50: round(a.p50 - b.p50, 2),
        p90: round(a.p90 - b.p90, 2),
        p99: round(a.p99 - b.p99, 2),
      });
      const differenceMs = minus(w, d);
      const eagerDifferenceMs = minus(we, d);
      const bestDifference = eagerDifferenceMs.p50 < differenceMs.p50 ? eagerDifferenceMs : differenceMs;
      const figures: OverheadFigures = {
        n: options.n,
        warmup: options.warmup,
        tuning,
        workerPlacement: 'inline',
        directMs: roundPercentiles(d),
        floorMs: roundPercentiles(percentiles(ms.floor)),
        floorLocalCheckMs: roundPercentiles(f),
        floorAllLocalMs: roundPercentiles(percentiles(ms.floorAllLocal)),
        floorHandOffMs: roundPercentiles(percentiles(ms.floorHandOff)),
        workflowMs: roundPercentiles(w),
        workflowEagerMs: roundPercentiles(we),
        differenceMs,
        eagerDifferenceMs,
        temporalShareMs: minus(f, d),
        bookingWorkflowShareMs: minus(w, f),
        ratioToFloor: { p50: round(w.p50 / f.p50, 2), p99: round(w.p99 / f.p99, 2) },
        startRequestMs: roundPercentiles(percentiles(startMs)),
        phases,
        history,
        eagerlyStarted: eagerClient.counts.eagerlyStarted,
        outcomes,
        sandboxOrders: orders.length,
        duplicateOrders: duplicateOrders(orders).length,
        targets: {
          p50OverheadMs: 15,
          p99OverheadMs: 40,
          met: bestDifference.p50 <= 15 && bestDifference.p99 <= 40,
        },
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
      const tables: ReturnType<typeof table>[] = [
        table(
          `overhead: ${options.n} sequential bookings each way (ms; warm-up ${options.warmup} each, not counted)`,
          ['path', 'p50', 'p90', 'p99', 'mean', 'max'],
          [
            row('direct (CheckAvail + Book)', d, d),
            row('floor workflow (2 activities)', figures.floorMs, figures.floorMs),
            row('floor workflow (CheckAvail local, Book activity)', f, f),
            row('floor workflow (both local: one task)', figures.floorAllLocalMs, figures.floorAllLocalMs),
            row('floor workflow (CheckAvail local, Book, hand-off)', figures.floorHandOffMs, figures.floorHandOffMs),
            row('booking workflow (start → outcome)', w, w),
            row('booking workflow, eager start', we, we),
            row('overhead (workflow − direct)', differenceMs),
            row('overhead, eager start', eagerDifferenceMs),
            row('  Temporal (floor of the same shape − direct)', figures.temporalShareMs),
            row('  booking workflow (workflow − that floor)', figures.bookingWorkflowShareMs),
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
      tables.push(
        table(
          'overhead: what one booking writes (per booking, from its history)',
          ['workflow', 'events', 'workflow tasks', 'activities', 'markers', 'upserts'],
          [
            ['booking workflow', ...Object.values(history.workflow)],
            ['floor (CheckAvail local, Book activity)', ...Object.values(history.floor)],
          ],
        ),
      );
      const notes = [
        `Targets: overhead p50 ≤ 15 ms, p99 ≤ 40 ms → ${figures.targets.met ? 'met' : 'missed'}.`,
        `Ratio to the floor of the same shape: p50 ${figures.ratioToFloor.p50}×, p99 ${figures.ratioToFloor.p99}×. ` +
          `Eager start: ${figures.eagerlyStarted} of ${options.n} started eagerly.`,
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
