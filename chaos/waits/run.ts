/**
 * `npm run chaos -- --waits [--n 24] [--seed S]`: the class of waits and clocks (chaos/waits/plan.ts says what each
 * booking is given, chaos/waits/check.ts what must hold).
 *
 *  1. The chaos stack (chaos/setup.ts) with a workflow bundle built first (the one every history is replayed against
 *     at the end); its workers replaced by two whose clocks are off (chaos/waits/clock.ts: one 2 min behind, one 2 min
 *     ahead), with a supplier profile whose Retry-After ceiling is `ceilingSeconds` (20 s: a day's hint is cut to it).
 *  2. The bookings started evenly over `minutes`, each driven as its kind says (chaos/waits/drive.ts), while a worker
 *     is SIGKILLed every `killEverySeconds` (alternating, restarted at once with the same clock).
 *  3. Once every driver is done and every workflow closed: every run's raw history, the supplier's orders and calls;
 *     each history replayed against the bundle; the invariants checked. The report: chaos/results/chaos-waits-<seed>.json.
 */
import path from 'node:path';
import { SANDBOX_PROFILE } from '../../dev/sandbox/server';
import { CHAOS_RECOVERY, CHAOS_SUPPLIER_TIMEOUTS_MS } from '../options';
import { REPO, standUpStack, WORKER_SLOTS } from '../setup';
import {
  classStackOptions,
  collectAndReplay,
  inTempDir,
  killInTurn,
  runAbort,
  startPersistently,
  untilClosed,
  type ClassOptions,
} from '../classes';
import { buildBundle } from '../stack';
import { seconds, sleep } from '../timing';
import { checkWaits, type WaitsCheck } from './check';
import { SKEWED_SLOTS, skewedEnv, writeClockPreload } from './clock';
import { drive, type WaitObservation } from './drive';
import { planWaits, WAIT_KINDS } from './plan';

export interface WaitsOptions extends ClassOptions {
  /** The supplier profile's retryAfterCeilingSeconds on the class's workers. */
  ceilingSeconds: number;
}

export interface WaitsReport {
  class: 'waits-and-clocks';
  seed: number;
  ok: boolean;
  elapsedSeconds: number;
  clocks: Record<string, number>;
  ceilingSeconds: number;
  deadlineSeconds: number;
  kills: number;
  kinds: Record<string, number>;
  figures: WaitsCheck['figures'];
  violations: string[];
  observations: WaitObservation[];
  tempDir?: string;
}

/** Order runs of the class continue as new this early (the contract's least), so the bursts cross a hand-over. */
const CONTINUE_AS_NEW_AFTER_EVENTS = 100;

export function waitsDefaults(overrides: Partial<WaitsOptions> = {}): WaitsOptions {
  return {
    n: 24,
    seed: Date.now() % 4294967296,
    minutes: 1,
    killEverySeconds: 20,
    ceilingSeconds: 20,
    resultsDir: path.join(REPO, 'chaos', 'results'),
    keepTempDir: false,
    log: (line) => process.stderr.write(`[chaos:waits] ${line}\n`),
    ...overrides,
  };
}

