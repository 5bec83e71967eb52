/**
 * accounts: two supplier accounts in one worker (SUPPLIER_ACCOUNTS_FILE), one of them down for a while.
 *
 * One dev server, two sandbox suppliers (alpha in its child process as every benchmark's, beta in this process so it
 * can be closed and started again on its port), and one worker built by createWorkerFromConfig from an accounts
 * file naming both, as an operator runs it. Bookings name their account in `supplier`. Phases, one after the other:
 *  1. alpha alone: n bookings on alpha, closed loop with `concurrency` in flight;
 *  2. both up: n on alpha and n on beta at once, each its own closed loop;
 *  3. beta down: beta answers 429 to everything (`--outage 429`, its rate limits set near zero) or is closed
 *     (`--outage stop`: connection refused); `stuck` bookings on beta are started and wait, and n bookings on alpha
 *     run as in phase 1. Beta stays down for at least `outageSeconds`, however soon alpha's loop ends;
 *  4. beta returns: how long its stuck bookings take to reach an outcome, and what outcome.
 * Latency is start to outcome as the caller sees it (startBooking, then awaitOutcome). At the end every reference
 * must have at most one order at its supplier and none at the other. Nothing is asserted about speed.
 *
 * A booking's first CheckAvail is a local activity on the main queue with 8 attempts (backoff 1 s doubling to 1 min,
 * about 2 minutes in all, src/workflows/booking/proxies.ts): a beta booking that sees beta down for longer than that
 * ends `failed` before it books (nothing was sent past CheckAvail), which this benchmark reports rather than hides.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { awaitOutcome, startBooking } from '../src/api/client/index';
import { loadConfig } from '../src/runtime/config/index';
import { createWorkerFromConfig, type ConfiguredWorker } from '../src/worker';
import { SANDBOX_PROFILE, startSandbox, type Sandbox, type SandboxOrderView } from '../dev/sandbox/server';
import { bookingRequest } from '../test/harness/booking';
import { projectTuning, type WorkerTuning } from './config';
import { forEachConcurrently, nowMs, percentiles, round, roundPercentiles, sleep, type Percentiles } from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import { startStack, UNLIMITED } from './stack';
import { duplicateOrders, terminateBookings } from './workload';

export const AccountsOptions = z.object({
  /** Bookings per loop (alpha alone, each account in "both up", alpha while beta is down). */
  n: z.number().int().positive().default(200),
  /** Bookings in flight per loop. */
  concurrency: z.number().int().positive().default(10),
  /** Bookings on each account before the measured phases (bundles loaded, tokens fetched, pools open). */
  warmup: z.number().int().nonnegative().default(10),
  /** Bookings started on beta while it is down. */
  stuck: z.number().int().nonnegative().default(40),
  /** How beta is down: answering 429 to every operation, or closed (connection refused). */
  outage: z.enum(['429', 'stop']).default('429'),
  /** Beta stays down at least this long (and at least as long as alpha's loop in that phase). */
  outageSeconds: z.number().positive().default(90),
  /** How long beta's stuck bookings may take after it returns before they are counted unresolved. */
  recoverTimeoutSeconds: z.number().positive().default(300),
  /** The dev server's SQLite: in memory (default) or a temp file. */
  db: z.enum(['file', 'memory']).default('memory'),
  bundlePath: z.string().optional(),
  preload: z.enum(['on', 'off']).default('on'),
  serverConfig: z.record(z.string(), z.string()).default({}),
});
export type AccountsOptions = z.input<typeof AccountsOptions>;

const ALPHA = 'alpha';
const BETA = 'beta';

