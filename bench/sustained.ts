/**
 * sustained: the stack under a steady load for minutes, below its capacity (issue 25).
 *
 * 1. Capacity: throughput's closed loop (bench/throughput.ts: `concurrency` in flight, the steady window between the
 *    10 % and 90 % completions) on this benchmark's own stack and worker, after a warm-up; or `--capacity N`.
 * 2. Then, on the same stack, an open loop: bookings (`confirmAfterMs=0` against the sandbox) are started on a timer at
 *    load × capacity per second for `minutes`, whatever the earlier ones are doing; each awaits its outcome.
 *    A booking's latency runs from the moment it was due to start to its outcome, so a late start (the bench
 *    process itself behind) counts against the stack rather than vanishing; the start lag is reported apart.
 * 3. Figures: started/completed, p50/p90/p99/max overall and per minute of start (drift), CPU per completed
 *    booking of every process of the stack (Temporal nodes, PostgreSQL and its backends, the sandbox, this
 *    process with the worker and the client; /proc as throughput reads it) from the first start to the last
 *    outcome, PostgreSQL's writes per completed booking (pg_stat_database deltas over the Temporal databases,
 *    prod engine only), and "nothing lost": every started booking reached an outcome, none still runs, and the
 *    sandbox holds exactly one order per reference.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { awaitOutcome, startBooking } from '../src/api/client/index';
import { projectTuning, stackFlags, stackOptions } from './config';
import {
  cpuSnapshot,
  forEachConcurrently,
  nowMs,
  percentiles,
  round,
  roundPercentiles,
  sleep,
  steadyPerSecond,
  type Percentiles,
} from './measure';
import { table, type BenchContext, type BenchOutput } from './report';
import { startStack, type Stack } from './stack';
import { benchRequest, duplicateOrders, waitUntilNoneRunning } from './workload';

export const SustainedOptions = z.object({
  /** How long bookings are started, in minutes (fractions allowed: the smoke test runs 0.1). */
  minutes: z.number().positive().default(10),
  /** The share of capacity started per second. */
  load: z.number().positive().max(2).default(0.8),
  /** Bookings/s taken as the capacity; measured first (throughput's closed loop) when absent. */
  capacity: z.number().positive().optional(),
  /** The capacity run: bookings measured, warm-up, in flight (closed loop). */
  capacityN: z.number().int().positive().default(600),
  capacityWarmup: z.number().int().nonnegative().default(50),
  concurrency: z.number().int().positive().default(50),
  /** Bookings before the open loop (closed loop, 10 in flight), not counted. */
  warmup: z.number().int().nonnegative().default(50),
  /** How long after the last start the run waits for outcomes before counting the rest as lost. */
  drainSeconds: z.number().positive().default(300),
  worker: z.enum(['inline', 'child']).default('inline'),
  ...stackFlags('memory'),
  /** This benchmark is about the production topology: prod unless told otherwise. */
  engine: z.enum(['dev', 'prod']).default('prod'),
});
export type SustainedOptions = z.input<typeof SustainedOptions>;

export interface PgWrites {
  databases: string[];
  xactCommit: number;
  tupInserted: number;
  tupUpdated: number;
  tupDeleted: number;
  walBytes: number;
  perBooking: { xactCommit: number; tupleWrites: number; walKb: number };
}

export interface MinuteFigures {
  minute: number;
  started: number;
  completed: number;
  latencyMs: Percentiles;
}

export interface SustainedFigures {
  engine: 'dev' | 'prod';
  capacity: { bookingsPerSecond: number; measured: boolean; n?: number; concurrency?: number; p50Ms?: number };
  load: number;
  ratePerSecond: number;
  minutes: number;
  started: number;
  completed: number;
  /** Completed bookings per second from the first start to the last outcome. */
  achievedPerSecond: number;
  outcomes: Record<string, number>;
  startErrors: number;
  outcomeErrors: number;
  /** From the moment each booking was due to start to its outcome. */
  latencyMs: Percentiles;
  /** How late starts were against their schedule (the bench process's own lag). */
  startLagMs: Percentiles;
  perMinute: MinuteFigures[];
  cpu: {
    temporalSeconds: number;
    sandboxSeconds: number;
    benchProcessSeconds: number;
    workerChildSeconds?: number;
    wallSeconds: number;
    /** All processes' CPU seconds over the wall seconds: cores busy on average (of os.cpus().length). */
    coresBusy: number;
    totalMsPerBooking: number;
  };
  postgres?: PgWrites;
  nothingLost: {
    ok: boolean;
    /** Started bookings without an outcome at the end of the drain. */
    withoutOutcome: number;
    /** Bookings of this run's task queue still running, as visibility counts them. */
    stillRunning: number;
    /** Started references with no supplier order, and with more than one. */
    referencesWithoutOrder: number;
    duplicateOrders: number;
    sandboxOrders: number;
  };
  load1m: { before: number; after: number };
}

