/**
 * `npm run chaos -- --accounts [--n 48] [--seed S]`: the class of two supplier accounts (./plan.ts says what each
 * booking is given, ./check.ts what must hold).
 *
 *  1. The chaos stack (chaos/setup.ts) with a workflow bundle built first (the one every history is replayed against),
 *     a second sandbox supplier behind a TCP relay (./outage.ts), and an accounts file naming both: `alpha` (the
 *     stack's sandbox) and `beta` (the relay). The stack's workers are replaced by two that read that file
 *     (SUPPLIER_ACCOUNTS_FILE), each holding both accounts.
 *  2. The bookings started evenly over `minutes`, half on each account (BookingRequest.supplier), a quarter of each
 *     cancelled once confirmed, while a worker is SIGKILLed every `killEverySeconds` (in turn, restarted at once) and
 *     beta goes through its bad days: stopped, then answering 429, then slow, then well again.
 *  3. Once every booking is driven and every workflow closed: every run's raw history, each supplier's orders and
 *     calls; every history replayed; the invariants checked per account. The report:
 *     chaos/results/chaos-accounts-<seed>.json.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SANDBOX_PROFILE } from '../../dev/sandbox/server';
import {
  classStackOptions,
  collectAndReplay,
  inTempDir,
  killInTurn,
  runAbort,
  untilClosed,
  type ClassOptions,
} from '../classes';
import { CHAOS_RECOVERY, CHAOS_SUPPLIER_TIMEOUTS_MS } from '../options';
import { APP_KEY, APP_SECRET, REPO, standUpStack, WORKER_SLOTS } from '../setup';
import { buildBundle, startChaosSandbox } from '../stack';
import { seconds, sleep } from '../timing';
import { checkAccounts, phaseAt, type AccountsCheck } from './check';
import { driveBooking, type AccountObservation } from './drive';
import { Relay, runOutage, type OutagePhase, type OutagePlan } from './outage';
import { FAILING, HEALTHY, planAccounts } from './plan';

export interface AccountsOptions extends ClassOptions {
  /** The failing account's phases. */
  outage: OutagePlan;
}

export interface AccountsReport {
  class: 'two-accounts';
  seed: number;
  ok: boolean;
  elapsedSeconds: number;
  n: number;
  minutes: number;
  kills: number;
  outage: OutagePlan;
  phases: OutagePhase[];
  figures: AccountsCheck['figures'];
  violations: string[];
  observations: Array<AccountObservation & { phase: string }>;
  tempDir?: string;
}

/** The class's workers: each reads the accounts file and holds both accounts. */
const ACCOUNT_SLOTS = ['C', 'D'];
/** Rate limits far above the run's traffic, in each account's profile: the 429s are the failing supplier's own. */
const UNLIMITED = { overall: 1e6, checkAvail: 1e6, book: 1e6, queryOrders: 1e6 };

export function accountsDefaults(overrides: Partial<AccountsOptions> = {}): AccountsOptions {
  return {
    n: 48,
    seed: Date.now() % 4294967296,
    minutes: 6,
    killEverySeconds: 20,
    outage: { leadSeconds: 30, stoppedSeconds: 120, rateLimitedSeconds: 120, slowSeconds: 60, slowDelayMs: 1_500 },
    resultsDir: path.join(REPO, 'chaos', 'results'),
    keepTempDir: false,
    log: (line) => process.stderr.write(`[chaos:accounts] ${line}\n`),
    ...overrides,
  };
}

