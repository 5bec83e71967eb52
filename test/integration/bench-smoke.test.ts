/**
 * The benchmarks still run: each one, tiny, through the same entry as `npm run bench`, on its own
 * stack (it ignores the tier's shared dev server; throughput's variants share one, `--one-stack`). Only completion and the shape of the written
 * JSON are checked, plus the invariants any load must keep (every booking resolved, one supplier
 * order per reference); speed is never asserted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBenchmark, type BenchmarkName } from '../../bench/main';
import type { AccountsFigures } from '../../bench/accounts';
import type { CompareFigures } from '../../bench/compare';
import type { OverheadFigures } from '../../bench/overhead';
import type { ParkedFigures } from '../../bench/parked';
import type { RecoveryStormFigures } from '../../bench/recovery-storm';
import type { SustainedFigures } from '../../bench/sustained';
import type { ThroughputFigures } from '../../bench/throughput';

let resultsDir: string;
beforeAll(() => {
  resultsDir = mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-'));
});
afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

/** The global setup's prebuilt bundle spares each benchmark a webpack run. */
const bundlePath = process.env.TEST_WORKFLOW_BUNDLE;

async function run<F>(name: BenchmarkName, options: Record<string, unknown>): Promise<F> {
  const printed: string[] = [];
  const { file } = await runBenchmark(
    name,
    { ...options, ...(bundlePath ? { bundlePath } : {}) },
    { resultsDir, print: (t) => printed.push(t), progress: () => undefined },
  );
  expect(file).toBe(path.join(resultsDir, `${name}.json`));
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> & {
    setup: Record<string, unknown>;
    figures: F;
  };
  expect(Object.keys(json)).toEqual(
    expect.arrayContaining([
      'benchmark',
      'startedAt',
      'durationSeconds',
      'setup',
      'options',
      'figures',
      'tables',
      'notes',
    ]),
  );
  expect(json.benchmark).toBe(name);
  expect(json.setup).toMatchObject({
    cores: os.cpus().length,
    node: process.version,
    temporalSdk: expect.objectContaining({ '@temporalio/client': expect.any(String) }),
    temporalCli: expect.stringContaining('Server'),
  });
  expect((json.tables as string[]).length).toBeGreaterThan(0);
  expect(printed.join('\n')).toContain(name);
  return json.figures;
}

test('overhead: direct, floor and workflow bookings are all measured', async () => {
  const f = await run<OverheadFigures>('overhead', { n: 5, warmup: 1 });
  expect(f.directMs.count).toBe(5);
  expect(f.floorMs.count).toBe(5);
  expect(f.floorLocalCheckMs.count).toBe(5);
  expect(f.floorAllLocalMs.count).toBe(5);
  expect(f.workflowMs.count).toBe(5);
  expect(f.workflowEagerMs.count).toBe(5);
  expect(f.outcomes).toEqual({ confirmed: 10 });
  expect(f.workflowMs.p50).toBeGreaterThan(0);
  expect(f.ratioToFloor.p50).toBeGreaterThan(0);
  expect(f.phases.workflow).toHaveLength(7);
  // The happy path's shape: two workflow tasks, Book the one activity.
  expect(f.history.workflow).toMatchObject({ workflowTasks: 2, activities: 1 });
  expect(f.history.floor).toMatchObject({ workflowTasks: 2, activities: 1 });
  // Direct, four floors and two workflow paths, warm-up included, each makes one order.
  expect(f.sandboxOrders).toBe(7 * (5 + 1));
  expect(f.floorHandOffMs.count).toBe(5);
  expect(f.duplicateOrders).toBe(0);
});

test('throughput: a plain, an eager and a floor variant complete every booking', async () => {
  // Its four variants on one stack (--one-stack): the same checks per variant, one dev server started instead of four.
  const f = await run<ThroughputFigures>('throughput', {
    n: 20,
    warmup: 2,
    concurrency: 5,
    eager: true,
    oneStack: true,
  });
  expect(f.variants).toHaveLength(4);
  for (const v of f.variants) {
    expect(v.outcomes).toEqual({ confirmed: 20 });
    expect(v.latencyMs.count).toBe(20);
    expect(v.overallBookingsPerSecond).toBeGreaterThan(0);
    expect(v.cpu.devServerSeconds).toBeGreaterThanOrEqual(0);
    expect(v.cpu.benchProcessSeconds).toBeGreaterThan(0);
  }
  const [plain, eager, floor, floorHandOff] = f.variants;
  expect(plain!.eagerlyStarted).toBe(0);
  expect(eager!.eagerRequested).toBe(true);
  expect(eager!.eagerlyStarted).toBeGreaterThan(0);
  expect(floor!.workflow).toBe('floor');
  expect(floorHandOff!.workflow).toBe('floor');
  expect(f.floorComparison?.floorBookingsPerSecond).toBeGreaterThan(0);
  expect(f.sandboxOrders).toBe(4 * (20 + 2));
  expect(f.duplicateOrders).toBe(0);
});