export async function sustained(raw: SustainedOptions, ctx: BenchContext): Promise<BenchOutput<SustainedFigures>> {
  const options = SustainedOptions.parse(raw);
  const stack = await startStack({ name: 'sustained', ...stackOptions(options) });
  try {
    const taskQueue = `bench-sustained-${randomUUID().slice(0, 8)}`;
    const worker = await stack.startWorker({ taskQueue, tuning: projectTuning(), placement: options.worker });
    const { client } = stack.createClient(false);
    const prod = options.engine === 'prod' ? prodCluster(stack) : undefined;

    const bookOne = async (ref?: (r: string) => void) => {
      const request = benchRequest('confirmAfterMs=0');
      ref?.(request.customerReferenceNo);
      await startBooking(client, request, { taskQueue });
      return (await awaitOutcome(client, request.customerReferenceNo)).kind;
    };
    const warmupRefs: string[] = [];
    ctx.progress(`sustained: warm-up ${options.warmup}`);
    await forEachConcurrently(options.warmup, 10, async () => void (await bookOne((r) => warmupRefs.push(r))));

    let capacity: SustainedFigures['capacity'];
    if (options.capacity !== undefined) {
      capacity = { bookingsPerSecond: options.capacity, measured: false };
    } else {
      // Throughput's closed loop and steady window (bench/throughput.ts), on this stack and worker.
      ctx.progress(`sustained: capacity, ${options.capacityN} bookings with ${options.concurrency} in flight`);
      await forEachConcurrently(options.capacityWarmup, options.concurrency, async () => {
        void (await bookOne((r) => warmupRefs.push(r)));
      });
      const doneAt: number[] = [];
      const latencies: number[] = [];
      await forEachConcurrently(options.capacityN, options.concurrency, async () => {
        const t = nowMs();
        const kind = await bookOne((r) => warmupRefs.push(r));
        if (kind !== 'confirmed') throw new Error(`capacity run: a booking ended ${kind}`);
        doneAt.push(nowMs());
        latencies.push(nowMs() - t);
      });
      capacity = {
        bookingsPerSecond: steadyPerSecond(doneAt),
        measured: true,
        n: options.capacityN,
        concurrency: options.concurrency,
        p50Ms: round(percentiles(latencies).p50, 1),
      };
      ctx.progress(`sustained: capacity ${capacity.bookingsPerSecond}/s (p50 ${capacity.p50Ms} ms)`);
    }
    const ratePerSecond = round(options.load * capacity.bookingsPerSecond, 3);
    if (!(ratePerSecond > 0)) throw new Error(`no rate: capacity ${capacity.bookingsPerSecond}/s`);
    const total = Math.max(1, Math.round(options.minutes * 60 * ratePerSecond));
    // The closed loop's tail drains before the open loop starts.
    await sleep(2_000);

    ctx.progress(
      `sustained: ${total} bookings at ${ratePerSecond}/s (${options.load} × ${capacity.bookingsPerSecond}/s) ` +
        `for ${options.minutes} min, open loop`,
    );
    const pg = prod?.postgres;
    const pgBefore = pg?.snapshot();
    const cpuBefore = cpuSnapshot(stack, worker.pid);
    const loadBefore = os.loadavg()[0]!;

    interface Booking {
      ref: string;
      dueMs: number;
      lagMs: number;
      latencyMs?: number;
      outcome?: string;
      error?: 'start' | 'outcome';
    }
    const bookings: Booking[] = [];
    const pending = new Set<Promise<void>>();
    const intervalMs = 1000 / ratePerSecond;
    const t0 = nowMs();
    let lastDoneAt = t0;
    let completed = 0;
    const launch = (i: number) => {
      const dueMs = i * intervalMs;
      const request = benchRequest('confirmAfterMs=0');
      const b: Booking = { ref: request.customerReferenceNo, dueMs, lagMs: nowMs() - t0 - dueMs };
      bookings.push(b);
      const p = (async () => {
        try {
          await startBooking(client, request, { taskQueue });
        } catch {
          b.error = 'start';
          return;
        }
        try {
          b.outcome = (await awaitOutcome(client, b.ref)).kind;
          const doneAt = nowMs();
          b.latencyMs = doneAt - t0 - dueMs;
          lastDoneAt = Math.max(lastDoneAt, doneAt);
          completed++;
        } catch {
          b.error = 'outcome';
        }
      })().finally(() => pending.delete(p));
      pending.add(p);
    };
    // Starts on the clock: each tick starts every booking that is due by now, then sleeps to the next.
    let next = 0;
    let lastProgress = t0;
    while (next < total) {
      const elapsed = nowMs() - t0;
      while (next < total && next * intervalMs <= elapsed) launch(next++);
      if (nowMs() - lastProgress >= 30_000) {
        lastProgress = nowMs();
        ctx.progress(`sustained: ${next}/${total} started, ${completed} done, ${pending.size} in flight`);
      }
      if (next < total) await sleep(Math.max(0, t0 + next * intervalMs - nowMs()));
    }
    ctx.progress(
      `sustained: all ${total} started; waiting for ${pending.size} outcomes (at most ${options.drainSeconds} s)`,
    );
    // The drain's deadline timer is cleared once every outcome is in: a pending timer would keep a test's process alive.
    let deadline: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      Promise.all([...pending]).then(() => true),
      new Promise<boolean>((resolve) => (deadline = setTimeout(() => resolve(false), options.drainSeconds * 1000))),
    ]).finally(() => clearTimeout(deadline));
    const endAt = drained ? lastDoneAt : nowMs();
    const cpuAfter = cpuSnapshot(stack, worker.pid);
    const loadAfter = os.loadavg()[0]!;
    // PostgreSQL's backends publish their counters when idle, at the latest ~10 s later (PGSTAT_IDLE_INTERVAL).
    if (pg) await sleep(11_000);
    const pgAfter = pg?.snapshot();

    // An outcome is answered a moment before its workflow closes: give the last ones that moment (a count every
    // 250 ms, at most 10 s) before calling any booking still running.
    const stillRunning = await waitUntilNoneRunning(client, taskQueue, 10_000);
    const orders = await stack.sandbox.orders();
    const ordersPerRef = new Map<string, number>();
    for (const o of orders) ordersPerRef.set(o.customerReferenceNo, (ordersPerRef.get(o.customerReferenceNo) ?? 0) + 1);
    const refs = [...warmupRefs, ...bookings.map((b) => b.ref)];
    const referencesWithoutOrder = refs.filter((r) => !ordersPerRef.has(r)).length;
    const duplicates = duplicateOrders(orders).length;

    const outcomes: Record<string, number> = {};
    for (const b of bookings) if (b.outcome) outcomes[b.outcome] = (outcomes[b.outcome] ?? 0) + 1;
    const done = bookings.filter((b) => b.latencyMs !== undefined);
    const wallSeconds = (endAt - t0) / 1000;
    const d = (k: keyof typeof cpuBefore) => round((cpuAfter[k] ?? NaN) - (cpuBefore[k] ?? NaN), 2);
    const cpu: SustainedFigures['cpu'] = {
      temporalSeconds: d('devServer'),
      sandboxSeconds: d('sandbox'),
      benchProcessSeconds: d('bench'),
      ...(worker.pid !== undefined ? { workerChildSeconds: d('worker') } : {}),
      wallSeconds: round(wallSeconds, 1),
      coresBusy: 0,
      totalMsPerBooking: 0,
    };
    const cpuSeconds =
      cpu.temporalSeconds + cpu.sandboxSeconds + cpu.benchProcessSeconds + (cpu.workerChildSeconds ?? 0);
    cpu.coresBusy = round(cpuSeconds / wallSeconds, 2);
    cpu.totalMsPerBooking = completed > 0 ? round((cpuSeconds * 1000) / completed, 1) : NaN;

    const perMinute: MinuteFigures[] = [];
    for (let m = 0; m * 60_000 < total * intervalMs; m++) {
      const inMinute = bookings.filter((b) => Math.floor(b.dueMs / 60_000) === m);
      const lat = inMinute.flatMap((b) => (b.latencyMs !== undefined ? [b.latencyMs] : []));
      perMinute.push({
        minute: m + 1,
        started: inMinute.length,
        completed: lat.length,
        latencyMs: roundPercentiles(percentiles(lat), 1),
      });
    }
    const withoutOutcome = bookings.filter((b) => b.outcome === undefined).length;
    const figures: SustainedFigures = {
      engine: options.engine,
      capacity,
      load: options.load,
      ratePerSecond,
      minutes: options.minutes,
      started: bookings.length,
      completed,
      achievedPerSecond: round(completed / wallSeconds, 2),
      outcomes,
      startErrors: bookings.filter((b) => b.error === 'start').length,
      outcomeErrors: bookings.filter((b) => b.error === 'outcome').length,
      latencyMs: roundPercentiles(percentiles(done.map((b) => b.latencyMs!)), 1),
      startLagMs: roundPercentiles(percentiles(bookings.map((b) => b.lagMs)), 1),
      perMinute,
      cpu,
      ...(pg && pgBefore && pgAfter ? { postgres: pgWrites(pg.databases, pgBefore, pgAfter, completed) } : {}),
      nothingLost: {
        ok:
          withoutOutcome === 0 &&
          stillRunning === 0 &&
          referencesWithoutOrder === 0 &&
          duplicates === 0 &&
          outcomes.confirmed === bookings.length,
        withoutOutcome,
        stillRunning,
        referencesWithoutOrder,
        duplicateOrders: duplicates,
        sandboxOrders: orders.length,
      },
      load1m: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
    };
    await worker.stop();
    return { figures, tables: tables(figures, options.worker), notes: notes(figures) };
  } finally {
    await stack.stop();
  }
}

