/**
 * Benchmarks of the booking orchestrator, each on its own stack (dev server, sandbox supplier,
 * worker) on free ports, torn down at the end:
 *
 *   npm run bench -- overhead        [--n 300] [--warmup 20]
 *   npm run bench -- throughput      [--n 2000] [--concurrency 50] [--warmup 100] [--tuning] [--eager] [--no-floor]
 *                                    [--worker inline|child] [--one-stack]
 *   npm run bench -- recovery-storm  [--n 1000] [--time-scale 1] [--qps 50] [--concurrency 50] [--barrier on|off]
 *   npm run bench -- parked          [--steps 1000,5000,10000 | --n N] [--worker child|inline] [--max-cached N]
 *                                    [--workflow booking|floor] [--concurrency 50]
 *   npm run bench -- compare         [--overhead-n 150] [--overhead-warmup 10] [--throughput-n 800]
 *                                    [--throughput-warmup 50] [--concurrency 50] [--one-stack]
 *     runs overhead and throughput (with its floor) back to back, smaller, and prints the two ratios issue 25
 *     is judged on: booking / floor for p50 start-to-outcome latency and for CPU per booking, plus floor / direct
 *   npm run bench -- sustained       [--minutes 10] [--load 0.8] [--capacity N] [--capacity-n 600] [--warmup 50]
 *                                    [--concurrency 50] [--worker inline|child]   (--engine prod by default)
 *     capacity first (throughput's closed loop, or --capacity), then bookings started on a timer at load × capacity
 *     per second for the minutes given: p50/p99 start-to-outcome overall and per minute, CPU and PostgreSQL writes
 *     per booking, nothing lost
 *   npm run bench -- accounts        [--n 200] [--concurrency 10] [--warmup 10] [--stuck 40] [--outage 429|stop]
 *                                    [--outage-seconds 90] [--recover-timeout-seconds 300]
 *     two supplier accounts in one worker (an accounts file): alpha alone, both up, alpha while beta is down with
 *     bookings on beta waiting, then beta back: each account's p50/p99 and bookings/s side by side, how long beta's
 *     bookings take to recover, one order per reference (dev engine; --encrypt, --engine do not apply)
 *
 * (`npm run bench` is `ts-node --transpile-only bench/main.ts`.) Flags every benchmark takes:
 *   --results-dir DIR   where <name>.json goes (default bench/results)
 *   --db memory|file    the dev server's SQLite: in memory (default) or a temp file as `npm start` uses
 *   --encrypt           payload encryption on (src/servers/codec), as production runs it
 *   --server-config K=V dev server dynamic config, repeatable (see `serverConfig` in bench/config.ts)
 *   --engine dev|prod   the CLI dev server (default) or the production topology: PostgreSQL and two Temporal
 *                       nodes (dev/prod); its results are written as <name>-prod.json
 *   --shards N          prod: the cluster's history shard count (default infra/temporal-server.env)
 *   --bundle FILE       a prebuilt workflow bundle instead of bundling for the run
 *   --sandbox-as-is     without the bench's QueryOrders memo (see bench/sandbox-process.ts)
 *   --preload on|off    bundles built for the run preload the shipped stateless modules (src/workflow-bundle.ts;
 *                       default on) or none
 * The worker child (--worker child, parked's default) runs with the product's Node flags (src/runtime/config/node-flags.ts);
 * BENCH_WORKER_NODE_FLAGS="..." runs it with others ("" for none).
 * Each run prints its tables and writes the JSON with the figures, the options and the machine.
 * Nothing is asserted about speed. "floor" is bench/floor-workflow.ts: the same supplier calls with
 * none of the booking workflow's code, i.e. what Temporal itself costs on this stack.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { accounts, AccountsOptions } from './accounts';
import { compare, CompareOptions } from './compare';
import { overhead, OverheadOptions } from './overhead';
import { parked, ParkedOptions } from './parked';
import { recoveryStorm, RecoveryStormOptions } from './recovery-storm';
import {
  collectSetup,
  DEFAULT_RESULTS_DIR,
  writeResult,
  type BenchContext,
  type BenchmarkResult,
  type BenchOutput,
} from './report';
import { stopAllStacks } from './stack';
import { sustained, SustainedOptions } from './sustained';
import { TEMPORAL_VERSIONS } from '../dev/temporal/binaries';
import { throughput, ThroughputOptions } from './throughput';

const BENCHMARKS = {
  overhead: { schema: OverheadOptions, run: overhead },
  throughput: { schema: ThroughputOptions, run: throughput },
  'recovery-storm': { schema: RecoveryStormOptions, run: recoveryStorm },
  parked: { schema: ParkedOptions, run: parked },
  compare: { schema: CompareOptions, run: compare },
  sustained: { schema: SustainedOptions, run: sustained },
  accounts: { schema: AccountsOptions, run: accounts },
} as const;

export type BenchmarkName = keyof typeof BENCHMARKS;
export const BENCHMARK_NAMES = Object.keys(BENCHMARKS) as BenchmarkName[];

export interface RunOptions {
  /** Where `<name>.json` goes; bench/results by default. */
  resultsDir?: string;
  /** Receives the printed tables and notes; console.log by default. */
  print?: (text: string) => void;
  /** Receives progress lines; stderr by default. */
  progress?: (message: string) => void;
}

