/**
 * recovery-storm: N bookings whose Book ends ambiguously at the same moment (the supplier made the
 * order, then answered 504), with orders that settle 3 to 10 minutes later, as the spec says Book
 * takes. What does the recovery loop then ask of the supplier's QueryOrders, which allows 50
 * requests per second per key?
 *
 * Counted from the sandbox's own log: QueryOrders requests and the references they carried in the
 * first 10 minutes after the Books ended, the 429s among them, the busiest second, and the time
 * until the last booking was resolved (from the workflows' close times in visibility).
 *
 * By default the Book answers are held back and released together once the N-th Book has arrived
 * (bench/book-barrier.ts), so the Books do end at once even where starting N bookings takes a
 * minute; with `--barrier off` each Book ends as it arrives.
 *
 * `--time-scale K` divides the recovery schedule and the settle delays by K (a 10-minute window
 * becomes 600/K seconds) for quick runs. The QueryOrders limit is not scaled, so a scaled run asks
 * K times as fast against the same limit: its 429s are an upper bound of the real run's.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { startBooking } from '../src/api/client/index';
import type { BookingRequest } from '../src/api/contract/index';
import { forEachConcurrently, nowMs, peakPerSecond, percentiles, round, sleep } from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import { defaultSupplierProfile } from '../src/runtime/config/supplier-profile';
import { startStack } from './stack';
import { benchConfig, projectTuning, stackFlags, stackOptions, type WorkerTuning } from './config';
import {
  benchRequest,
  countWorkflows,
  duplicateOrders,
  listBookings,
  runningOn,
  scaledRecovery,
  terminateBookings,
  type RecoveryOverride,
} from './workload';

export const RecoveryStormOptions = z.object({
  n: z.number().int().positive().default(1000),
  timeScale: z.number().positive().default(1),
  /** The sandbox's QueryOrders limit per second; the other limits are raised out of the way. */
  qps: z.number().positive().default(50),
  /** Hold the Book answers and release them together (bench/book-barrier.ts). */
  barrier: z.enum(['on', 'off']).default('on'),
  /** Bookings being started at once. */
  concurrency: z.number().int().positive().default(50),
  ...stackFlags('memory'),
});
export type RecoveryStormOptions = z.input<typeof RecoveryStormOptions>;

const WINDOW_SECONDS = 600;
const SETTLE_MIN_MS = 180_000;
const SETTLE_MAX_MS = 600_000;

export interface RecoveryStormFigures {
  n: number;
  timeScale: number;
  qpsLimit: number;
  tuning: WorkerTuning;
  /** SUPPLIER_MAX_CONNECTIONS raised for the barrier, when it was. */
  supplierMaxConnections?: number;
  recovery: RecoveryOverride;
  /** Seconds (as run) between the first and the last Book reaching the sandbox. */
  bookSpreadSeconds: number;
  /** Book answers the barrier held and released at one moment (0 without the barrier). */
  booksReleasedTogether: number;
  window: {
    /** 600 s divided by the time scale. */
    seconds: number;
    queryOrdersRequests: number;
    referencesCarried: number;
    rateLimited429: number;
    otherErrors: number;
    peakRequestsPerSecond: number;
  };
  untilResolved: {
    queryOrdersRequests: number;
    referencesCarried: number;
    rateLimited429: number;
    peakRequestsPerSecond: number;
    /** From the first Book to the last workflow close, as run and times the time scale. */
    secondsAsRun: number;
    realTimeEquivalentSeconds: number;
    /** Close time minus the moment the order settled at the supplier, ×K (real-time equivalent). */
    lagAfterSettleSeconds: { p50: number; p90: number; max: number };
    timesQueriedPerReference: { mean: number; max: number };
  };
  sandboxRateLimitedTotal: number;
  outcomes: Record<string, number>;
  unresolved: number;
  bookCalls: number;
  sandboxOrders: number;
  duplicateOrders: number;
  targets: { maxRequestsIn10Min: number; max429: number; met: boolean };
}

