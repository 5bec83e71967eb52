/**
 * compare: the two ratios issue 25 is judged on, in one command.
 *
 * Runs, back to back with the same stack flags, the two measurements that already hold them, with
 * smaller defaults so the whole takes a few minutes:
 *  - overhead (bench/overhead.ts): the direct supplier calls (no Temporal), the floor workflows
 *    (bench/floor-workflow.ts) and the booking, interleaved on one stack → p50 start-to-outcome latency;
 *  - throughput (bench/throughput.ts) with its floor variants: the booking and the floor, each on a
 *    fresh stack with the same settings → CPU per booking.
 * and prints booking / floor for p50 latency and for CPU per booking, and the floor's p50 over the
 * direct calls (what Temporal itself adds to the two supplier calls). The floor is the booking's shape
 * (floorBookingLocalCheck: CheckAvail a local activity, Book an activity), as in both benchmarks.
 */
import { z } from 'zod';
import { stackFlags } from './config';
import { round, type Percentiles } from './measure';
import { overhead, type OverheadFigures } from './overhead';
import { table, type BenchContext, type BenchOutput } from './report';
import { throughput, type ThroughputFigures } from './throughput';

export const CompareOptions = z.object({
  /** Sequential bookings each way in the overhead part (its own default is 300). */
  overheadN: z.number().int().positive().default(150),
  overheadWarmup: z.number().int().nonnegative().default(10),
  /** Bookings per variant in the throughput part (its own default is 2000). */
  throughputN: z.number().int().positive().default(800),
  throughputWarmup: z.number().int().nonnegative().default(50),
  concurrency: z.number().int().positive().default(50),
  /** The throughput part's variants on one stack (its `--one-stack`). */
  oneStack: z.boolean().default(false),
  ...stackFlags('memory'),
});
export type CompareOptions = z.input<typeof CompareOptions>;

/** Booking / floor ≤ this for p50 latency and for CPU per booking (issue 25's "done when"). */
export const RATIO_TARGET = 1.15;

export interface CompareFigures {
  /** booking / floor, p50 start-to-outcome latency, from the overhead part. */
  latencyP50Ratio: number;
  /** booking / floor, CPU ms per booking (dev server + sandbox + worker and client), from the throughput part. */
  cpuPerBookingRatio: number;
  /** floor p50 / direct p50, and the difference in ms: what Temporal adds to the two supplier calls. */
  floorOverDirect: { p50Ratio: number; p50DifferenceMs: number };
  latencyMs: { direct: Percentiles; floor: Percentiles; booking: Percentiles };
  cpuMsPerBooking: { floor: number; booking: number };
  bookingsPerSecond: { floor: number; booking: number };
  targets: { ratio: number; latencyMet: boolean; cpuMet: boolean };
  /** The two runs' own figures, as bench/results/overhead.json and throughput.json would hold them. */
  overhead: OverheadFigures;
  throughput: ThroughputFigures;
}

export async function compare(raw: CompareOptions, ctx: BenchContext): Promise<BenchOutput<CompareFigures>> {
  const options = CompareOptions.parse(raw);
  const { overheadN, overheadWarmup, throughputN, throughputWarmup, concurrency, oneStack, ...flags } = options;
  const prefixed: BenchContext = { progress: (m) => ctx.progress(`compare: ${m}`) };

  ctx.progress(`compare: 1/2 overhead, ${overheadN} each way (direct, floors, booking)`);
  const o = await overhead({ n: overheadN, warmup: overheadWarmup, ...flags }, prefixed);
  ctx.progress(`compare: 2/2 throughput, ${throughputN} per variant (booking, floor, floor+hand-off)`);
  const t = await throughput(
    { n: throughputN, warmup: throughputWarmup, concurrency, floor: true, worker: 'inline', oneStack, ...flags },
    prefixed,
  );

  const fc = t.figures.floorComparison;
  if (!fc) throw new Error('compare: the throughput run returned no floor comparison');
  const direct = o.figures.directMs;
  const floor = o.figures.floorLocalCheckMs;
  const booking = o.figures.workflowMs;
  const figures: CompareFigures = {
    latencyP50Ratio: round(booking.p50 / floor.p50, 2),
    cpuPerBookingRatio: round(fc.bookingCpuMsPerBooking / fc.floorCpuMsPerBooking, 2),
    floorOverDirect: { p50Ratio: round(floor.p50 / direct.p50, 2), p50DifferenceMs: round(floor.p50 - direct.p50, 2) },
    latencyMs: { direct, floor, booking },
    cpuMsPerBooking: { floor: fc.floorCpuMsPerBooking, booking: fc.bookingCpuMsPerBooking },
    bookingsPerSecond: { floor: fc.floorBookingsPerSecond, booking: fc.bookingBookingsPerSecond },
    targets: { ratio: RATIO_TARGET, latencyMet: false, cpuMet: false },
    overhead: o.figures,
    throughput: t.figures,
  };
  figures.targets.latencyMet = figures.latencyP50Ratio <= RATIO_TARGET;
  figures.targets.cpuMet = figures.cpuPerBookingRatio <= RATIO_TARGET;

  const verdict = (met: boolean) => (met ? 'met' : 'missed');
  const summary = table(
    `compare: booking against its floor (overhead ${overheadN} each way; throughput ${throughputN} per variant, ${concurrency} in flight)`,
    ['figure', 'direct', 'floor', 'booking', 'booking / floor', `target ≤ ${RATIO_TARGET}`],
    [
      [
        'p50 start-to-outcome, ms',
        round(direct.p50, 1),
        round(floor.p50, 1),
        round(booking.p50, 1),
        figures.latencyP50Ratio,
        verdict(figures.targets.latencyMet),
      ],
      [
        'CPU per booking, ms',
        undefined,
        fc.floorCpuMsPerBooking,
        fc.bookingCpuMsPerBooking,
        figures.cpuPerBookingRatio,
        verdict(figures.targets.cpuMet),
      ],
      [
        'steady bookings/s',
        undefined,
        fc.floorBookingsPerSecond,
        fc.bookingBookingsPerSecond,
        round(fc.bookingBookingsPerSecond / fc.floorBookingsPerSecond, 2),
        undefined,
      ],
    ],
  );
  const notes = [
    `booking / floor: p50 latency ${figures.latencyP50Ratio}×, CPU per booking ${figures.cpuPerBookingRatio}×; ` +
      `floor / direct p50 ${figures.floorOverDirect.p50Ratio}× (+${figures.floorOverDirect.p50DifferenceMs} ms).`,
    'Latency is from the overhead part (sequential, interleaved on one stack); CPU per booking from the throughput part ' +
      (oneStack
        ? '(booking and floor one after the other on one stack, --one-stack). '
        : '(booking and floor each on a fresh stack with the same settings, one after the other). ') +
      'The floor is floorBookingLocalCheck (bench/floor-workflow.ts), the booking’s shape with none of its code.',
    ...o.notes.map((n) => `overhead: ${n}`),
    ...t.notes.map((n) => `throughput: ${n}`),
  ];
  return { figures, tables: [summary, ...o.tables, ...t.tables], notes };
}
