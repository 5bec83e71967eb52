/**
 * Worker logs in tests. Workers print warnings and errors only (INFO lines about worker state drown the
 * output), and a test declares the ones it causes on purpose with `expectWorkerWarnings`: those are not
 * printed, only counted in one line at the end of the file, so a WARN or ERROR that does show is one no
 * test expected. Every line at INFO and above is kept, hidden or not, so tests can scan what a worker
 * logged (for secrets). (Tests print no console.warn/error of their own: the supplier answers' drift
 * reporter, the one product code that does, is given a recording one wherever a test causes drift.)
 *
 * TEST_SHOW_EXPECTED_LOGS=1 prints the expected lines too, marked `(expected)`.
 *
 * Importing this module changes nothing: ./install-worker-logs.ts, a Jest setup file, installs the SDK
 * runtime with this logger (benchmarks and the history recorder import the harness and install their own).
 * Knowing which test runs and printing the count after the file's last hook take the test environment
 * (./worker-log-environment.ts), which calls the `WorkerLogHooks` installWorkerLogs leaves on the global.
 */
import { DefaultLogger, Runtime, type LogEntry, type Logger } from '@temporalio/worker';

/** What the test environment calls: a test started, a test ended, and the file is done. */
export interface WorkerLogHooks {
  testStarted(): void;
  testDone(): void;
  /** Delivers the logs still buffered and stops the SDK runtime. */
  close(): Promise<void>;
  summary(): string | undefined;
}

interface Expectation {
  pattern: RegExp;
  /** Matching lines hidden so far. */
  hidden: number;
  /** When a test's expectation lapses (ms since the epoch); a file's never does. */
  until?: number;
  /** One of EXPECTED_EVERYWHERE: not worth a summary line in a file where it hid nothing. */
  everywhere?: boolean;
}

/**
 * How long a test's expectations outlive it. Forwarded worker logs arrive in batches (the SDK buffers them
 * 100 ms), so a line a test caused may arrive after it ended; log timestamps cannot tell, since workflow
 * code stamps its lines with workflow time, which time skipping moves ahead.
 */
const TEST_GRACE_MS = 2_000;

/** What the file and the running test expect. */
class Expected {
  private readonly all: Expectation[] = [];
  /** The running test's expectations, while one runs. */
  private current: Expectation[] | undefined;

  add(patterns: RegExp[], everywhere = false): void {
    const added = patterns.map((pattern) => ({ pattern, hidden: 0, everywhere }));
    this.all.push(...added);
    this.current?.push(...added);
  }

  testStarted(): void {
    this.current = [];
  }

  testDone(): void {
    for (const e of this.current ?? []) e.until = Date.now() + TEST_GRACE_MS;
    this.current = undefined;
  }

  /** Whether the line was expected (and so counted, not printed). */
  hides(line: string): boolean {
    const now = Date.now();
    const match = this.all.find((e) => (e.until === undefined || now <= e.until) && e.pattern.test(line));
    if (match) match.hidden++;
    return match !== undefined;
  }

  /** `label: 3 expected lines hidden (/a/ ×2, /b/ ×1)`, or nothing when the file expected and hid nothing. */
  summary(label: string): string | undefined {
    if (this.all.every((e) => e.everywhere && e.hidden === 0)) return undefined;
    const byPattern = new Map<string, number>();
    for (const e of this.all) byPattern.set(String(e.pattern), (byPattern.get(String(e.pattern)) ?? 0) + e.hidden);
    const total = [...byPattern.values()].reduce((a, b) => a + b, 0);
    // Patterns cut short: the line is a count, and a pattern's start names it well enough.
    const short = (pattern: string) => (pattern.length > 48 ? `${pattern.slice(0, 47)}…` : pattern);
    const each = [...byPattern].map(([pattern, n]) => `${short(pattern)} ×${n}`).join(', ');
    return `${label}: ${total} expected line${total === 1 ? '' : 's'} hidden (${each})`;
  }
}

interface State {
  kept: string[];
  worker: Expected;
}

const GLOBAL_KEY = '__workerLogState';
const showExpected = process.env.TEST_SHOW_EXPECTED_LOGS === '1';
/**
 * Lines every file's workers log by design: the QueryOrders worker of each pair has no workflows (it polls
 * the rate-limited activity queue only), which the SDK reports once per worker.
 */
const EXPECTED_EVERYWHERE = [/^WARN No workflows registered, not polling for workflow tasks .*-query-orders"/];

const holder = globalThis as { [GLOBAL_KEY]?: State; __workerLogHooks?: WorkerLogHooks };

/** Set up once per test file: the setup file and the test file's own import share it through the global. */
function state(): State {
  return (holder[GLOBAL_KEY] ??= { kept: [], worker: new Expected() });
}

/** Installs the SDK runtime with the logger above and the hooks the test environment calls; once per file. */
export function installWorkerLogs(): void {
  if (holder.__workerLogHooks) return;
  const s = state();
  s.worker.add(EXPECTED_EVERYWHERE, true);
  holder.__workerLogHooks = {
    testStarted() {
      s.worker.testStarted();
    },
    testDone() {
      s.worker.testDone();
    },
    async close() {
      // Forwarding native logs keeps a handle open until the runtime stops, which it does by itself only
      // once its last worker and connection are closed: a file with none (or one left open) would hold
      // Jest. instance() is the runtime in use, or, after such a stop, a new one with these options.
      await Runtime.instance().shutdown();
    },
    summary() {
      return s.worker.summary('worker log WARN/ERROR');
    },
  };

  Runtime.install({
    // The SDK's native side (gRPC retries, task completions) otherwise writes its WARN lines straight to
    // the console, where no test could declare them nor scan them.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    logger: new DefaultLogger('INFO', (entry: LogEntry) => {
      const line = `${entry.level} ${entry.message} ${JSON.stringify(entry.meta ?? {}, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`;
      s.kept.push(line);
      if (entry.level !== 'WARN' && entry.level !== 'ERROR') return;
      if (!s.worker.hides(line)) process.stderr.write(`${line}\n`);
      else if (showExpected) process.stderr.write(`(expected) ${line}\n`);
    }),
  });
}

/** The logger workers use here, for the SDK's MockActivityEnvironment: its lines go the same way. */
export function workerLogger(): Logger {
  return Runtime.instance().logger;
}

/** The worker log lines of this test file so far, expected ones included. */
export function workerLogLines(): readonly string[] {
  return state().kept;
}

/**
 * Declares WARN/ERROR worker log lines (`LEVEL message {meta}`) a test causes on purpose, so they are not
 * printed. At the top of a file, in a describe body or in beforeAll: for the whole file; inside a test (or
 * its beforeEach): for that test, and lines arriving up to TEST_GRACE_MS after it.
 */
export function expectWorkerWarnings(...patterns: RegExp[]): void {
  state().worker.add(patterns);
}