export async function recoveryStorm(
  raw: RecoveryStormOptions,
  ctx: BenchContext,
): Promise<BenchOutput<RecoveryStormFigures>> {
  const options = RecoveryStormOptions.parse(raw);
  const k = options.timeScale;
  const stack = await startStack({
    name: 'recovery-storm',
    rateLimits: { queryOrders: options.qps },
    // Released before the client's Book timeout, so a slow start never turns a held answer into a timeout.
    ...(options.barrier === 'on'
      ? { bookBarrier: { count: options.n, maxHoldMs: defaultSupplierProfile.timeoutsMs.book - 15_000 } }
      : {}),
    ...stackOptions(options),
  });
  try {
    const taskQueue = `bench-storm-${randomUUID().slice(0, 8)}`;
    // N Books in flight at once take N activity slots and N connections: a real storm of that size
    // implies that much capacity (several workers). With the barrier holding them, the project's
    // defaults (200 slots, 64 connections) would leave the rest of the bookings stuck behind them.
    const defaults = projectTuning();
    const tuning: WorkerTuning =
      options.barrier === 'on'
        ? {
            ...defaults,
            maxConcurrentActivityTaskExecutions: defaults.maxConcurrentActivityTaskExecutions + options.n,
          }
        : defaults;
    const maxConnections =
      options.barrier === 'on' ? benchConfig('http://127.0.0.1:1').supplier.maxConnections + options.n : undefined;
    await stack.startWorker({ taskQueue, tuning, placement: 'inline', ...(maxConnections ? { maxConnections } : {}) });
    const { client } = stack.createClient(false);
    const recovery = scaledRecovery(k);
    const settleMs = (i: number) =>
      Math.round((SETTLE_MIN_MS + ((SETTLE_MAX_MS - SETTLE_MIN_MS) * i) / Math.max(1, options.n - 1)) / k);
    const requests: BookingRequest[] = Array.from({ length: options.n }, (_, i) =>
      benchRequest(`book=504AfterCreate&confirmAfterMs=${settleMs(i)}`, recovery),
    );
    const settleByRef = new Map(requests.map((r, i) => [r.customerReferenceNo, settleMs(i)]));

    ctx.progress(
      `recovery-storm: starting ${options.n} bookings (time scale ${k}, QueryOrders limit ${options.qps}/s)`,
    );
    await forEachConcurrently(options.n, options.concurrency, async (i) => {
      await startBooking(client, requests[i]!, { taskQueue });
    });

    // The last order settles at 600 s/K and the schedule polls at 930 s/K; beyond twice the first
    // repeat interval something is wrong, and the bookings left are reported as unresolved.
    const deadlineMs = ((2 * (930 + 600)) / k) * 1000 + 60_000 + options.n * 20;
    const t0 = nowMs();
    let running = options.n;
    let lastLog = 0;
    while (running > 0 && nowMs() - t0 < deadlineMs) {
      await sleep(Math.min(5_000, Math.max(500, 30_000 / k)));
      running = await countWorkflows(client, runningOn(taskQueue));
      if (nowMs() - lastLog >= 10_000 || running === 0) {
        lastLog = nowMs();
        const stats = await stack.sandbox.stats();
        ctx.progress(
          `recovery-storm: ${Math.round((nowMs() - t0) / 1000)} s, ${running} running, ` +
            `${stats.queryOrders.requests} QueryOrders, ${stats.rateLimited} × 429`,
        );
      }
    }

    const [queryCalls, bookCalls, stats, orders, bookings] = await Promise.all([
      stack.sandbox.calls('queryOrders'),
      stack.sandbox.calls('book'),
      stack.sandbox.stats(),
      stack.sandbox.orders(),
      listBookings(client, taskQueue),
    ]);
    if (running > 0) {
      await terminateBookings(
        client,
        requests.map((r) => r.customerReferenceNo),
        'recovery-storm benchmark: not resolved in time',
      );
    }

    const bookTimes = bookCalls.map((c) => Date.parse(c.at));
    // The storm starts when the Books end: at the barrier's release, or at the first Book without one.
    const releasedAt = stack.barrier?.releasedAt();
    const anchor = releasedAt ?? Math.min(...bookTimes);
    const windowEnd = anchor + (WINDOW_SECONDS / k) * 1000;
    const inWindow = queryCalls.filter((c) => Date.parse(c.at) <= windowEnd);
    const closed = bookings.filter((b) => b.closeTime !== undefined);
    const lastClose = Math.max(...closed.map((b) => b.closeTime!));
    const createdByRef = new Map(orders.map((o) => [o.customerReferenceNo, Date.parse(o.createdAt)]));
    const lags = closed.flatMap((b) => {
      const ref = b.workflowId.replace(/^booking:/, '');
      const created = createdByRef.get(ref);
      const settle = settleByRef.get(ref);
      return created === undefined || settle === undefined ? [] : [((b.closeTime! - (created + settle)) / 1000) * k];
    });
    const perBooking = new Map<string, number>();
    for (const c of queryCalls)
      for (const ref of c.customerReferenceNos ?? []) perBooking.set(ref, (perBooking.get(ref) ?? 0) + 1);
    const outcomes: Record<string, number> = {};
    for (const b of bookings) {
      const key = b.status === 'COMPLETED' ? (b.outcome ?? 'unknown') : b.status.toLowerCase();
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    const lag = percentiles(lags);
    const perBookingCounts = [...perBooking.values()];

    const figures: RecoveryStormFigures = {
      n: options.n,
      timeScale: k,
      qpsLimit: options.qps,
      tuning,
      ...(maxConnections ? { supplierMaxConnections: maxConnections } : {}),
      recovery,
      bookSpreadSeconds: round((Math.max(...bookTimes) - Math.min(...bookTimes)) / 1000, 2),
      booksReleasedTogether: stack.barrier?.released() ?? 0,
      window: {
        seconds: round(WINDOW_SECONDS / k, 2),
        queryOrdersRequests: inWindow.length,
        referencesCarried: inWindow.reduce((s, c) => s + (c.customerReferenceNos?.length ?? 0), 0),
        rateLimited429: inWindow.filter((c) => c.httpStatus === 429).length,
        otherErrors: inWindow.filter((c) => c.httpStatus !== 200 && c.httpStatus !== 429).length,
        peakRequestsPerSecond: peakPerSecond(inWindow.map((c) => c.at)).peak,
      },
      untilResolved: {
        queryOrdersRequests: queryCalls.length,
        referencesCarried: queryCalls.reduce((s, c) => s + (c.customerReferenceNos?.length ?? 0), 0),
        rateLimited429: queryCalls.filter((c) => c.httpStatus === 429).length,
        peakRequestsPerSecond: peakPerSecond(queryCalls.map((c) => c.at)).peak,
        secondsAsRun: round((lastClose - anchor) / 1000, 1),
        realTimeEquivalentSeconds: round(((lastClose - anchor) / 1000) * k, 0),
        lagAfterSettleSeconds: { p50: round(lag.p50, 1), p90: round(lag.p90, 1), max: round(lag.max, 1) },
        timesQueriedPerReference: {
          mean: round(perBookingCounts.reduce((s, v) => s + v, 0) / Math.max(1, perBookingCounts.length), 2),
          max: Math.max(0, ...perBookingCounts),
        },
      },
      sandboxRateLimitedTotal: stats.rateLimited,
      outcomes,
      unresolved: running,
      bookCalls: bookCalls.length,
      sandboxOrders: orders.length,
      duplicateOrders: duplicateOrders(orders).length,
      targets: { maxRequestsIn10Min: 500, max429: 0, met: false },
    };
    figures.targets.met = figures.window.queryOrdersRequests <= 500 && figures.window.rateLimited429 === 0;

    const w = figures.window;
    const u = figures.untilResolved;
    const tables = [
      table(
        `recovery-storm: ${options.n} ambiguous Books at once, QueryOrders limit ${options.qps}/s, time scale ${k}`,
        ['measure', 'first 10 min' + (k !== 1 ? ` (${w.seconds} s as run)` : ''), 'until all resolved'],
        [
          ['QueryOrders requests', w.queryOrdersRequests, u.queryOrdersRequests],
          ['references carried', w.referencesCarried, u.referencesCarried],
          ['429 answers (sandbox log)', w.rateLimited429, u.rateLimited429],
          ['other non-200 answers', w.otherErrors, undefined],
          ['peak QueryOrders requests/s', w.peakRequestsPerSecond, u.peakRequestsPerSecond],
          [
            'times each reference was queried (mean / max)',
            undefined,
            `${u.timesQueriedPerReference.mean} / ${u.timesQueriedPerReference.max}`,
          ],
          ['time to resolve all (s as run)', undefined, u.secondsAsRun],
          ['time to resolve all (s, real-time equivalent)', undefined, u.realTimeEquivalentSeconds],
          [
            'close after order settled (s, real-time eq.) p50/p90/max',
            undefined,
            `${u.lagAfterSettleSeconds.p50} / ${u.lagAfterSettleSeconds.p90} / ${u.lagAfterSettleSeconds.max}`,
          ],
        ],
      ),
      table(
        'recovery-storm: bookings',
        [
          'outcomes',
          'unresolved',
          'Book calls',
          'sandbox orders',
          'duplicate orders',
          'Book arrivals spread (s)',
          'answers released together',
        ],
        [
          [
            Object.entries(outcomes)
              .map(([kind, c]) => `${kind} ${c}`)
              .join(', '),
            running,
            bookCalls.length,
            orders.length,
            figures.duplicateOrders,
            figures.bookSpreadSeconds,
            figures.booksReleasedTogether,
          ],
        ],
      ),
    ];
    const spreadShare = releasedAt === undefined ? figures.bookSpreadSeconds / figures.window.seconds : 0;
    const notes = [
      `Targets: ≤ 500 QueryOrders requests in the first 10 minutes and 0 × 429 → ${figures.targets.met ? 'met' : 'missed'}.`,
      ...(spreadShare > 0.1
        ? [
            `The Books did not end at once: they spread over ${figures.bookSpreadSeconds} s, ${Math.round(spreadShare * 100)} % of the window ` +
              '(starting bookings is limited by how fast this machine runs them). Polls that would coincide in a real storm are spread out, ' +
              'so fewer share a QueryOrders request than would; a smaller --time-scale makes the spread small against the window.',
          ]
        : []),
      (releasedAt !== undefined
        ? `The ${figures.booksReleasedTogether} Book answers (504 after the order was made) were held and released together; the window starts then. ` +
          `To hold them, the worker had ${tuning.maxConcurrentActivityTaskExecutions} activity slots and ${maxConnections} supplier connections (defaults + N).`
        : 'The window starts at the first Book the sandbox received.') +
        ` Peak requests/s is the busiest wall-clock second as run${k !== 1 ? ` (compressed ${k}×, so not comparable with the ${options.qps}/s limit of a real-time run)` : ''}.`,
      ...(k !== 1
        ? [
            `Time-scaled run (K=${k}): schedule and settle delays divided by ${k}; QueryOrders retry backoff (1 s … 30 s) and the ${options.qps}/s limit are not, so 429s here are an upper bound for the real-time run.`,
          ]
        : []),
      options.sandboxAsIs
        ? 'Sandbox as is: its QueryOrders cost grows with every stored order (see bench/sandbox-process.ts).'
        : "Sandbox QueryOrders views memoized (bench/sandbox-process.ts): same answers, without the test double's per-order cost.",
    ];
    return { figures, tables, notes };
  } finally {
    await stack.stop();
  }
}