/** One closed loop of bookings on one account. */
export interface LoopFigures {
  account: string;
  n: number;
  concurrency: number;
  wallSeconds: number;
  /** n over the time from the first start to the last outcome. */
  bookingsPerSecond: number;
  latencyMs: Percentiles;
  outcomes: Record<string, number>;
  /** The main queue worker's most workflow activations and local activities in flight at once (sampled every 100 ms). */
  peakInFlight: { workflowActivations: number; localActivities: number };
  /** By when each booking started, in 2-second windows from the loop's start: where in the loop time went. */
  windows: Array<{ fromSecond: number; count: number; p50: number; p99: number }>;
}

export interface AccountsFigures {
  tuning: WorkerTuning;
  alphaAlone: LoopFigures;
  bothUp: { alpha: LoopFigures; beta: LoopFigures };
  betaDown: {
    outage: '429' | 'stop';
    alpha: LoopFigures;
    /** From beta going down to it coming back. */
    outageSeconds: number;
    /** Requests beta refused while down (429s; 0 when closed: those never reach it). */
    betaRefused: number;
  };
  betaReturns: {
    stuck: number;
    outcomes: Record<string, number>;
    /** Stuck bookings that reached an outcome before beta returned (CheckAvail's retries used up: failed). */
    endedWhileDown: number;
    /** From beta's return to the outcome of each stuck booking still waiting then. */
    recoverMs: Percentiles;
    /** Start to outcome of the stuck bookings, outage included. */
    latencyMs: Percentiles;
    unresolved: number;
  };
  /** alpha's p50 and throughput while beta is down, over alpha alone (1: no effect). */
  alphaWhileBetaDown: { p50Ratio: number; p99Ratio: number; throughputRatio: number };
  orders: { alpha: number; beta: number; duplicates: number; atBothSuppliers: number; confirmedWithoutOrder: number };
}