export async function runAccounts(overrides: Partial<AccountsOptions> = {}): Promise<AccountsReport> {
  const w = accountsDefaults(overrides);
  const t0 = Date.now();
  const recovery = CHAOS_RECOVERY;
  const deadlineSeconds = recovery.deadlineSeconds ?? 150;
  return inTempDir(w, 'accounts', async (dir, cleanups) => {
    w.log(`seed ${w.seed}: ${w.n} bookings over ${w.minutes} min; temp dir ${dir}`);
    const plan = planAccounts({ n: w.n, seed: w.seed, recovery });
    const bundlePath = await buildBundle(dir);
    const stack = await standUpStack(classStackOptions(w, bundlePath, recovery), dir, cleanups, t0);
    const beta = await startChaosSandbox();
    cleanups.push(() => beta.close());
    const relay = new Relay({ host: '127.0.0.1', port: beta.port });
    await relay.start();
    cleanups.push(() => relay.stop());
    const accountsFile = writeAccountsFile(dir, { [HEALTHY]: stack.sandbox.url, [FAILING]: relay.url });
    await stack.fleet.add(ACCOUNT_SLOTS, { SUPPLIER_ACCOUNTS_FILE: accountsFile });
    await stack.fleet.retire(WORKER_SLOTS);
    w.log(`workers with accounts ${HEALTHY} and ${FAILING} polling: ${stack.fleet.liveSlots().join(', ')}`);

    const abort = runAbort(w.signal);
    const startMs = Date.now();
    // Room after the last start: the recovery deadline, CheckAvail's retries and a killed worker's activity timeouts.
    const until = startMs + w.minutes * 60_000 + (deadlineSeconds + 420) * 1000;
    const kills = killInTurn(stack.fleet, ACCOUNT_SLOTS, w.killEverySeconds, abort.signal);
    const outage = runOutage(w.outage, { relay, sandbox: beta }, startMs, w.log, abort.signal);
    const drive = { client: stack.client, recovery, startMs, until, signal: abort.signal };
    const observations = await Promise.all(
      plan.map(async (b, i) => {
        await sleep(startMs + (i * w.minutes * 60_000) / plan.length - Date.now(), abort.signal);
        const obs = await driveBooking(b, drive);
        w.log(
          `${b.account} ${b.request.customerReferenceNo.slice(0, 8)}: ${obs.bookingOutcome ?? '-'}` +
            `${obs.cancel ? `, cancellation ${obs.cancel.orderOutcome ?? '-'}` : ''}${obs.problem ? ` (${obs.problem})` : ''}` +
            ` in ${seconds((obs.outcomeAtMs ?? NaN) - obs.startedAtMs)} s`,
        );
        return obs;
      }),
    );
    const phases = await outage;
    w.log(`every booking driven at t+${seconds(Date.now() - startMs)} s; waiting for every workflow to close`);
    await untilClosed(stack.raw, until, abort.signal);
    abort.abort();
    const killCount = await kills;

    w.log('collecting histories and replaying them against the bundle');
    const { runs, replay } = await collectAndReplay(stack, bundlePath);
    const checked = checkAccounts(
      plan,
      observations,
      runs,
      {
        [HEALTHY]: { orders: stack.sandbox.orders(), calls: stack.sandbox.calls() },
        [FAILING]: { orders: beta.orders(), calls: beta.calls() },
      },
      phases,
      replay,
      stack.fleet.lines.map((l) => l.line),
    );
    const report: AccountsReport = {
      class: 'two-accounts',
      seed: w.seed,
      ok: checked.violations.length === 0,
      elapsedSeconds: Math.round((Date.now() - t0) / 1000),
      n: w.n,
      minutes: w.minutes,
      kills: killCount,
      outage: w.outage,
      phases,
      figures: checked.figures,
      violations: checked.violations,
      observations: observations.map((o) => ({ ...o, phase: phaseAt(phases, o.startedAtMs) })),
    };
    return report;
  });
}

/** Both accounts open to every partner, the healthy one first; the sandbox's credentials in files beside it. */
function writeAccountsFile(dir: string, urls: Record<string, string>): string {
  writeFileSync(path.join(dir, 'app-key'), `${APP_KEY}\n`, { mode: 0o600 });
  writeFileSync(path.join(dir, 'app-secret'), `${APP_SECRET}\n`, { mode: 0o600 });
  const credentials = { appKeyFile: 'app-key', appSecretFile: 'app-secret' };
  const profile = { ...SANDBOX_PROFILE, timeoutsMs: CHAOS_SUPPLIER_TIMEOUTS_MS, rateLimits: UNLIMITED };
  const file = path.join(dir, 'accounts.json');
  const accounts = Object.entries(urls).map(([id, baseUrl]) => ({
    id,
    baseUrl,
    credentials,
    profile,
    partners: ['*'],
  }));
  writeFileSync(file, JSON.stringify({ accounts }));
  return file;
}

/** The report as a few lines for the terminal. */
export function formatAccounts(r: AccountsReport): string {
  const lines = [
    `two accounts, seed ${r.seed}: ${r.ok ? 'every invariant held' : `${r.violations.length} violations`} (${r.elapsedSeconds} s)`,
    `${r.n} bookings over ${r.minutes} min, kills ${r.kills}; ${FAILING}: ${r.phases.map((p) => `${p.mode} t+${seconds(p.fromMs)}-${seconds(p.toMs)} s`).join(', ')}`,
  ];
  const byPhase = (m: Record<string, { p50: number; p95: number; count: number }>) =>
    Object.entries(m)
      .map(([p, l]) => `${p} ${l.p50}/${l.p95} ms (${l.count})`)
      .join(', ');
  for (const [account, f] of Object.entries(r.figures.accounts)) {
    lines.push(
      `${account}: ${f.bookings} bookings ${JSON.stringify(f.outcomes)}, cancellations ${JSON.stringify(f.cancellations)}, orders ${f.orders}`,
      `  start to outcome p50 ${f.latencyMs.p50} ms, p95 ${f.latencyMs.p95} ms, max ${f.latencyMs.max} ms; ${f.perMinute} outcomes/min`,
      `  by ${FAILING}'s phase at start (p50/p95): ${byPhase(f.latencyByPhaseMs)}`,
      `  struck by a kill ${f.struckByKill}; the others by phase: ${byPhase(f.untouchedByPhaseMs)}`,
      `  supplier calls ${JSON.stringify(f.calls)}`,
    );
  }
  lines.push(
    `histories ${r.figures.runs}, replayed ${r.figures.replayed}; supplier activities checked for routing ${r.figures.routedActivities}`,
    ...r.violations.slice(0, 40).map((v) => `  VIOLATION ${v}`),
  );
  return lines.join('\n');
}