interface PgSnapshot {
  xactCommit: number;
  tupInserted: number;
  tupUpdated: number;
  tupDeleted: number;
  walLsn: bigint;
}

/**
 * The prod engine's PostgreSQL, found through the first Temporal node: its command line names the data folder
 * (--root) whose config/node-N.yaml give the stores' address, user, password and database names. (The stack does
 * not hand its cluster out; this reads what the nodes themselves were given.) Its counters are read with psql.
 */
function prodCluster(stack: Stack): { postgres: { databases: string[]; snapshot(): PgSnapshot } } {
  const argv = readFileSync(`/proc/${stack.devServerPid}/cmdline`, 'utf8').split('\0');
  const at = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0 || !argv[i + 1]) throw new Error(`Temporal node ${stack.devServerPid}: no ${flag} on its command line`);
    return argv[i + 1]!;
  };
  const configDir = path.join(at('--root'), at('--config'));
  interface SqlStore {
    sql: { connectAddr: string; user: string; password: string; databaseName: string };
  }
  interface NodeConfig {
    persistence: { datastores: Record<string, SqlStore> };
  }
  // Every node is given the same stores: the first node's config is enough.
  const first = readdirSync(configDir).find((f) => /^node-\d+\.yaml$/.test(f));
  if (!first) throw new Error(`Temporal node ${stack.devServerPid}: no node-N.yaml in ${configDir}`);
  const config = parse(readFileSync(path.join(configDir, first), 'utf8')) as NodeConfig;
  const stores = Object.values(config.persistence.datastores).map((s) => s.sql);
  const { connectAddr, user, password } = stores[0]!;
  const [host, port] = connectAddr.split(':') as [string, string];
  const databases = [...new Set(stores.map((s) => s.databaseName))];
  const list = databases.map((d) => `'${d.replace(/'/g, "''")}'`).join(',');
  const sql =
    `select coalesce(sum(xact_commit),0), coalesce(sum(tup_inserted),0), coalesce(sum(tup_updated),0), ` +
    `coalesce(sum(tup_deleted),0), pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint ` +
    `from pg_stat_database where datname in (${list})`;
  return {
    postgres: {
      databases,
      snapshot() {
        const out = execFileSync('psql', ['-h', host, '-p', port, '-U', user, '-d', 'postgres', '-AtX', '-c', sql], {
          encoding: 'utf8',
          env: { ...process.env, PGPASSWORD: password },
        }).trim();
        const [xact, ins, upd, del, wal] = out.split('|');
        return {
          xactCommit: Number(xact),
          tupInserted: Number(ins),
          tupUpdated: Number(upd),
          tupDeleted: Number(del),
          walLsn: BigInt(wal!),
        };
      },
    },
  };
}