/** Runs one benchmark with its options (validated by its schema), prints it and writes its JSON. */
export async function runBenchmark(
  name: BenchmarkName,
  options: Record<string, unknown> = {},
  run: RunOptions = {},
): Promise<{ result: BenchmarkResult<unknown, unknown>; file: string }> {
  const bench = BENCHMARKS[name];
  if (!bench) throw new Error(`Unknown benchmark "${name}"; one of: ${BENCHMARK_NAMES.join(', ')}`);
  const parsed = bench.schema.strict().parse(options);
  const print = run.print ?? ((text: string) => console.log(text));
  const ctx: BenchContext = { progress: run.progress ?? ((m) => process.stderr.write(`[bench] ${m}\n`)) };
  const setup = collectSetup();
  const startedAt = new Date();
  const t0 = Date.now();
  // Each entry's run takes its own option type; the schema above has produced exactly that.
  const output = (await (bench.run as (o: unknown, c: BenchContext) => Promise<BenchOutput<unknown>>)(
    parsed,
    ctx,
  )) as BenchOutput<unknown>;
  const result: BenchmarkResult<unknown, unknown> = {
    benchmark: name,
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - t0) / 100) / 10,
    loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100),
    setup,
    options: parsed,
    figures: output.figures,
    tables: output.tables,
    notes: output.notes,
  };
  const file = writeResult(result, run.resultsDir ?? DEFAULT_RESULTS_DIR);
  print(
    [
      ...output.tables.flatMap((t) => [t, '']),
      ...output.notes.map((n) => `* ${n}`),
      `* options: ${JSON.stringify(parsed)}`,
      `* ${setup.cores} cores (${setup.cpuModel}), load ${setup.loadAverageAtStart.join('/')} at start, ` +
        `${result.loadAverageAtEnd.join('/')} at end; Node ${setup.node}; ` +
        `@temporalio/worker ${setup.temporalSdk['@temporalio/worker']}; ` +
        ((parsed as { engine?: string }).engine === 'prod'
          ? `engine prod: temporal-server ${TEMPORAL_VERSIONS.server}, 2 nodes, PostgreSQL ${TEMPORAL_VERSIONS.postgres}`
          : `engine dev: ${setup.temporalCli}`),
      `* ${result.durationSeconds} s; written to ${file}`,
    ].join('\n'),
  );
  return { result, file };
}