test('recovery-storm: every ambiguous booking is resolved, with one order each', async () => {
  const f = await run<RecoveryStormFigures>('recovery-storm', { n: 10, timeScale: 600 });
  expect(f.timeScale).toBe(600);
  expect(f.unresolved).toBe(0);
  expect(f.outcomes).toEqual({ confirmed: 10 });
  expect(f.bookCalls).toBe(10);
  expect(f.sandboxOrders).toBe(10);
  expect(f.duplicateOrders).toBe(0);
  // Every booking was polled at least once; its polls may share requests, so count references.
  expect(f.untilResolved.referencesCarried).toBeGreaterThanOrEqual(10);
  expect(f.untilResolved.queryOrdersRequests).toBeGreaterThanOrEqual(1);
  expect(f.untilResolved.queryOrdersRequests).toBeLessThanOrEqual(f.untilResolved.referencesCarried);
  expect(f.window.queryOrdersRequests).toBeLessThanOrEqual(f.untilResolved.queryOrdersRequests);
});

test('parked: bookings park, are measured, and are all terminated', async () => {
  const f = await run<ParkedFigures>('parked', { steps: [20] });
  expect(f.steps).toHaveLength(1);
  expect(f.steps[0]!.parked).toBe(20);
  expect(f.steps[0]!.workerRssMb).toBeGreaterThan(0);
  expect(f.steps[0]!.devServerRssMb).toBeGreaterThan(0);
  expect(f.runningBeforeTerminate).toBe(20);
  expect(f.termination.stillRunning).toBe(0);
  expect(f.sandboxOrders).toBe(20);
  expect(f.duplicateOrders).toBe(0);
  expect(f.floorComparison).toMatchObject({ parked: 20 });
  expect(f.floorComparison!.floorWorkerRssMb).toBeGreaterThan(0);
});

test('compare: the booking / floor ratios for p50 latency and CPU per booking are printed and written', async () => {
  const printed: string[] = [];
  const { file } = await runBenchmark(
    'compare',
    {
      overheadN: 3,
      overheadWarmup: 1,
      throughputN: 10,
      throughputWarmup: 2,
      concurrency: 5,
      oneStack: true,
      ...(bundlePath ? { bundlePath } : {}),
    },
    { resultsDir, print: (t) => printed.push(t), progress: () => undefined },
  );
  expect(file).toBe(path.join(resultsDir, 'compare.json'));
  const json = JSON.parse(readFileSync(file, 'utf8')) as { benchmark: string; figures: CompareFigures };
  expect(json.benchmark).toBe('compare');
  const f = json.figures;
  expect(f.latencyP50Ratio).toBeGreaterThan(0);
  expect(f.cpuPerBookingRatio).toBeGreaterThan(0);
  expect(f.floorOverDirect.p50Ratio).toBeGreaterThan(0);
  expect(f.latencyMs.direct.count).toBe(3);
  expect(f.overhead.duplicateOrders).toBe(0);
  expect(f.throughput.duplicateOrders).toBe(0);
  const out = printed.join('\n');
  expect(out).toContain('booking / floor');
  expect(out).toContain(`p50 latency ${f.latencyP50Ratio}×`);
  expect(out).toContain(`CPU per booking ${f.cpuPerBookingRatio}×`);
});

test('sustained: bookings started on a timer all reach an outcome, one order each (dev engine, capacity given)', async () => {
  const f = await run<SustainedFigures>('sustained', {
    engine: 'dev',
    minutes: 0.05,
    capacity: 10,
    load: 0.5,
    warmup: 2,
  });
  expect(f.capacity).toEqual({ bookingsPerSecond: 10, measured: false });
  expect(f.ratePerSecond).toBe(5);
  expect(f.started).toBe(15);
  expect(f.completed).toBe(15);
  expect(f.outcomes).toEqual({ confirmed: 15 });
  expect(f.latencyMs.count).toBe(15);
  expect(f.perMinute).toHaveLength(1);
  expect(f.cpu.totalMsPerBooking).toBeGreaterThan(0);
  // PostgreSQL's counters are the prod engine's only.
  expect(f.postgres).toBeUndefined();
  expect(f.nothingLost).toMatchObject({
    ok: true,
    withoutOutcome: 0,
    stillRunning: 0,
    referencesWithoutOrder: 0,
    duplicateOrders: 0,
    sandboxOrders: 17,
  });
});

test("accounts: alpha books while beta is down, and beta's waiting bookings confirm when it returns, one order each", async () => {
  const f = await run<AccountsFigures>('accounts', { n: 5, warmup: 1, concurrency: 5, stuck: 3, outageSeconds: 3 });
  expect(f.alphaAlone.outcomes).toEqual({ confirmed: 5 });
  expect(f.bothUp.alpha.outcomes).toEqual({ confirmed: 5 });
  expect(f.bothUp.beta.outcomes).toEqual({ confirmed: 5 });
  expect(f.betaDown.alpha.outcomes).toEqual({ confirmed: 5 });
  expect(f.betaDown.betaRefused).toBeGreaterThan(0);
  expect(f.betaReturns).toMatchObject({ stuck: 3, outcomes: { confirmed: 3 }, unresolved: 0 });
  // Warm-up, alpha alone, both up and alpha while beta is down; beta's warm-up, both up and the stuck ones.
  expect(f.orders).toEqual({ alpha: 16, beta: 9, duplicates: 0, atBothSuppliers: 0, confirmedWithoutOrder: 0 });
});
