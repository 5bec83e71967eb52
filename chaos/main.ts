/**
 * `npm run chaos -- [--n 1000] [--seed S] [--minutes M]`: the chaos run (see chaos/README.md).
 *
 * Starts its own dev server, sandbox supplier and two worker processes, books N times while killing
 * workers and the server, then prints a table and writes chaos/results/chaos-<seed>.json.
 * Exit code: 0 every invariant held, 1 a violation (listed), 2 the run itself failed, 130 interrupted.
 *
 *   --n <count>              bookings (default 1000)
 *   --seed <number|text>     PRNG seed (default: from the clock; printed, so a run can be repeated)
 *   --minutes <m>            bookings are started over this many minutes, under fire (default 8)
 *   --kill-every <s>         seconds between worker kills (default 15)
 *   --max-kills <k>          stop killing after k kills (default unlimited)
 *   --server-restart <how>   SIGKILL (default), SIGTERM or none
 *   --deadline <s>           the bookings' recovery deadline in seconds (default 150)
 *   --results <dir>          where the JSON goes (default chaos/results)
 *   --keep                   keep the temp dir (database, worker logs) even when all is well
 *   --prod                   on the production engine (PostgreSQL, two Temporal nodes): a node SIGKILLed at a
 *                            third of the starts, PostgreSQL restarted at half, the other node at two thirds;
 *                            the report is chaos/results/chaos-prod-<seed>.json
 *   --deploy                 the deploy drill (implies --prod): build A versioned and current, build B (changed
 *                            commands) started beside it, gated and made current, rolled back to A, forward to B,
 *                            A drained and stopped; report chaos/results/chaos-deploy-<seed>.json
 *   --node-down <s>          prod: seconds a killed node stays down (default 10)
 *   --start-order <order>    plan (default: the seed's shuffle) or longest-first (bookings whose faults keep them
 *                            open longest started first: a shorter drain after the last start)
 *   --orphans <k>            bookings terminated on purpose once Book made their order, for the reconciliation
 *                            sweep at the end to find (default: 1 % of --n, at least 1; 0 for none)
 *   --waits                  the class of waits and clocks instead (chaos/waits/run.ts): --n (default 24), --seed,
 *                            --minutes (default 1), --kill-every (default 20), --ceiling <s> (the workers' Retry-After
 *                            ceiling, default 20), --results, --keep; report chaos/results/chaos-waits-<seed>.json
 *   --accounts               the class of two supplier accounts instead (chaos/accounts/run.ts): --n (default 48),
 *                            --seed, --minutes (default 6), --kill-every (default 20), --down <s>, --rate-limited <s>,
 *                            --slow <s> (the failing account's phases, default 120, 120, 60), --results, --keep;
 *                            report chaos/results/chaos-accounts-<seed>.json
 */
import { parseArgs } from 'node:util';
import { formatReport } from './report';
import { parseSeed } from './mix';
import { CHAOS_RECOVERY, chaosDefaults, chaosReportFile, runChaos, type ChaosOptions } from './run';
import { accountsDefaults, formatAccounts, runAccounts } from './accounts/run';
import type { ClassOptions } from './classes';
import { formatWaits, runWaits, waitsDefaults } from './waits/run';

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got "${text}"`);
  return n;
}

function nonNegativeInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: expected a whole number ≥ 0, got "${text}"`);
  return n;
}

function options(argv: string[]): Partial<ChaosOptions> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string' },
      seed: { type: 'string' },
      minutes: { type: 'string' },
      'kill-every': { type: 'string' },
      'max-kills': { type: 'string' },
      'server-restart': { type: 'string' },
      deadline: { type: 'string' },
      results: { type: 'string' },
      keep: { type: 'boolean' },
      prod: { type: 'boolean' },
      deploy: { type: 'boolean' },
      'node-down': { type: 'string' },
      orphans: { type: 'string' },
      'start-order': { type: 'string' },
      waits: { type: 'boolean' },
      ceiling: { type: 'string' },
    },
  });
  const restart = values['server-restart'];
  if (restart !== undefined && !['SIGKILL', 'SIGTERM', 'none'].includes(restart)) {
    throw new Error(`--server-restart: SIGKILL, SIGTERM or none, got "${restart}"`);
  }
  const order = values['start-order'];
  if (order !== undefined && !['plan', 'longest-first'].includes(order)) {
    throw new Error(`--start-order: plan or longest-first, got "${order}"`);
  }
  const n = positive('n', values.n);
  const deadline = positive('deadline', values.deadline);
  const out: Partial<ChaosOptions> = {
    ...(n !== undefined ? { n: Math.round(n) } : {}),
    ...(values.seed !== undefined ? { seed: parseSeed(values.seed) } : {}),
    ...(values.minutes !== undefined ? { minutes: positive('minutes', values.minutes)! } : {}),
    ...(values['kill-every'] !== undefined ? { killEverySeconds: positive('kill-every', values['kill-every'])! } : {}),
    ...(values['max-kills'] !== undefined ? { maxKills: Math.round(positive('max-kills', values['max-kills'])!) } : {}),
    ...(restart !== undefined ? { serverRestart: restart as ChaosOptions['serverRestart'] } : {}),
    ...(deadline !== undefined ? { recovery: { ...CHAOS_RECOVERY, deadlineSeconds: deadline } } : {}),
    ...(values.results !== undefined ? { resultsDir: values.results } : {}),
    ...(values.keep ? { keepTempDir: true } : {}),
    ...(values.prod || values.deploy ? { engine: 'prod' as const } : {}),
    ...(values.deploy ? { deploy: true } : {}),
    ...(values['node-down'] !== undefined ? { nodeDownSeconds: positive('node-down', values['node-down'])! } : {}),
    ...(values.orphans !== undefined ? { orphans: nonNegativeInt('orphans', values.orphans) } : {}),
    ...(order !== undefined ? { startOrder: order as ChaosOptions['startOrder'] } : {}),
  };
  return out;
}