export async function accounts(raw: AccountsOptions, ctx: BenchContext): Promise<BenchOutput<AccountsFigures>> {
  const options = AccountsOptions.parse(raw);
  const stack = await startStack({
    name: 'accounts',
    db: options.db,
    ...(options.bundlePath ? { bundlePath: options.bundlePath } : {}),
    preload: options.preload === 'on',
    dynamicConfig: options.serverConfig,
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-accounts-'));
  // Beta keeps its token key across a restart (--outage stop), so the worker's cached ticket still holds.
  const betaOptions = {
    port: 0 as number,
    confirmAfterMs: 0,
    rateLimits: UNLIMITED,
    jwtSecret: randomBytes(32).toString('hex'),
  };
  let beta: Sandbox | undefined = await startSandbox(betaOptions);
  let configured: ConfiguredWorker | undefined;
  let running: Promise<void> | undefined;
  try {
    const config = loadConfig({
      TEMPORAL_ADDRESS: stack.address,
      SUPPLIER_ACCOUNTS_FILE: writeAccountsFile(dir, stack.sandbox.url, beta.url),
      BOOKING_TASK_QUEUE: `bench-accounts-${randomUUID().slice(0, 8)}`,
      RECONCILIATION_SCHEDULE: 'off',
      RECOVERY_TESTING: 'on',
    });
    const taskQueue = config.taskQueue;
    configured = await createWorkerFromConfig(stack.connection, config, {
      workflowBundle: { codePath: stack.bundlePath },
    });
    running = configured.worker.run();
    const { client } = stack.createClient(false);

    const book = async (
      supplier: string,
      request = bookingRequest({ supplier, test: 'confirmAfterMs=0' }),
    ): Promise<{ ms: number; startedAt: number; doneAt: number; kind: string; ref: string }> => {
      const t0 = nowMs();
      await startBooking(client, request, { taskQueue });
      const kind = (await awaitOutcome(client, request.customerReferenceNo)).kind;
      const doneAt = nowMs();
      return { ms: doneAt - t0, startedAt: t0, doneAt, kind, ref: request.customerReferenceNo };
    };
    const confirmed: Array<{ ref: string; supplier: string }> = [];
    const loop = async (supplier: string): Promise<LoopFigures> => {
      const latencies: number[] = [];
      const byWindow = new Map<number, number[]>();
      const outcomes: Record<string, number> = {};
      const peakInFlight = { workflowActivations: 0, localActivities: 0 };
      const sampler = setInterval(() => {
        const status = configured!.worker.main.getStatus();
        peakInFlight.workflowActivations = Math.max(
          peakInFlight.workflowActivations,
          status.numInFlightWorkflowActivations,
        );
        peakInFlight.localActivities = Math.max(peakInFlight.localActivities, status.numInFlightLocalActivities);
      }, 100);
      const t0 = nowMs();
      await forEachConcurrently(options.n, options.concurrency, async () => {
        const r = await book(supplier);
        latencies.push(r.ms);
        const window = Math.floor((r.startedAt - t0) / 2_000) * 2;
        byWindow.set(window, [...(byWindow.get(window) ?? []), r.ms]);
        outcomes[r.kind] = (outcomes[r.kind] ?? 0) + 1;
        if (r.kind === 'confirmed') confirmed.push({ ref: r.ref, supplier });
      });
      const wallMs = nowMs() - t0;
      clearInterval(sampler);
      return {
        account: supplier,
        n: options.n,
        concurrency: options.concurrency,
        wallSeconds: round(wallMs / 1000, 2),
        bookingsPerSecond: round((options.n * 1000) / wallMs, 2),
        latencyMs: roundPercentiles(percentiles(latencies), 1),
        outcomes,
        peakInFlight,
        windows: [...byWindow]
          .sort(([a], [b]) => a - b)
          .map(([fromSecond, ms]) => {
            const p = percentiles(ms);
            return { fromSecond, count: p.count, p50: round(p.p50, 1), p99: round(p.p99, 1) };
          }),
      };
    };

    ctx.progress(`accounts: warm-up, ${options.warmup} bookings on each account`);
    for (const supplier of [ALPHA, BETA]) {
      await forEachConcurrently(options.warmup, options.concurrency, async () => void (await book(supplier)));
    }

    ctx.progress(`accounts: phase 1, ${options.n} bookings on alpha alone`);
    const alphaAlone = await loop(ALPHA);
    ctx.progress(`accounts: phase 2, ${options.n} on alpha and ${options.n} on beta at once`);
    const [bothAlpha, bothBeta] = await Promise.all([loop(ALPHA), loop(BETA)]);

    ctx.progress(`accounts: phase 3, beta down (${options.outage}); ${options.stuck} bookings on beta wait`);
    const betaOrdersBefore: SandboxOrderView[] = [];
    const refusedBefore = beta.stats().rateLimited;
    const downAt = nowMs();
    if (options.outage === '429') {
      // Tokens refill at this rate, never reaching one: every CheckAvail, Book, QueryOrders and Cancel answers 429.
      beta.configure({ rateLimits: { overall: 1e-9, checkAvail: 1e-9, book: 1e-9, queryOrders: 1e-9 } });
    } else {
      betaOrdersBefore.push(...beta.orders());
      betaOptions.port = beta.port;
      await beta.close();
      beta = undefined;
    }
    let returnedAt = Infinity;
    const stuckRequests = Array.from({ length: options.stuck }, () =>
      bookingRequest({ supplier: BETA, test: 'confirmAfterMs=0' }),
    );
    const stuck = stuckRequests.map(async (request) => {
      const r = await book(BETA, request).catch((err: unknown) => ({
        ms: NaN,
        startedAt: NaN,
        doneAt: nowMs(),
        kind: `error: ${err instanceof Error ? err.name : String(err)}`,
        ref: request.customerReferenceNo,
      }));
      if (r.kind === 'confirmed') confirmed.push({ ref: r.ref, supplier: BETA });
      return { ...r, afterReturnMs: r.doneAt - returnedAt };
    });
    const alphaDown = await loop(ALPHA);
    const rest = options.outageSeconds * 1000 - (nowMs() - downAt);
    if (rest > 0) await sleep(rest);
    const betaRefused = options.outage === '429' ? beta!.stats().rateLimited - refusedBefore : 0;

    ctx.progress('accounts: phase 4, beta returns');
    if (options.outage === '429') beta!.configure({ rateLimits: UNLIMITED });
    else beta = await startSandbox(betaOptions);
    returnedAt = nowMs();
    const outageSeconds = round((returnedAt - downAt) / 1000, 1);
    const settled = await Promise.race([
      Promise.all(stuck),
      sleep(options.recoverTimeoutSeconds * 1000).then(() => undefined),
    ]);
    const results = settled ?? [];
    const unresolved = options.stuck - results.length;
    const stuckOutcomes: Record<string, number> = {};
    for (const r of results) stuckOutcomes[r.kind] = (stuckOutcomes[r.kind] ?? 0) + 1;

    const alphaOrders = await stack.sandbox.orders();
    const betaOrders = [...betaOrdersBefore, ...(beta?.orders() ?? [])];
    const alphaRefs = new Set(alphaOrders.map((o) => o.customerReferenceNo));
    const betaRefs = new Set(betaOrders.map((o) => o.customerReferenceNo));
    const orders = {
      alpha: alphaOrders.length,
      beta: betaOrders.length,
      duplicates: duplicateOrders(alphaOrders).length + duplicateOrders(betaOrders).length,
      atBothSuppliers: [...alphaRefs].filter((ref) => betaRefs.has(ref)).length,
      confirmedWithoutOrder: confirmed.filter(
        ({ ref, supplier }) => !(supplier === ALPHA ? alphaRefs : betaRefs).has(ref),
      ).length,
    };
    // Left running after the wait: reported as unresolved, and terminated so the stack stops cleanly.
    if (!settled) {
      await terminateBookings(
        client,
        stuckRequests.map((r) => r.customerReferenceNo),
        'accounts benchmark: recovery wait over',
      );
    }

    const figures: AccountsFigures = {
      tuning: projectTuning(),
      alphaAlone,
      bothUp: { alpha: bothAlpha, beta: bothBeta },
      betaDown: { outage: options.outage, alpha: alphaDown, outageSeconds, betaRefused },
      betaReturns: {
        stuck: options.stuck,
        outcomes: stuckOutcomes,
        endedWhileDown: results.filter((r) => r.doneAt < returnedAt).length,
        recoverMs: roundPercentiles(
          percentiles(results.filter((r) => r.doneAt >= returnedAt).map((r) => r.afterReturnMs)),
          0,
        ),
        latencyMs: roundPercentiles(percentiles(results.map((r) => r.ms).filter(Number.isFinite)), 0),
        unresolved,
      },
      alphaWhileBetaDown: {
        p50Ratio: round(alphaDown.latencyMs.p50 / alphaAlone.latencyMs.p50, 2),
        p99Ratio: round(alphaDown.latencyMs.p99 / alphaAlone.latencyMs.p99, 2),
        throughputRatio: round(alphaDown.bookingsPerSecond / alphaAlone.bookingsPerSecond, 2),
      },
      orders,
    };
    return { figures, tables: tablesOf(figures), notes: notesOf(figures) };
  } finally {
    if (configured) {
      configured.worker.shutdown();
      await running?.catch(() => undefined);
      await configured.closeSupplier();
    }
    await beta?.close();
    rmSync(dir, { recursive: true, force: true });
    await stack.stop();
  }
}

/** Both accounts open to every partner, alpha first (the default); the sandbox's credentials; limits out of the way. */
function writeAccountsFile(dir: string, alphaUrl: string, betaUrl: string): string {
  writeFileSync(path.join(dir, 'app-key'), 'sandbox-app\n');
  writeFileSync(path.join(dir, 'app-secret'), 'sandbox-secret\n');
  const credentials = { appKeyFile: 'app-key', appSecretFile: 'app-secret' };
  const profile = { ...SANDBOX_PROFILE, rateLimits: UNLIMITED };
  const file = path.join(dir, 'accounts.json');
  writeFileSync(
    file,
    JSON.stringify({
      accounts: [
        { id: ALPHA, baseUrl: alphaUrl, credentials, profile, partners: ['*'] },
        { id: BETA, baseUrl: betaUrl, credentials, profile, partners: ['*'] },
      ],
    }),
  );
  return file;
}

function tablesOf(f: AccountsFigures): string[] {
  const row = (phase: string, l: LoopFigures): (string | number)[] => [
    phase,
    l.account,
    l.n,
    l.latencyMs.p50,
    l.latencyMs.p90,
    l.latencyMs.p99,
    l.bookingsPerSecond,
    Object.entries(l.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
    `${l.peakInFlight.workflowActivations} / ${l.peakInFlight.localActivities}`,
  ];
  const r = f.betaReturns;
  return [
    table(
      'Start to outcome per account (ms), closed loops',
      ['phase', 'account', 'n', 'p50', 'p90', 'p99', 'bookings/s', 'outcomes', 'peak WFT / LA in flight'],
      [
        row('1 alpha alone', f.alphaAlone),
        row('2 both up', f.bothUp.alpha),
        row('2 both up', f.bothUp.beta),
        row(`3 beta down (${f.betaDown.outage})`, f.betaDown.alpha),
      ],
    ),
    table(
      `Beta's bookings started while it was down (${f.betaDown.outageSeconds} s down, ${f.betaDown.betaRefused} requests refused)`,
      [
        'stuck',
        'outcomes',
        'ended while down',
        'unresolved',
        'recover p50 ms',
        'recover max ms',
        'start to outcome p50 ms',
      ],
      [
        [
          r.stuck,
          Object.entries(r.outcomes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
          r.endedWhileDown,
          r.unresolved,
          r.recoverMs.p50,
          r.recoverMs.max,
          r.latencyMs.p50,
        ],
      ],
    ),
    windowTable(f),
    table(
      'Orders at the suppliers',
      ['alpha', 'beta', 'references with 2+ orders', 'at both suppliers', 'confirmed without an order'],
      [[f.orders.alpha, f.orders.beta, f.orders.duplicates, f.orders.atBothSuppliers, f.orders.confirmedWithoutOrder]],
    ),
  ];
}

/** alpha's loops side by side, 2 s window by window: a slowdown at the outage's start shows in its first columns. */
function windowTable(f: AccountsFigures): string {
  const loops: Array<[string, LoopFigures]> = [
    ['1 alpha alone', f.alphaAlone],
    ['2 both up', f.bothUp.alpha],
    [`3 beta down (${f.betaDown.outage})`, f.betaDown.alpha],
  ];
  const starts = [...new Set(loops.flatMap(([, l]) => l.windows.map((w) => w.fromSecond)))].sort((a, b) => a - b);
  return table(
    "alpha's bookings by when they started (2 s windows from the loop's start): p50 / p99 ms (count)",
    ['phase', ...starts.map((s) => `${s}-${s + 2} s`)],
    loops.map(([label, l]) => [
      label,
      ...starts.map((from) => {
        const w = l.windows.find((x) => x.fromSecond === from);
        return w ? `${w.p50} / ${w.p99} (${w.count})` : '';
      }),
    ]),
  );
}

function notesOf(f: AccountsFigures): string[] {
  const a = f.alphaWhileBetaDown;
  return [
    `alpha while beta is down, over alpha alone: p50 ×${a.p50Ratio}, p99 ×${a.p99Ratio}, throughput ×${a.throughputRatio}`,
    "recover: from beta answering again to each stuck booking's outcome (the next CheckAvail retry or Book resend is " +
      'on its own backoff, up to 1 minute)',
    "latency: the caller's start to outcome (startBooking, awaitOutcome), the worker in this process; " +
      `tuning ${JSON.stringify(f.tuning)}`,
  ];
}