/** Command-line flags to benchmark options: kebab-case to camelCase, numbers and lists parsed. */
export function optionsFromArgs(args: string[]): {
  name: BenchmarkName;
  options: Record<string, unknown>;
  resultsDir?: string;
} {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      n: { type: 'string' },
      warmup: { type: 'string' },
      concurrency: { type: 'string' },
      tuning: { type: 'boolean' },
      eager: { type: 'boolean' },
      floor: { type: 'boolean' },
      'no-floor': { type: 'boolean' },
      'one-stack': { type: 'boolean' },
      barrier: { type: 'string' },
      workflow: { type: 'string' },
      worker: { type: 'string' },
      'time-scale': { type: 'string' },
      qps: { type: 'string' },
      steps: { type: 'string' },
      'max-cached': { type: 'string' },
      'results-dir': { type: 'string' },
      bundle: { type: 'string' },
      'sandbox-as-is': { type: 'boolean' },
      encrypt: { type: 'boolean' },
      db: { type: 'string' },
      'server-config': { type: 'string', multiple: true },
      engine: { type: 'string' },
      shards: { type: 'string' },
      preload: { type: 'string' },
      'overhead-n': { type: 'string' },
      'overhead-warmup': { type: 'string' },
      'throughput-n': { type: 'string' },
      'throughput-warmup': { type: 'string' },
      minutes: { type: 'string' },
      load: { type: 'string' },
      capacity: { type: 'string' },
      'capacity-n': { type: 'string' },
      stuck: { type: 'string' },
      outage: { type: 'string' },
      'outage-seconds': { type: 'string' },
      'recover-timeout-seconds': { type: 'string' },
    },
  });
  const name = positionals[0] as BenchmarkName | undefined;
  if (!name || !(name in BENCHMARKS) || positionals.length > 1) {
    throw new Error(`Usage: bench/main.ts <${BENCHMARK_NAMES.join('|')}> [flags]; see the top of bench/main.ts`);
  }
  const options: Record<string, unknown> = {};
  const num = (v: string, flag: string) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`--${flag}: not a number: ${v}`);
    return n;
  };
  for (const [flag, value] of Object.entries(values)) {
    if (value === undefined || flag === 'results-dir') continue;
    if (flag === 'no-floor') {
      options.floor = !value;
      continue;
    }
    const key = flag === 'bundle' ? 'bundlePath' : flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (typeof value === 'boolean') options[key] = value;
    else if (Array.isArray(value)) options[key] = Object.fromEntries(value.map((kv) => keyValue(kv, flag)));
    else if (flag === 'steps') options[key] = value.split(',').map((s) => num(s.trim(), flag));
    else if (['worker', 'workflow', 'bundle', 'db', 'barrier', 'engine', 'preload', 'outage'].includes(flag))
      options[key] = value;
    else options[key] = num(value, flag);
  }
  return { name, options, ...(values['results-dir'] ? { resultsDir: values['results-dir'] } : {}) };
}

function keyValue(text: string, flag: string): [string, string] {
  const i = text.indexOf('=');
  if (i <= 0) throw new Error(`--${flag}: expected KEY=VALUE, got ${text}`);
  return [text.slice(0, i), text.slice(i + 1)];
}

async function main(): Promise<void> {
  const { name, options, resultsDir } = optionsFromArgs(process.argv.slice(2));
  // Ctrl-C or a kill still takes the dev server and the children down.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`[bench] ${signal}: stopping\n`);
      void stopAllStacks().finally(() => process.exit(130));
    });
  }
  await runBenchmark(name, options, { resultsDir });
}

if (require.main === module) {
  main().then(
    // The SDK's native runtime can keep the event loop alive after everything is closed.
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      // The SDK's errors carry the server's answer as their cause (e.g. a gRPC status).
      if (err instanceof Error && err.cause) console.error('caused by:', err.cause);
      void stopAllStacks().finally(() => process.exit(1));
    },
  );
}
