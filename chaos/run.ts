/**
 * `runChaos`: books N times through the client helper while the stack is being broken on purpose, then
 * checks that every booking ended in a way the supplier's records agree with.
 *
 * The story, a step a file:
 *  1. Stand up a private stack (chaos/setup.ts, on chaos/stack.ts): dev server on a temp database, sandbox
 *     supplier in process, two worker processes with payload encryption, short supplier timeouts and a prebuilt
 *     bundle.
 *  2. Start the planned bookings (chaos/mix.ts) evenly over `minutes`, each with its faults in the `Test`
 *     header and the recovery schedule scaled down through `request.recovery` (chaos/under-fire.ts).
 *  3. Meanwhile (chaos/faults.ts): SIGKILL a worker every few seconds (alternating, restarted at once), burst
 *     429s and 500s on QueryOrders, and once kill the dev server and start it again on the same database and
 *     ports. A few bookings (`orphans`) are terminated on purpose once their Book has made the order
 *     (chaos/orphans.ts).
 *  4. Wait until every workflow has closed (bounded), then collect each ending, the supplier's orders and
 *     calls, every raw history and every worker log line (chaos/collect.ts, chaos/workflows.ts), and check the
 *     invariants (chaos/invariants.ts, on chaos/check/, a file per subject).
 *  5. Run the reconciliation sweep over the run's booking window (chaos/sweep.ts): it must report exactly the
 *     orphans made in step 3, and as mismatches exactly the orders whose status the bookings' outcomes do not
 *     account for. The report (chaos/build-report.ts, chaos/report.ts) says all of it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEncryptionCodec } from '../src/api/codec/encryption';
import { buildReport } from './build-report';
import { collect } from './collect';
import { checkDeploy } from './deploy-check';
import { checkInvariants } from './invariants';
import { markOrphanTargets, planBookings } from './mix';
import { CHAOS_RECOVERY, CHAOS_SUPPLIER_TIMEOUTS_MS, type ChaosOptions } from './options';
import type { ChaosReport } from './report';
import { REPO, standUpStack, type Cleanups, type Stack } from './setup';
import { sweepAndCompare } from './sweep';
import { bookUnderFire } from './under-fire';
import { decodedHistory } from './workflows';

export { sleep } from './timing';
export { CHAOS_RECOVERY, CHAOS_SUPPLIER_TIMEOUTS_MS, type ChaosOptions } from './options';

/** The full run's options (1000 bookings over 8 minutes), with the caller's overrides. */
export function chaosDefaults(overrides: Partial<ChaosOptions> = {}): ChaosOptions {
  return {
    n: 1000,
    seed: Date.now() % 4294967296,
    minutes: 8,
    killEverySeconds: 15,
    maxKills: 1000,
    chaosTailSeconds: 60,
    serverRestart: 'SIGKILL',
    engine: 'dev',
    nodeDownSeconds: 10,
    deploy: false,
    recovery: CHAOS_RECOVERY,
    supplierTimeoutsMs: CHAOS_SUPPLIER_TIMEOUTS_MS,
    resultsDir: path.join(REPO, 'chaos', 'results'),
    startConcurrency: 16,
    startOrder: 'plan',
    orphans: Math.ceil((overrides.n ?? 1000) / 100),
    keepTempDir: false,
    log: (line) => process.stderr.write(`[chaos] ${line}\n`),
    ...overrides,
    // The drill runs on the production engine only.
    ...(overrides.deploy ? { engine: 'prod' as const } : {}),
  };
}

/** The chaos run, step by step; the temp dir is removed unless something broke or `keepTempDir` says keep it. */
export async function runChaos(overrides: Partial<ChaosOptions> = {}): Promise<ChaosReport> {
  const o = chaosDefaults(overrides);
  const t0 = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), `chaos-${o.seed}-`));
  const cleanups: Cleanups = [];
  let keepDir = o.keepTempDir;
  try {
    o.log(`seed ${o.seed}: ${o.n} bookings over ${o.minutes} min; temp dir ${dir}`);
    const plan = markOrphanTargets(planBookings({ n: o.n, seed: o.seed, recovery: o.recovery }), o.orphans, o.seed);
    const stack = await standUpStack(o, dir, cleanups, t0);
    const fire = await bookUnderFire(o, plan, stack, cleanups);
    o.log('collecting outcomes, histories and supplier records');
    const collected = await collect(plan, stack, fire);
    const reconciliation = await sweepAndCompare(stack.client, stack.sandbox, collected.observations, fire.orphanage, {
      orphansAsked: plan.filter((b) => b.orphanTarget).length,
      windowStartMs: fire.phases.phaseStart - 60_000,
      seed: o.seed,
      log: o.log,
    });
    const checked = checkInvariants(stack, plan, collected, reconciliation, o.recovery.maxBookAttempts ?? 2);
    const deploy = stack.deploy ? await checkDeploy(stack, fire, o.log) : undefined;
    if (deploy) {
      checked.violations.push(...deploy.violations);
      checked.implicated.push(...deploy.implicated);
    }
    const broken = checked.violations.length > 0;
    if (broken) keepDir = true;
    const histories = broken ? await keepImplicatedHistories(o, stack, checked.implicated) : [];
    const tempDir = keepDir ? dir : undefined;
    const report = buildReport({ o, t0, plan, stack, fire, collected, checked, reconciliation, histories, tempDir });
    if (deploy) report.deploy = deploy.report;
    const p = report.phasesSeconds;
    o.log(
      `done in ${report.elapsedSeconds} s: setup ${p.setup}, starting ${p.starting}, draining ${p.draining}, collecting ${p.collecting}`,
    );
    writeReport(o, report);
    return report;
  } catch (err) {
    keepDir = true;
    o.log(`run failed; kept ${dir} for inspection`);
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((err: unknown) => o.log(`cleanup: ${err instanceof Error ? err.message : String(err)}`));
    }
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

/** The histories a violation names (the first 20), decoded for a person to read beside the report. */
async function keepImplicatedHistories(o: ChaosOptions, stack: Stack, implicated: string[]): Promise<string[]> {
  const histories: string[] = [];
  if (!o.resultsDir) return histories;
  const key32 = Buffer.from(stack.key, 'base64');
  const codec = createEncryptionCodec({ keys: new Map([[stack.keyId, key32]]), activeKeyId: stack.keyId });
  for (const ref of [...new Set(implicated)].slice(0, 20)) {
    const file = path.join(o.resultsDir, `chaos-${o.seed}-${ref}.history.json`);
    mkdirSync(o.resultsDir, { recursive: true });
    writeFileSync(file, await decodedHistory(stack.raw, ref, codec));
    histories.push(path.relative(REPO, file));
  }
  return histories;
}

/** Writes the report as JSON into `resultsDir`, when there is one. */
function writeReport(o: ChaosOptions, report: ChaosReport): void {
  if (!o.resultsDir) return;
  mkdirSync(o.resultsDir, { recursive: true });
  writeFileSync(path.join(o.resultsDir, chaosReportFile(o)), `${JSON.stringify(report, null, 2)}\n`);
}

/** chaos-<seed>.json, chaos-prod-<seed>.json on the production engine, chaos-deploy-<seed>.json for the drill. */
export function chaosReportFile(o: Pick<ChaosOptions, 'engine' | 'seed'> & { deploy?: boolean }): string {
  if (o.deploy) return `chaos-deploy-${o.seed}.json`;
  return o.engine === 'prod' ? `chaos-prod-${o.seed}.json` : `chaos-${o.seed}.json`;
}