async function main(): Promise<number> {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    // First Ctrl-C: stop and clean up (children killed, temp dir kept). Second: leave now; the exit hook
    // in chaos/stack.ts still kills every child.
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('[chaos] interrupted: stopping (Ctrl-C again to leave at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const argv = process.argv.slice(2);
  if (argv.includes('--waits')) return waitsMain(argv, controller.signal, () => interrupted);
  if (argv.includes('--accounts')) return accountsMain(argv, controller.signal, () => interrupted);
  const opts = chaosDefaults({ ...options(argv), signal: controller.signal });
  try {
    const report = await runChaos(opts);
    console.log(formatReport(report));
    if (opts.resultsDir) console.log(`\nreport: ${opts.resultsDir}/${chaosReportFile(opts)}`);
    return report.ok ? 0 : 1;
  } catch (err) {
    if (interrupted) return 130;
    console.error(`chaos run failed (seed ${opts.seed}):`, err);
    return 2;
  }
}

/** The options every class of its own reads (its size, seed, pace, report), besides its own `extra` ones. */
function classArgs(argv: string[], extra: Record<string, { type: 'string' | 'boolean' }>) {
  const values = parseArgs({
    args: argv,
    options: {
      ...extra,
      n: { type: 'string' },
      seed: { type: 'string' },
      minutes: { type: 'string' },
      'kill-every': { type: 'string' },
      results: { type: 'string' },
      keep: { type: 'boolean' },
    },
  }).values as Record<string, string | boolean | undefined>;
  const n = positive('n', values.n as string | undefined);
  const minutes = positive('minutes', values.minutes as string | undefined);
  const killEvery = positive('kill-every', values['kill-every'] as string | undefined);
  const common: Partial<ClassOptions> = {
    ...(n !== undefined ? { n: Math.round(n) } : {}),
    ...(values.seed !== undefined ? { seed: parseSeed(values.seed as string) } : {}),
    ...(minutes !== undefined ? { minutes } : {}),
    ...(killEvery !== undefined ? { killEverySeconds: killEvery } : {}),
    ...(values.results !== undefined ? { resultsDir: values.results as string } : {}),
    ...(values.keep ? { keepTempDir: true } : {}),
  };
  return { values, common };
}

/** Runs a class, prints its report and where it went; the exit code (0 held, 1 a violation, 2 failed, 130 stopped). */
async function classMain<R extends { ok: boolean }>(
  name: string,
  o: ClassOptions,
  run: () => Promise<R>,
  format: (r: R) => string,
  interrupted: () => boolean,
): Promise<number> {
  try {
    const report = await run();
    console.log(format(report));
    if (o.resultsDir) console.log(`\nreport: ${o.resultsDir}/chaos-${name}-${o.seed}.json`);
    return report.ok ? 0 : 1;
  } catch (err) {
    if (interrupted()) return 130;
    console.error(`chaos ${name} run failed (seed ${o.seed}):`, err);
    return 2;
  }
}

/** The class of waits and clocks: its own options (the workers' Retry-After ceiling) and its own report. */
function waitsMain(argv: string[], signal: AbortSignal, interrupted: () => boolean): Promise<number> {
  const { values, common } = classArgs(argv, { waits: { type: 'boolean' }, ceiling: { type: 'string' } });
  const ceiling = positive('ceiling', values.ceiling as string | undefined);
  const w = waitsDefaults({
    ...common,
    ...(ceiling !== undefined ? { ceilingSeconds: Math.round(ceiling) } : {}),
    signal,
  });
  return classMain('waits', w, () => runWaits(w), formatWaits, interrupted);
}

/** The class of two supplier accounts: its own options (the failing account's phases) and its own report. */
function accountsMain(argv: string[], signal: AbortSignal, interrupted: () => boolean): Promise<number> {
  const { values, common } = classArgs(argv, {
    accounts: { type: 'boolean' },
    down: { type: 'string' },
    'rate-limited': { type: 'string' },
    slow: { type: 'string' },
  });
  const seconds = (name: string) => positive(name, values[name] as string | undefined);
  const down = seconds('down');
  const rateLimited = seconds('rate-limited');
  const slow = seconds('slow');
  const outage = {
    ...accountsDefaults().outage,
    ...(down !== undefined ? { stoppedSeconds: down } : {}),
    ...(rateLimited !== undefined ? { rateLimitedSeconds: rateLimited } : {}),
    ...(slow !== undefined ? { slowSeconds: slow } : {}),
  };
  const a = accountsDefaults({ ...common, outage, signal });
  return classMain('accounts', a, () => runAccounts(a), formatAccounts, interrupted);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
