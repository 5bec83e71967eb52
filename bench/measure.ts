/**
 * Small measuring tools the benchmarks share: percentiles, CPU and memory of other processes read
 * from /proc, free ports, bounded waiting, and a concurrency-limited loop.
 *
 * Everything that waits has a deadline, so a benchmark that goes wrong ends with an error instead of
 * hanging a terminal or a CI job.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { freePort } from '../dev/temporal/dev-server';

/** Milliseconds since an arbitrary origin, monotonic; for durations only. */
export const nowMs = (): number => performance.now();

export interface Percentiles {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles (no interpolation), so every figure is a value that was actually measured. */
export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { count: 0, min: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return {
    count: sorted.length,
    min: sorted[0]!,
    p50: rank(50),
    p90: rank(90),
    p99: rank(99),
    max: sorted[sorted.length - 1]!,
    mean: sorted.reduce((s, v) => s + v, 0) / sorted.length,
  };
}

export const round = (value: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** Clock ticks per second of /proc/<pid>/stat; 100 on every Linux build Node supports. */
const CLOCK_TICKS = 100;

/** User + system CPU seconds a process has used so far (Linux only), or undefined once it has exited. */
export function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return (utime + stime) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status), or undefined once it has exited. */
export function procRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** The pids of a process and of its direct children (PostgreSQL's backends under the postmaster). */
export function withChildren(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return [pid, ...children];
}

/** CPU seconds of this process, all threads included (the SDK's Rust core threads too). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

export function fileSizeMb(file: string): number {
  try {
    return statSync(file).size / (1024 * 1024);
  } catch {
    return 0;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value; throws with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight; rejects on the first failure. */
export async function forEachConcurrently(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < count) {
      const i = next++;
      try {
        await task(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
}

/** Requests per wall-clock second, from ISO timestamps: the highest count and the second it happened in. */
export function peakPerSecond(isoTimes: string[]): { peak: number; atSecond?: string } {
  const buckets = new Map<number, number>();
  for (const t of isoTimes) {
    const s = Math.floor(Date.parse(t) / 1000);
    buckets.set(s, (buckets.get(s) ?? 0) + 1);
  }
  let peak = 0;
  let at: number | undefined;
  for (const [s, n] of buckets) {
    if (n > peak) {
      peak = n;
      at = s;
    }
  }
  return { peak, ...(at !== undefined ? { atSecond: new Date(at * 1000).toISOString() } : {}) };
}

export function roundPercentiles(p: Percentiles, digits = 2): Percentiles {
  return {
    count: p.count,
    min: round(p.min, digits),
    p50: round(p.p50, digits),
    p90: round(p.p90, digits),
    p99: round(p.p99, digits),
    max: round(p.max, digits),
    mean: round(p.mean, digits),
  };
}

export { freePort };

/**
 * Completions per second over the steady window, between the 10 % and the 90 % completion, so start-up and the
 * tail stay out of the figure. `doneAt`: completion times in ms, in any order.
 */
export function steadyPerSecond(doneAt: readonly number[]): number {
  const done = [...doneAt].sort((a, b) => a - b);
  const i10 = Math.max(0, Math.ceil(0.1 * done.length) - 1);
  const i90 = Math.max(0, Math.ceil(0.9 * done.length) - 1);
  const ms = done[i90]! - done[i10]!;
  return ms > 0 ? round(((i90 - i10) * 1000) / ms, 1) : NaN;
}

/** CPU seconds so far of a stack's server and sandbox, this process, and the worker child when there is one. */
export function cpuSnapshot(
  stack: { childCpu(): { devServer: number; sandbox: number } },
  workerPid: number | undefined,
) {
  const children = stack.childCpu();
  return {
    devServer: children.devServer,
    sandbox: children.sandbox,
    bench: ownCpuSeconds(),
    worker: workerPid !== undefined ? procCpuSeconds(workerPid) : undefined,
  };
}