export async function runWaits(overrides: Partial<WaitsOptions> = {}): Promise<WaitsReport> {
  const w = waitsDefaults(overrides);
  const t0 = Date.now();
  const recovery = { ...CHAOS_RECOVERY, continueAsNewAfterEvents: CONTINUE_AS_NEW_AFTER_EVENTS };
  const deadlineSeconds = recovery.deadlineSeconds ?? 150;
  return inTempDir(w, 'waits', async (dir, cleanups) => {
    w.log(`seed ${w.seed}: ${w.n} bookings over ${w.minutes} min; temp dir ${dir}`);
    const plan = planWaits({ n: w.n, seed: w.seed, recovery });
    const bundlePath = await buildBundle(dir);
    const stack = await standUpStack(classStackOptions(w, bundlePath, recovery), dir, cleanups, t0);
    const preload = writeClockPreload(dir);
    const profile = JSON.stringify({
      ...SANDBOX_PROFILE,
      timeoutsMs: CHAOS_SUPPLIER_TIMEOUTS_MS,
      retryAfterCeilingSeconds: w.ceilingSeconds,
    });
    for (const [slot, offset] of Object.entries(SKEWED_SLOTS)) {
      await stack.fleet.add([slot], { ...skewedEnv(preload, offset), SUPPLIER_PROFILE: profile });
    }
    await stack.fleet.retire(WORKER_SLOTS);
    w.log(`workers with skewed clocks polling: ${stack.fleet.liveSlots().join(', ')}`);

    const abort = runAbort(w.signal);
    const startMs = Date.now();
    const until = startMs + w.minutes * 60_000 + (deadlineSeconds + 240) * 1000;
    const kills = killInTurn(stack.fleet, Object.keys(SKEWED_SLOTS), w.killEverySeconds, abort.signal);
    const observations = await Promise.all(
      plan.map(async (b, i) => {
        await sleep(startMs + (i * w.minutes * 60_000) / plan.length - Date.now(), abort.signal);
        await startPersistently(stack.client, b.request, until);
        const obs = await drive(b, { client: stack.client, recovery, until, signal: abort.signal });
        w.log(
          `${b.kind} ${b.request.customerReferenceNo.slice(0, 8)}: booking ${obs.bookingOutcome ?? '-'}, ` +
            `order run ${obs.orderOutcome ?? '-'}${obs.problem ? ` (${obs.problem})` : ''} at t+${seconds(Date.now() - startMs)} s`,
        );
        return obs;
      }),
    );
    w.log(`every driver done at t+${seconds(Date.now() - startMs)} s; waiting for every workflow to close`);
    await untilClosed(stack.raw, until, abort.signal);
    abort.abort();
    const killCount = await kills;

    w.log('collecting histories and replaying them against the bundle');
    const { runs, replay } = await collectAndReplay(stack, bundlePath);
    const checked = checkWaits(
      plan,
      observations,
      runs,
      { orders: stack.sandbox.orders(), calls: stack.sandbox.calls() },
      {
        ceilingMs: w.ceilingSeconds * 1000,
        deadlineMs: deadlineSeconds * 1000,
        maxSends: recovery.maxBookAttempts ?? 2,
        workerLogLines: stack.fleet.lines.map((l) => l.line),
      },
      replay,
    );
    const report: WaitsReport = {
      class: 'waits-and-clocks',
      seed: w.seed,
      ok: checked.violations.length === 0,
      elapsedSeconds: Math.round((Date.now() - t0) / 1000),
      clocks: SKEWED_SLOTS,
      ceilingSeconds: w.ceilingSeconds,
      deadlineSeconds,
      kills: killCount,
      kinds: Object.fromEntries(WAIT_KINDS.map((k) => [k, plan.filter((b) => b.kind === k).length])),
      figures: checked.figures,
      violations: checked.violations,
      observations,
    };
    return report;
  });
}

/** The report as a few lines for the terminal. */
export function formatWaits(r: WaitsReport): string {
  const f = r.figures;
  return [
    `waits and clocks, seed ${r.seed}: ${r.ok ? 'every invariant held' : `${r.violations.length} violations`} (${r.elapsedSeconds} s)`,
    `bookings ${f.bookings} (${JSON.stringify(r.kinds)}), runs ${f.runs} (${f.continuedAsNew} continued as new), kills ${r.kills}`,
    `booking outcomes ${JSON.stringify(f.bookingOutcomes)}; cancellations ${f.cancellations}: ${JSON.stringify(f.orderOutcomes)}`,
    `refusal waits ${f.refusalWaits}: longest Book ${f.longestWaitMs.book} ms, Cancel ${f.longestWaitMs.cancel} ms, ceiling ${f.longestWaitMs.ceiling} ms; shortest Book ${f.shortestWaitMs.book} ms, Cancel ${f.shortestWaitMs.cancel} ms`,
    `supplier's longest gap after a 429: Book ${f.longestSupplierGapMs.book} ms, Cancel ${f.longestSupplierGapMs.cancel} ms; longest caller confirm ${f.longestCallerAnswerMs} ms (refused: ${f.longestCallerRefusalMs} ms)`,
    `requests: ${JSON.stringify(f.asks)}`,
    `replayed ${f.replayed} histories; orders twice ${f.ordersTwice}; Cancels taken ${f.cancelsTaken}`,
    ...r.violations.slice(0, 40).map((v) => `  VIOLATION ${v}`),
  ].join('\n');
}