function pgWrites(databases: string[], before: PgSnapshot, after: PgSnapshot, completed: number): PgWrites {
  const xactCommit = after.xactCommit - before.xactCommit;
  const tupInserted = after.tupInserted - before.tupInserted;
  const tupUpdated = after.tupUpdated - before.tupUpdated;
  const tupDeleted = after.tupDeleted - before.tupDeleted;
  const walBytes = Number(after.walLsn - before.walLsn);
  const per = (v: number, digits = 1) => (completed > 0 ? round(v / completed, digits) : NaN);
  return {
    databases,
    xactCommit,
    tupInserted,
    tupUpdated,
    tupDeleted,
    walBytes,
    perBooking: {
      xactCommit: per(xactCommit),
      tupleWrites: per(tupInserted + tupUpdated + tupDeleted),
      walKb: per(walBytes / 1024),
    },
  };
}

function tables(f: SustainedFigures, worker: 'inline' | 'child'): string[] {
  const lat = (p: Percentiles) => [p.p50, p.p90, p.p99, p.max];
  return [
    table(
      `sustained (${f.engine} engine): ${f.ratePerSecond} bookings/s started for ${f.minutes} min, open loop ` +
        `(${f.load} × capacity ${f.capacity.bookingsPerSecond}/s${f.capacity.measured ? ', measured' : ', given'})`,
      ['', 'started', 'completed', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      [
        ['all', f.started, f.completed, ...lat(f.latencyMs)],
        ...f.perMinute.map((m) => [`minute ${m.minute}`, m.started, m.completed, ...lat(m.latencyMs)]),
      ],
    ),
    table(
      'sustained: CPU from the first start to the last outcome, and PostgreSQL writes',
      [
        f.engine === 'prod' ? 'Temporal nodes + PostgreSQL s' : 'dev server s',
        'sandbox s',
        worker === 'inline' ? 'bench process (worker + client) s' : 'bench process s',
        ...(f.cpu.workerChildSeconds !== undefined ? ['worker child s'] : []),
        'cores busy',
        'CPU ms/booking',
        'PG commits/booking',
        'PG tuple writes/booking',
        'WAL KB/booking',
      ],
      [
        [
          f.cpu.temporalSeconds,
          f.cpu.sandboxSeconds,
          f.cpu.benchProcessSeconds,
          ...(f.cpu.workerChildSeconds !== undefined ? [f.cpu.workerChildSeconds] : []),
          f.cpu.coresBusy,
          f.cpu.totalMsPerBooking,
          f.postgres?.perBooking.xactCommit,
          f.postgres?.perBooking.tupleWrites,
          f.postgres?.perBooking.walKb,
        ],
      ],
    ),
  ];
}

function notes(f: SustainedFigures): string[] {
  const n = f.nothingLost;
  return [
    `Nothing lost: ${n.ok ? 'yes' : 'NO'}: ${f.started} started, ${f.completed} with an outcome ` +
      `(${Object.entries(f.outcomes)
        .map(([k, c]) => `${k} ${c}`)
        .join(', ')}), ${n.withoutOutcome} without, ${n.stillRunning} still running, ` +
      `${n.referencesWithoutOrder} references without an order, ${n.duplicateOrders} with two or more ` +
      `(${n.sandboxOrders} orders in the sandbox, warm-up included); start errors ${f.startErrors}, outcome errors ${f.outcomeErrors}.`,
    `Achieved ${f.achievedPerSecond} completed/s against ${f.ratePerSecond}/s scheduled; start lag p99 ${f.startLagMs.p99} ms, max ${f.startLagMs.max} ms.`,
    'Latency runs from the moment a booking was due to start (its slot on the timer) to its outcome, so the bench falling behind counts too.',
    'CPU: the Temporal service (both nodes, the postmaster and its backends on the prod engine) and the sandbox from /proc, this process with process.cpuUsage(); per completed booking.',
    ...(f.postgres
      ? [
          `PostgreSQL: pg_stat_database of ${f.postgres.databases.join(', ')} (commits; tuples inserted + updated + deleted) and WAL bytes ` +
            '(pg_current_wal_lsn, the whole cluster), read 11 s after the last outcome so idle backends have published their counters.',
        ]
      : []),
    `Load average (1 min) ${f.load1m.before} before, ${f.load1m.after} after; ${f.cpu.coresBusy} of ${os.cpus().length} cores busy on average.`,
  ];
}
