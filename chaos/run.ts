/**
 * `runChaos`: books N times through the client helper while the stack is being broken on purpose, then
 * checks that every booking ended in a way the supplier's records agree with.
 *
 * The story:
 *  1. Stand up a private stack (chaos/stack.ts): dev server on a temp database, sandbox supplier in
 *     process, two worker processes with payload encryption, short supplier timeouts and a prebuilt bundle.
 *  2. Start the planned bookings (chaos/mix.ts) evenly over `minutes`, each with its faults in the `Test`
 *     header and the recovery schedule scaled down through `request.recovery`.
 *  3. Meanwhile: SIGKILL a worker every few seconds (alternating, restarted at once), burst 429s and 500s
 *     on QueryOrders, and once kill the dev server and start it again on the same database and ports.
 *     A few bookings (`orphans`) are terminated on purpose once their Book has made the order: orphans.
 *  4. Wait until every workflow has closed (bounded), then collect each ending, the supplier's orders
 *     and calls, every raw history and every worker log line, and check the invariants (chaos/check.ts).
 *  5. Run the reconciliation sweep over the run's booking window: it must report exactly the orphans made
 *     in step 3, and as mismatches exactly the orders whose status the bookings' outcomes do not account for.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  bookingStateQuery,
  bookingWorkflowId,
  connectClient,
  DEFAULT_TASK_QUEUE,
  orderWorkflowId,
  SWEEP_WORKFLOW_TYPE,
  type SweepResult,
  InvalidBookingRequestError,
  startBooking,
  type RecoveryOptions,
} from '../src/client';
import { createEncryptionCodec, newEncryptionKey } from '../src/codec/encryption';
import type { Sandbox } from '../dev/sandbox/server';
import { defaultSupplierProfile } from '../src/supplier/profile';
import type { SweepWorkflowInput } from '../src/workflows/sweep';
import {
  bookSendsOverLimit,
  cancelSendViolations,
  cancellationTable,
  coverage,
  feesNotAccepted,
  type CancellationObservation,
  endingKind,
  expectedSweepFindings,
  findOrphans,
  orderCounts,
  outcomeMatrix,
  scanHistory,
  scanLogLines,
  type Ending,
  type Observation,
  type SecretHit,
  setDifference,
} from './check';
import { markOrphanTargets, planBookings, substream, type PlannedBooking } from './mix';
import { cancelAfterConfirm } from './cancel';
import type { BookingProblem, ChaosReport, ReconciliationReport } from './report';
import {
  buildBundle,
  compileWorker,
  startChaosSandbox,
  startProdServer,
  startServer,
  WorkerFleet,
  type Log,
  type ProdServerHandle,
  type ServerHandle,
} from './stack';

const REPO = path.resolve(__dirname, '..');
const APP_KEY = 'sandbox-app';
const APP_SECRET = 'sandbox-secret';
const WORKER_SLOTS = ['A', 'B'];
const RUNNING_QUERY = 'WorkflowType = "bookingWorkflow" AND ExecutionStatus = "Running"';
const RUNNING_ORDERS_QUERY = 'WorkflowType = "orderWorkflow" AND ExecutionStatus = "Running"';

/**
 * The production schedule (30 s, 1, 2, 4, 8 min, then every 10 min; re-Book after 10 min; give up after
 * 24 h) scaled 60× down, and the deadline 576× down, so a run resolves in minutes, not a day. Below the
 * production bounds: `testing`, and the run's workers have RECOVERY_TESTING=on.
 */
export const CHAOS_RECOVERY: RecoveryOptions = {
  testing: true,
  delaysSeconds: [0.5, 1, 2, 4, 8],
  repeatEverySeconds: 10,
  rebookAfterSeconds: 10,
  deadlineSeconds: 150,
};

/** Client timeouts short enough that a hang costs seconds; CheckAvail's 2 s is inside the workflow's 30 s. */
export const CHAOS_SUPPLIER_TIMEOUTS_MS = { book: 3_000, checkAvail: 2_000, queryOrders: 2_000 };

export interface ChaosOptions {
  n: number;
  seed: number;
  /** Bookings are started evenly over this many minutes, while workers are killed and faults injected. */
  minutes: number;
  killEverySeconds: number;
  /** Stop killing after this many kills (the smoke test keeps its run short with it). */
  maxKills: number;
  /** Kills and QueryOrders faults go on this long after the last start. */
  chaosTailSeconds: number;
  /** How the dev server is brought down once, halfway through the starts; `none` to skip. */
  serverRestart: 'SIGKILL' | 'SIGTERM' | 'none';
  /**
   * `dev`: the CLI dev server on SQLite. `prod`: PostgreSQL and two Temporal nodes (dev/prod); instead of
   * the dev-server restart, one node is SIGKILLed at a third of the starts and brought back, PostgreSQL
   * is restarted at half, and the other node is SIGKILLed at two thirds.
   */
  engine: 'dev' | 'prod';
  /** Prod engine: how long a killed node stays down before it is started again. */
  nodeDownSeconds: number;
  recovery: RecoveryOptions;
  supplierTimeoutsMs: { book: number; checkAvail: number; queryOrders: number };
  /**
   * After the last start, how long the run waits for every workflow to close before calling the rest stuck.
   * Default: the recovery deadline plus 7 minutes, room for CheckAvail's retries and a Book whose worker was
   * killed (its activity times out after the workflow's 2 minutes).
   */
  drainLimitSeconds?: number;
  /** Where chaos-<seed>.json (and, on violations, the histories involved) go; null writes nothing. */
  resultsDir: string | null;
  /** A prebuilt workflow bundle; built when absent. */
  bundlePath?: string;
  /** Start requests in flight at once. */
  startConcurrency: number;
  /**
   * Bookings whose workflow the run terminates once their Book has made the order (orphans made on purpose,
   * reported apart from the run's own failures); the reconciliation sweep at the end must find exactly them.
   */
  orphans: number;
  /** Keep the temp dir (database, worker logs, build) even when every invariant held. */
  keepTempDir: boolean;
  log: Log;
  signal?: AbortSignal;
}

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
    recovery: CHAOS_RECOVERY,
    supplierTimeoutsMs: CHAOS_SUPPLIER_TIMEOUTS_MS,
    resultsDir: path.join(REPO, 'chaos', 'results'),
    startConcurrency: 16,
    orphans: Math.ceil((overrides.n ?? 1000) / 100),
    keepTempDir: false,
    log: (line) => process.stderr.write(`[chaos] ${line}\n`),
    ...overrides,
  };
}

type StartResult = { ok: true; attempts: number } | { ok: false; attempts: number; error: string };

export async function runChaos(overrides: Partial<ChaosOptions> = {}): Promise<ChaosReport> {
  const o = chaosDefaults(overrides);
  const log = o.log;
  const t0 = Date.now();
  const seconds = (ms: number) => Math.round(ms / 100) / 10;
  const dir = mkdtempSync(path.join(os.tmpdir(), `chaos-${o.seed}-`));
  const cleanups: Array<() => Promise<void>> = [];
  const userSignal = o.signal ?? new AbortController().signal;
  let keepDir = o.keepTempDir;

  try {
    log(`seed ${o.seed}: ${o.n} bookings over ${o.minutes} min; temp dir ${dir}`);
    const plan = markOrphanTargets(planBookings({ n: o.n, seed: o.seed, recovery: o.recovery }), o.orphans, o.seed);

    // --- 1. The stack ------------------------------------------------------------------------------
    const sandboxP = startChaosSandbox();
    const serverP: Promise<ServerHandle | ProdServerHandle> =
      o.engine === 'prod' ? startProdServer(dir, log) : startServer(dir, log);
    // Registered before awaiting, so a failure of one still stops the others.
    cleanups.push(async () => (await sandboxP.catch(() => undefined))?.close());
    cleanups.push(async () => (await serverP.catch(() => undefined))?.stop());
    const [entry, bundlePath, sandbox, server] = await Promise.all([
      compileWorker(path.join(dir, 'lib')),
      o.bundlePath ?? buildBundle(dir),
      sandboxP,
      serverP,
    ]);
    const keyId = `chaos-${o.seed}`;
    const key = newEncryptionKey();
    const keys = `${keyId}:${key}`;
    writeFileSync(path.join(dir, 'payload-encryption-keys'), `${keys}\n`, { mode: 0o600 });
    const fleet = new WorkerFleet({
      entry,
      slots: WORKER_SLOTS,
      logDir: dir,
      log,
      env: workerEnv({
        TEMPORAL_ADDRESS: server.address,
        SUPPLIER_BASE_URL: sandbox.url,
        SUPPLIER_APP_KEY: APP_KEY,
        SUPPLIER_APP_SECRET: APP_SECRET,
        SUPPLIER_PROFILE: JSON.stringify({ timeoutsMs: o.supplierTimeoutsMs }),
        PAYLOAD_ENCRYPTION_KEYS: keys,
        WORKER_WORKFLOW_BUNDLE: bundlePath,
        LOG_LEVEL: 'WARN',
        // The bookings' schedule is CHAOS_RECOVERY's, below the production bounds.
        RECOVERY_TESTING: 'on',
      }),
    });
    cleanups.push(() => fleet.stop());
    await fleet.start();
    // The client helper, configured exactly like a partner's backend: same variables, same keys.
    const client = await connectClient({ TEMPORAL_ADDRESS: server.address, PAYLOAD_ENCRYPTION_KEYS: keys });
    cleanups.push(() => client.connection.close());
    // The same server, read without the codec: what an export or a backup holds.
    const raw = new Client({ connection: client.connection, namespace: 'default' });
    const setupMs = Date.now() - t0;
    log(
      `stack up in ${seconds(setupMs)} s: server ${server.address}, sandbox ${sandbox.url}, workers ${WORKER_SLOTS.join(', ')}`,
    );

    // --- 2 and 3. Bookings, under fire --------------------------------------------------------------
    const phaseStart = Date.now();
    const startPhaseMs = o.minutes * 60_000;
    const chaosEndsAt = phaseStart + startPhaseMs + o.chaosTailSeconds * 1000;
    const deadlineSeconds = o.recovery.deadlineSeconds ?? 24 * 3600;
    const drainLimitMs = (o.drainLimitSeconds ?? deadlineSeconds + 420) * 1000;
    const hardLimitAt = phaseStart + startPhaseMs + drainLimitMs;
    const chaosStop = new AbortController();
    const chaosSignal = AbortSignal.any([userSignal, chaosStop.signal]);
    const live = {
      openCount: -1,
      allClosed: false,
      serverRestarts: 0,
      downtimeMs: [] as number[],
      nodeKills: [] as ChaosReport['chaos']['nodeKills'],
      postgresRestarts: [] as ChaosReport['chaos']['postgresRestarts'],
    };
    const timeline: string[] = [];
    const mark = (event: string) => timeline.push(`t+${seconds(Date.now() - phaseStart)} s ${event}`);
    const startedAtMs: number[] = new Array(plan.length);
    const injected: Record<string, number> = {};

    const starts: StartResult[] = new Array(plan.length);
    const orphanage: Orphanage = { made: [], notMade: [] };
    // Cancellations on demand: each planned one waits for its booking's outcome, then quotes and cancels.
    const cancellations = new Map<number, CancellationObservation>();
    const cancelTasks: Promise<void>[] = [];
    let cancelsInFlight = 0;
    const startAll = startBookings(plan, starts, {
      client,
      concurrency: o.startConcurrency,
      dueAt: (i) => phaseStart + (i * startPhaseMs) / Math.max(1, plan.length),
      onStarted: (i) => {
        startedAtMs[i] = Date.now() - phaseStart;
        const booking = plan[i]!;
        if (!booking.cancel) return;
        cancelsInFlight++;
        cancelTasks.push(
          cancelAfterConfirm(booking, {
            client,
            sandbox,
            recovery: o.recovery,
            until: hardLimitAt,
            signal: userSignal,
          }).then((c) => {
            cancellations.set(i, c);
            cancelsInFlight--;
          }),
        );
      },
      signal: userSignal,
    });
    const loops = [
      killLoop(fleet, {
        everyMs: o.killEverySeconds * 1000,
        firstAt: phaseStart + o.killEverySeconds * 1000,
        endsAt: chaosEndsAt,
        // Kills go on while cancellations are under way.
        keepGoing: () => cancelsInFlight > 0,
        maxKills: o.maxKills,
        isDone: () => live.allClosed,
        signal: chaosSignal,
        mark,
      }),
      queryOrdersFaults(sandbox, { seed: o.seed, endsAt: chaosEndsAt, injected, signal: chaosSignal, log }),
      makeOrphans(raw, sandbox, {
        targets: plan.filter((b) => b.orphanTarget).map((b) => b.request.customerReferenceNo),
        into: orphanage,
        since: () => seconds(Date.now() - phaseStart),
        signal: chaosSignal,
        mark,
      }),
      'killNode' in server
        ? prodFaults(server, {
            phaseStart,
            startPhaseMs,
            nodeDownMs: o.nodeDownSeconds * 1000,
            signal: chaosSignal,
            log,
            mark,
            live,
          })
        : o.serverRestart === 'none'
          ? Promise.resolve()
          : restartServerOnce(server, {
              at: phaseStart + startPhaseMs / 2,
              how: o.serverRestart,
              signal: chaosSignal,
              log,
              mark,
              done: (ms) => {
                live.serverRestarts++;
                live.downtimeMs.push(ms);
                mark(`dev server back after ${ms} ms`);
              },
            }),
      progress(client, {
        signal: chaosSignal,
        onCount: (n) => (live.openCount = n),
        line: () => {
          const started = starts.filter((s) => s?.ok).length;
          return `t+${seconds(Date.now() - phaseStart)} s: started ${started}/${plan.length}, running ${live.openCount}, cancellations under way ${cancelsInFlight}, kills ${fleet.stats.kills}, server restarts ${live.serverRestarts}`;
        },
        log,
      }),
    ];
    // Whatever happens below, the chaos loops end before the stack is taken down.
    cleanups.push(async () => {
      chaosStop.abort();
      await Promise.allSettled(loops);
    });

    await startAll;
    const startedAt = Date.now();
    if (!userSignal.aborted)
      log(
        `all starts done in ${seconds(startedAt - phaseStart)} s; waiting for workflows to close (limit ${seconds(hardLimitAt - Date.now())} s)`,
      );

    // --- 4. Drain: until nothing runs (bookings, cancellations), or the hard limit -------------------
    while (Date.now() < hardLimitAt && !userSignal.aborted) {
      try {
        live.openCount = (await client.workflow.count(RUNNING_QUERY)).count;
        if (live.openCount === 0 && cancelsInFlight === 0) break;
      } catch {
        // The server may be restarting: ask again.
      }
      await sleep(3_000, userSignal);
    }
    // Every cancellation task ends by the hard limit (its own bound), so this wait is short.
    await Promise.all(cancelTasks);
    live.allClosed = true;
    chaosStop.abort();
    await Promise.allSettled(loops);
    if (userSignal.aborted) throw new Error('interrupted');
    const drainedAt = Date.now();

    // Visibility lags a little behind: confirm every booking by describing it, waiting out the last ones.
    const started = plan.filter((b) => starts[b.index]?.ok);
    let stillOpen = await openOnes(raw, started);
    while (stillOpen.length > 0 && Date.now() < hardLimitAt && !userSignal.aborted) {
      await sleep(3_000, userSignal);
      stillOpen = await openOnes(raw, stillOpen);
    }
    if (userSignal.aborted) throw new Error('interrupted');

    // --- 5. Collect and check -----------------------------------------------------------------------
    log('collecting outcomes, histories and supplier records');
    const key32 = Buffer.from(key, 'base64');
    const secrets = [APP_SECRET, key, key32.toString('latin1')];
    const observations: Observation[] = [];
    const secretHits: SecretHit[] = [];
    let historiesScanned = 0;
    await forEachLimit(plan, 8, async (booking) => {
      const start = starts[booking.index];
      if (!start?.ok) {
        observations.push({ booking, ending: { state: 'not-started', detail: start?.error ?? 'never attempted' } });
        return;
      }
      const ending = await endingOf(client, raw, booking);
      observations.push({ booking, ending });
      if (ending.state === 'lost') return;
      for (const history of await rawHistories(raw, booking)) {
        historiesScanned++;
        secretHits.push(
          ...scanHistory(`history of ${booking.request.customerReferenceNo}`, history, {
            secrets,
            personal: booking.personal,
          }),
        );
      }
    });
    observations.sort((a, b) => a.booking.index - b.booking.index);
    for (const x of observations) {
      const c = cancellations.get(x.booking.index);
      if (c) x.cancellation = c;
    }
    // Cancellations planned for bookings never started have no observation of their own.
    const cancelObservations = observations.flatMap((x) => (x.cancellation ? [x.cancellation] : []));
    // The order runs' raw histories too: what they hold must be as free of secrets as the bookings'.
    await forEachLimit(cancelObservations, 8, async (c) => {
      const personal = plan.find((b) => b.request.customerReferenceNo === c.customerReferenceNo)?.personal ?? [];
      for (const runId of c.runIds ?? []) {
        const history = await retry(() =>
          raw.workflow.getHandle(orderWorkflowId(c.customerReferenceNo), runId).fetchHistory(),
        ).catch(() => undefined);
        if (!history) continue;
        historiesScanned++;
        secretHits.push(
          ...scanHistory(`history of ${orderWorkflowId(c.customerReferenceNo)} run ${runId}`, historyToJSON(history), {
            secrets,
            personal,
          }),
        );
      }
    });
    // Order runs still open now would be stuck (the drain waited for every cancellation).
    const openOrderRuns = await retry(() => client.workflow.count(RUNNING_ORDERS_QUERY)).then(
      (r) => r.count,
      () => -1,
    );
    // The orphans made on purpose ended terminated: their own state, not a workflow failure.
    const madeRefs = new Set(orphanage.made.map((m) => m.customerReferenceNo));
    for (const x of observations) {
      if (madeRefs.has(x.booking.request.customerReferenceNo) && x.ending.state === 'workflow-failed') {
        x.ending = { state: 'orphaned', detail: x.ending.detail };
      }
    }
    const logLines = fleet.lines.map((l) => ({ where: `worker ${l.worker} ${l.stream}`, line: l.line }));
    secretHits.push(...scanLogLines(logLines, { secrets, personal: plan.flatMap((b) => b.personal) }));

    const reconciliation = await sweepAndCompare(client, sandbox, observations, orphanage, {
      orphansAsked: plan.filter((b) => b.orphanTarget).length,
      windowStartMs: phaseStart - 60_000,
      seed: o.seed,
      log,
    });
    const orders = sandbox.orders();
    const calls = sandbox.calls();
    const counts = orderCounts(orders, plan);
    const orphans = findOrphans(observations, counts.byRef);
    const overSends = bookSendsOverLimit(calls, o.recovery.maxBookAttempts ?? 2);
    const cancelSends = cancelSendViolations(calls, orders);
    const accepted = new Map(
      cancelObservations.filter((c) => c.acceptedFee !== undefined).map((c) => [c.customerReferenceNo, c.acceptedFee]),
    );
    const feeViolations = feesNotAccepted(orders, accepted);
    const cancelTable = cancellationTable(cancelObservations);
    const cancelCalls = calls.filter((c) => c.op === 'cancel');
    const queryRefs = new Set(calls.filter((c) => c.op === 'queryOrders').flatMap((c) => c.customerReferenceNos ?? []));
    const classes = coverage(observations, calls, queryRefs);
    const problems = (state: Ending['state']): BookingProblem[] =>
      observations
        .filter((x) => x.ending.state === state)
        .map((x) => ({
          customerReferenceNo: x.booking.request.customerReferenceNo,
          detail: 'detail' in x.ending ? x.ending.detail : '',
        }));
    const stuck = problems('open');
    const lost = problems('lost');
    const workflowFailures = problems('workflow-failed');
    const notStarted = problems('not-started');
    const outcomes: Record<string, number> = {};
    for (const x of observations) outcomes[endingKind(x.ending)] = (outcomes[endingKind(x.ending)] ?? 0) + 1;
    const faultedCalls: Record<string, number> = {};
    for (const c of calls)
      if (c.op === 'queryOrders' && c.fault) faultedCalls[c.fault] = (faultedCalls[c.fault] ?? 0) + 1;

    const violations = [
      ...counts.duplicates.map((d) => `duplicate: ${d.orders} supplier orders for ${d.ref}`),
      ...counts.strays.map((ref) => `duplicate: a supplier order for ${ref}, which no booking uses`),
      ...overSends.map(
        (s) => `Book sent ${s.bookSends} times for ${s.ref} (at most ${o.recovery.maxBookAttempts ?? 2})`,
      ),
      ...orphans.map((x) => `orphan: ${x.customerReferenceNo}: ${x.why}`),
      ...stuck.map((x) => `stuck: ${x.customerReferenceNo} still open at the hard limit: ${x.detail}`),
      ...lost.map((x) => `lost: ${x.customerReferenceNo}: ${x.detail}`),
      ...workflowFailures.map((x) => `workflow failed: ${x.customerReferenceNo}: ${x.detail}`),
      ...notStarted.map((x) => `not started: ${x.customerReferenceNo}: ${x.detail}`),
      ...cancelSends.map((v) => `Cancel sent twice over a refusal (${v.rule}): ${v.ref}: ${v.detail}`),
      ...feeViolations.map((v) => `cancelled at a fee nobody accepted: ${v.ref}: ${v.why}`),
      ...cancelObservations
        .filter((c) => c.state === 'open' || c.state === 'error')
        .map(
          (c) =>
            `cancellation ${c.state === 'open' ? 'stuck' : 'failed'}: ${orderWorkflowId(c.customerReferenceNo)} (${c.kind}): ${c.detail ?? ''}`,
        ),
      ...(openOrderRuns > 0 ? [`stuck: ${openOrderRuns} order runs still open after the drain`] : []),
      ...secretHits.map((h) => `secret: ${h.what} in ${h.where}`),
      ...(fleet.stats.unexpectedExits > 0 ? [`${fleet.stats.unexpectedExits} worker exits nobody caused`] : []),
      ...reconciliationViolations(reconciliation),
    ];

    const implicated = [
      ...counts.duplicates.map((d) => d.ref),
      ...overSends.map((s) => s.ref),
      ...cancelSends.map((v) => v.ref),
      ...feeViolations.map((v) => v.ref),
      ...orphans.map((x) => x.customerReferenceNo),
      ...stuck.map((x) => x.customerReferenceNo),
      ...workflowFailures.map((x) => x.customerReferenceNo),
      ...reconciliation.orphansMissed,
      ...reconciliation.orphansExtra,
      ...reconciliation.mismatchesMissed,
      ...reconciliation.mismatchesExtra,
    ];
    const histories: string[] = [];
    if (violations.length > 0) {
      keepDir = true;
      if (o.resultsDir) {
        const codec = createEncryptionCodec({ keys: new Map([[keyId, key32]]), activeKeyId: keyId });
        for (const ref of [...new Set(implicated)].slice(0, 20)) {
          const file = path.join(o.resultsDir, `chaos-${o.seed}-${ref}.history.json`);
          mkdirSync(o.resultsDir, { recursive: true });
          writeFileSync(file, await decodedHistory(raw, ref, codec));
          histories.push(path.relative(REPO, file));
        }
      }
    }

    // An unresolved booking is a person's job: what the supplier holds for those tells how big a job.
    const unresolvedBySupplierStatus: Record<string, number> = {};
    for (const x of observations) {
      if (endingKind(x.ending) !== 'unresolved') continue;
      const status = String(counts.byRef.get(x.booking.request.customerReferenceNo)?.[0]?.status ?? 'no order');
      unresolvedBySupplierStatus[status] = (unresolvedBySupplierStatus[status] ?? 0) + 1;
    }
    const surprising = observations.filter((x) => endingKind(x.ending) !== x.booking.expected);
    const surprises = surprising.slice(0, 200).map((x) => ({
      customerReferenceNo: x.booking.request.customerReferenceNo,
      startedAtSeconds: seconds(startedAtMs[x.booking.index] ?? NaN),
      test: x.booking.request.context?.test ?? '',
      expected: x.booking.expected,
      actual: endingKind(x.ending),
      digest: digest(x.ending),
    }));
    const sorted = [...fleet.stats.startMs].sort((a, b) => a - b);
    const report: ChaosReport = {
      seed: o.seed,
      engine: o.engine,
      ok: violations.length === 0,
      violations,
      options: {
        n: o.n,
        minutes: o.minutes,
        killEverySeconds: o.killEverySeconds,
        chaosTailSeconds: o.chaosTailSeconds,
        serverRestart: o.serverRestart,
        recovery: o.recovery,
        supplierTimeoutsMs: o.supplierTimeoutsMs,
        hardLimitSeconds: seconds(hardLimitAt - phaseStart),
      },
      elapsedSeconds: seconds(Date.now() - t0),
      phasesSeconds: {
        setup: seconds(setupMs),
        starting: seconds(startedAt - phaseStart),
        draining: seconds(drainedAt - startedAt),
        collecting: seconds(Date.now() - drainedAt),
      },
      bookings: {
        planned: plan.length,
        started: started.length,
        startFailures: plan.length - started.length,
        startRetries: starts.filter((s) => s && s.attempts > 1).length,
      },
      outcomes,
      expectedVsActual: outcomeMatrix(observations),
      unresolvedBySupplierStatus,
      surprisesTotal: surprising.length,
      surprises,
      faultClasses: classes,
      queryOrdersFaults: { injected, faultedCalls },
      supplier: {
        orders: orders.length,
        ordersPerReference: counts.histogram,
        duplicates: counts.duplicates,
        strayOrders: counts.strays,
        bookSendsOverLimit: overSends,
        stats: { byOperation: sandbox.stats().byOperation, byStatus: sandbox.stats().byStatus },
      },
      orphans,
      stuck,
      lost,
      workflowFailures,
      cancellations: {
        planned: plan.filter((b) => b.cancel).length,
        asked: cancelObservations.filter((c) => c.acceptedFee !== undefined).length,
        byOutcome: cancelTable.byOutcome,
        byKind: cancelTable.byKind,
        windowMissed: cancelObservations.filter((c) => c.windowMissed).length,
        cancelCalls: cancelCalls.length,
        cancelCallsByAnswer: tally(cancelCalls.map((c) => `${c.httpStatus}${c.fault ? ` ${c.fault}` : ''}`)),
        repeatsRefused: cancelCalls.filter((c) => c.fault === 'cancelRepeat').length,
        ordersCancelled: orders.filter((x) => x.status === 3).length,
        feesCharged: orders
          .filter((x) => x.cancel)
          .map((x) => ({
            ref: x.customerReferenceNo,
            status: x.status,
            charged: x.cancel!.serviceFee,
            accepted: accepted.get(x.customerReferenceNo) ?? null,
          })),
        sendsOverRefusal: cancelSends,
        feesNotAccepted: feeViolations,
        openOrderRunsAfterDrain: openOrderRuns,
        items: cancelObservations,
      },
      reconciliation,
      chaos: {
        workerKills: fleet.stats.kills,
        workerRestarts: fleet.stats.restarts,
        unexpectedWorkerExits: fleet.stats.unexpectedExits,
        workerStartMs: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0 },
        serverRestarts: live.serverRestarts,
        serverDowntimeMs: live.downtimeMs,
        nodeKills: live.nodeKills,
        postgresRestarts: live.postgresRestarts,
        queryOrdersFaultInjections: Object.values(injected).reduce((a, b) => a + b, 0),
        timeline,
      },
      secrets: { historiesScanned, logLinesScanned: logLines.length, hits: secretHits },
      artifacts: { ...(keepDir ? { tempDir: dir } : {}), histories },
    };
    if (o.resultsDir) {
      mkdirSync(o.resultsDir, { recursive: true });
      writeFileSync(path.join(o.resultsDir, chaosReportFile(o)), `${JSON.stringify(report, null, 2)}\n`);
    }
    return report;
  } catch (err) {
    keepDir = true;
    log(`run failed; kept ${dir} for inspection`);
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((err: unknown) => log(`cleanup: ${err instanceof Error ? err.message : String(err)}`));
    }
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

function tally(labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
}

/** chaos-<seed>.json, or chaos-prod-<seed>.json on the production engine. */
export function chaosReportFile(o: Pick<ChaosOptions, 'engine' | 'seed'>): string {
  return o.engine === 'prod' ? `chaos-prod-${o.seed}.json` : `chaos-${o.seed}.json`;
}

/**
 * The production engine's faults: at a third of the start phase one Temporal node is SIGKILLed (its shards
 * move to the other node, then back when it returns), at half PostgreSQL is restarted under load, and at
 * two thirds the other node is SIGKILLed.
 */
async function prodFaults(
  server: ProdServerHandle,
  opts: {
    phaseStart: number;
    startPhaseMs: number;
    nodeDownMs: number;
    signal: AbortSignal;
    log: Log;
    mark: (event: string) => void;
    live: { nodeKills: ChaosReport['chaos']['nodeKills']; postgresRestarts: ChaosReport['chaos']['postgresRestarts'] };
  },
): Promise<void> {
  const at = (fraction: number) => opts.phaseStart + opts.startPhaseMs * fraction;
  const since = () => Math.round((Date.now() - opts.phaseStart) / 100) / 10;
  const killNode = async (index: number, fraction: number) => {
    await sleep(at(fraction) - Date.now(), opts.signal);
    if (opts.signal.aborted) return;
    const node = server.nodeNames[index]!;
    const atSeconds = since();
    opts.mark(`SIGKILL Temporal ${node}`);
    const downMs = await server.killNode(index, opts.nodeDownMs);
    opts.log(`Temporal ${node} back after ${downMs} ms`);
    opts.mark(`Temporal ${node} back after ${downMs} ms`);
    opts.live.nodeKills.push({ node, atSeconds, downMs });
  };
  await killNode(0, 1 / 3);
  await sleep(at(1 / 2) - Date.now(), opts.signal);
  if (!opts.signal.aborted) {
    const atSeconds = since();
    opts.mark('PostgreSQL restart');
    const downMs = await server.restartPostgres();
    opts.log(`PostgreSQL back after ${downMs} ms`);
    opts.mark(`PostgreSQL back after ${downMs} ms`);
    opts.live.postgresRestarts.push({ atSeconds, downMs });
  }
  await killNode(1, 2 / 3);
}

/** One line on how a booking ended, for the bookings that did not end as planned. */
function digest(ending: Ending): string {
  if (ending.state !== 'completed') return ending.detail;
  const o = ending.outcome;
  switch (o.kind) {
    case 'unresolved': {
      const attempts = o.bookAttempts.map((a) => `${a.at.slice(11, 19)} ${a.result}${a.error ? ` ${a.error}` : ''}`);
      const last = o.polls[o.polls.length - 1];
      return `book attempts [${attempts.join('; ')}]; ${o.polls.length} polls, last ${last ? `${last.at.slice(11, 19)} ${last.result}${last.status !== undefined ? ` status ${last.status}` : ''}` : '-'}`;
    }
    case 'failed':
      return `${o.errorType ?? ''} ${o.reason}${o.order ? ` (order status ${o.order.status})` : ''}`.trim();
    case 'confirmed':
      return `order ${o.order.platformReferenceNo ?? ''} status ${o.order.status}`;
    case 'price-rejected':
      return `${o.reason}: expected ${o.expectedPrice.amount}, now ${o.currentPrice?.amount ?? '?'}`;
    default:
      return o.kind;
  }
}

/** The worker's environment: ours, over the parent's minus anything that would configure a worker differently. */
function workerEnv(own: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (kv): kv is [string, string] =>
      kv[1] !== undefined && !/^(TEMPORAL_|SUPPLIER_|WORKER_|PAYLOAD_|BOOKING_|RECOVERY_|LOG_LEVEL$)/.test(kv[0]),
  );
  // The build lives in the temp dir: its `require`s find the project's dependencies through NODE_PATH.
  return { ...Object.fromEntries(inherited), NODE_PATH: path.join(REPO, 'node_modules'), ...own };
}

/** Starts each booking at its time, retrying through a server restart (a retried start is idempotent). */
async function startBookings(
  plan: PlannedBooking[],
  results: StartResult[],
  opts: {
    client: Client;
    concurrency: number;
    dueAt: (i: number) => number;
    onStarted: (i: number) => void;
    signal: AbortSignal;
  },
): Promise<void> {
  const startOne = async (booking: PlannedBooking): Promise<StartResult> => {
    const giveUpAt = Date.now() + 180_000;
    for (let attempt = 1; ; attempt++) {
      try {
        await startBooking(opts.client, booking.request);
        return { ok: true, attempts: attempt };
      } catch (err) {
        if (err instanceof InvalidBookingRequestError) throw err;
        if (Date.now() > giveUpAt || opts.signal.aborted) {
          return { ok: false, attempts: attempt, error: err instanceof Error ? err.message : String(err) };
        }
        await sleep(Math.min(500 * 2 ** attempt, 5_000), opts.signal);
      }
    }
  };
  const pending = new Set<Promise<void>>();
  for (const booking of plan) {
    if (opts.signal.aborted) break;
    await sleep(opts.dueAt(booking.index) - Date.now(), opts.signal);
    while (pending.size >= opts.concurrency) await Promise.race(pending);
    const p: Promise<void> = startOne(booking)
      .then((r) => {
        results[booking.index] = r;
        if (r.ok) opts.onStarted(booking.index);
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

/** SIGKILLs the workers in turn, each restarted at once, skipping a turn while the target is still starting. */
async function killLoop(
  fleet: WorkerFleet,
  opts: {
    everyMs: number;
    firstAt: number;
    endsAt: number;
    keepGoing: () => boolean;
    maxKills: number;
    isDone: () => boolean;
    signal: AbortSignal;
    mark: (event: string) => void;
  },
): Promise<void> {
  let turn = 0;
  for (
    let at = opts.firstAt;
    (at < opts.endsAt || opts.keepGoing()) && fleet.stats.kills < opts.maxKills;
    at += opts.everyMs
  ) {
    await sleep(at - Date.now(), opts.signal);
    if (opts.signal.aborted || opts.isDone()) return;
    const slot = WORKER_SLOTS[turn % WORKER_SLOTS.length]!;
    if (!fleet.isReady(slot)) continue;
    opts.mark(`SIGKILL worker ${slot}`);
    await fleet.kill(slot);
    turn++;
  }
}

/** The orphans the run made on purpose, and the targets it could not make one of (with why). */
interface Orphanage {
  made: Array<{ customerReferenceNo: string; atSeconds: number }>;
  notMade: Array<{ customerReferenceNo: string; why: string }>;
}

const TERMINATE_REASON = 'chaos run: an orphan made on purpose (terminated after Book made the order)';

/**
 * Terminates each target's booking workflow as soon as the supplier holds its order, while the order is still
 * Confirming: the workflow cannot have seen it confirmed, so it has not handed it to an order workflow, and
 * nothing Temporal knows stands for the order any more. A terminate refused while the server is down is
 * tried again on the next tick; a target whose order settled first, or whose workflow closed first, is
 * reported as not made (the sweep must then find nothing for it).
 */
async function makeOrphans(
  raw: Client,
  sandbox: Sandbox,
  opts: {
    targets: string[];
    into: Orphanage;
    since: () => number;
    signal: AbortSignal;
    mark: (event: string) => void;
  },
): Promise<void> {
  const pending = new Set(opts.targets);
  const notMade = (ref: string, why: string) => {
    pending.delete(ref);
    opts.into.notMade.push({ customerReferenceNo: ref, why });
  };
  while (pending.size > 0 && !opts.signal.aborted) {
    await sleep(250, opts.signal);
    const orders = new Map(sandbox.orders().map((x) => [x.customerReferenceNo, x]));
    for (const ref of [...pending]) {
      const order = orders.get(ref);
      if (!order || opts.signal.aborted) continue;
      if (order.status !== defaultSupplierProfile.orderStatus.confirming) {
        notMade(ref, `its order settled (status ${order.status}) before the workflow could be terminated`);
        continue;
      }
      try {
        await raw.workflow.getHandle(bookingWorkflowId(ref)).terminate(TERMINATE_REASON);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) notMade(ref, 'its booking workflow closed before the terminate');
        // Otherwise the server is likely restarting: the next tick tries again.
        continue;
      }
      const handedOff = await raw.workflow
        .getHandle(orderWorkflowId(ref))
        .describe()
        .then(
          () => true,
          (err: unknown) => (err instanceof WorkflowNotFoundError ? false : undefined),
        );
      if (handedOff === true) {
        notMade(ref, 'terminated, but it had handed its order to an order workflow already');
        continue;
      }
      pending.delete(ref);
      opts.into.made.push({ customerReferenceNo: ref, atSeconds: opts.since() });
      opts.mark(`terminated booking ${ref} after its Book (orphan made)`);
    }
  }
  for (const ref of pending) notMade(ref, 'its order never appeared while the run went on');
}

/** Sweeps are over in seconds; this bounds a sweep that cannot run (a worker missing, say). */
const SWEEP_LIMIT_MS = 5 * 60_000;

/**
 * Runs the reconciliation sweep workflow on the run's workers over its whole booking window (the Schedule's
 * sweep with no settle time: every booking has closed) and compares what it reports with the orphans made
 * and with the mismatches the run's own outcomes and the supplier's orders predict.
 */
async function sweepAndCompare(
  client: Client,
  sandbox: Sandbox,
  observations: Observation[],
  orphanage: Orphanage,
  opts: { orphansAsked: number; windowStartMs: number; seed: number; log: Log },
): Promise<ReconciliationReport> {
  const workflowId = `chaos-sweep-${opts.seed}-${Date.now()}`;
  const input: SweepWorkflowInput = {
    lookbackMinutes: Math.ceil((Date.now() - opts.windowStartMs) / 60_000) + 1,
    settleMinutes: 0,
    sliceMinutes: 5,
    cancelOrphans: false,
    statuses: defaultSupplierProfile.orderStatus,
  };
  opts.log(`reconciliation sweep ${workflowId} over the last ${input.lookbackMinutes} min`);
  let result: SweepResult | undefined;
  let sweepError: string | undefined;
  try {
    const handle = await client.workflow.start(SWEEP_WORKFLOW_TYPE, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId,
      args: [input],
      workflowExecutionTimeout: SWEEP_LIMIT_MS,
    });
    result = (await handle.result()) as SweepResult;
  } catch (err) {
    sweepError =
      err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
        : String(err);
  }
  const counts = new Map<string, ReturnType<Sandbox['orders']>>();
  for (const order of sandbox.orders()) {
    counts.set(order.customerReferenceNo, [...(counts.get(order.customerReferenceNo) ?? []), order]);
  }
  const expected = expectedSweepFindings(observations, counts);
  const made = orphanage.made.map((m) => m.customerReferenceNo);
  const sweptOrphans = (result?.orphans ?? []).map((f) => f.customerReferenceNo);
  const sweptMismatches = (result?.mismatches ?? []).map((f) => f.customerReferenceNo);
  const orphanDiff = setDifference(made, sweptOrphans);
  const mismatchDiff = setDifference(expected.mismatches, sweptMismatches);
  opts.log(
    result
      ? `sweep: ${result.ordersSeen} orders; orphans ${sweptOrphans.length} (made ${made.length}), mismatches ${sweptMismatches.length} (expected ${expected.mismatches.length})`
      : `sweep did not finish: ${sweepError}`,
  );
  return {
    orphansAsked: opts.orphansAsked,
    orphansMade: orphanage.made,
    orphansNotMade: orphanage.notMade,
    sweep: result
      ? {
          workflowId,
          window: result.window,
          requests: result.requests,
          ordersSeen: result.ordersSeen,
          unreadable: result.unreadable,
          orphans: result.orphans.map((f) => ({
            customerReferenceNo: f.customerReferenceNo,
            status: f.status,
            reason: f.reason,
          })),
          mismatches: result.mismatches.map((f) => ({
            customerReferenceNo: f.customerReferenceNo,
            status: f.status,
            reason: f.reason,
          })),
        }
      : null,
    ...(sweepError ? { sweepError } : {}),
    supplierOrders: counts.size,
    expectedMismatches: expected.mismatches,
    orphansMissed: result ? orphanDiff.missed : [],
    orphansExtra: orphanDiff.extra,
    mismatchesMissed: result ? mismatchDiff.missed : [],
    mismatchesExtra: mismatchDiff.extra,
  };
}

/** The sweep's part of the invariants: it ran, found every orphan made and nothing else, and every mismatch. */
function reconciliationViolations(r: ReconciliationReport): string[] {
  return [
    ...(r.sweepError !== undefined ? [`reconciliation sweep did not finish: ${r.sweepError}`] : []),
    ...(r.sweep && r.sweep.unreadable > 0 ? [`reconciliation sweep: ${r.sweep.unreadable} orders unreadable`] : []),
    ...r.orphansMissed.map((ref) => `reconciliation: the sweep missed the orphan ${ref}`),
    ...r.orphansExtra.map(
      (ref) => `reconciliation: the sweep reported ${ref} as an orphan, but the run made no orphan of it`,
    ),
    ...r.mismatchesMissed.map((ref) => `reconciliation: the sweep missed the mismatch of ${ref}`),
    ...r.mismatchesExtra.map(
      (ref) => `reconciliation: the sweep reported a mismatch for ${ref} that the outcomes do not show`,
    ),
  ];
}

/** Every few seconds, the next k QueryOrders requests fail with 429 or 500 (whoever sends them). */
async function queryOrdersFaults(
  sandbox: Sandbox,
  opts: { seed: number; endsAt: number; injected: Record<string, number>; signal: AbortSignal; log: Log },
): Promise<void> {
  const rng = substream(opts.seed, 'queryOrders');
  for (let i = 0; i < 10_000 && Date.now() < opts.endsAt; i++) {
    await sleep(rng.int(3_000, 8_000), opts.signal);
    if (opts.signal.aborted) return;
    const fault = i % 2 === 0 ? '429' : '500';
    sandbox.configure({ queryOrders: { fault, times: rng.int(2, 8) } });
    opts.injected[fault] = (opts.injected[fault] ?? 0) + 1;
  }
}

async function restartServerOnce(
  server: ServerHandle,
  opts: {
    at: number;
    how: 'SIGKILL' | 'SIGTERM';
    signal: AbortSignal;
    log: Log;
    mark: (event: string) => void;
    done: (downMs: number) => void;
  },
): Promise<void> {
  await sleep(opts.at - Date.now(), opts.signal);
  if (opts.signal.aborted) return;
  opts.log(`dev server: ${opts.how}, then a restart on the same database and ports`);
  opts.mark(`dev server ${opts.how}`);
  const downMs = await server.restart(opts.how);
  opts.log(`dev server back after ${downMs} ms`);
  opts.done(downMs);
}

/** A line every 15 s, so a long run shows it is alive. */
async function progress(
  client: Client,
  opts: { signal: AbortSignal; onCount: (n: number) => void; line: () => string; log: Log },
): Promise<void> {
  for (let i = 0; i < 100_000 && !opts.signal.aborted; i++) {
    await sleep(15_000, opts.signal);
    if (opts.signal.aborted) return;
    try {
      opts.onCount((await client.workflow.count(RUNNING_QUERY)).count);
    } catch {
      // The server may be restarting; the next tick will tell.
    }
    opts.log(opts.line());
  }
}

/** The bookings among `bookings` whose workflow still runs (or cannot be described right now). */
async function openOnes(raw: Client, bookings: PlannedBooking[]): Promise<PlannedBooking[]> {
  const open: PlannedBooking[] = [];
  await forEachLimit(bookings, 8, async (b) => {
    const desc = await describe(raw, b).catch(() => undefined);
    // Unknown counts as open: only a closed workflow ends the wait.
    if (desc === undefined || (desc !== 'not-found' && desc.status.name === 'RUNNING')) open.push(b);
  });
  return open;
}

async function describe(raw: Client, b: PlannedBooking): Promise<WorkflowExecutionDescription | 'not-found'> {
  return retry(async () => {
    try {
      return await raw.workflow.getHandle(bookingWorkflowId(b.request.customerReferenceNo)).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not-found' as const;
      throw err;
    }
  });
}

/** The booking's ending: its outcome, or why there is none (with what an operator would look at). */
async function endingOf(client: Client, raw: Client, booking: PlannedBooking): Promise<Ending> {
  const ref = booking.request.customerReferenceNo;
  let desc: WorkflowExecutionDescription | 'not-found';
  try {
    desc = await describe(raw, booking);
  } catch (err) {
    return { state: 'lost', detail: `describe failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (desc === 'not-found') return { state: 'lost', detail: 'the server does not know the workflow' };
  const handle = client.workflow.getHandle(bookingWorkflowId(ref));
  const status = desc.status.name;
  if (status === 'COMPLETED') return { state: 'completed', outcome: await retry(() => handle.result()) };
  if (status === 'RUNNING') {
    const state = await Promise.race([
      handle.query(bookingStateQuery).then(
        (s) =>
          `stage ${s.stage}, deadline ${s.deadlineAt ?? '-'}, book attempts ${s.bookAttempts.length}, polls ${s.polls.length}`,
        (err: unknown) => `query failed: ${err instanceof Error ? err.message : String(err)}`,
      ),
      sleep(10_000).then(() => 'query unanswered in 10 s'),
    ]);
    const pending = desc.raw.pendingActivities?.map((a) => `${a.activityType?.name} attempt ${a.attempt}`) ?? [];
    return {
      state: 'open',
      detail: `started ${desc.startTime.toISOString()}, ${desc.historyLength} events, ${state}, pending activities [${pending.join(', ')}]`,
    };
  }
  const why = await handle.result().then(
    () => '',
    (err: unknown) =>
      err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
        : String(err),
  );
  return { state: 'workflow-failed', detail: `${status}${why ? `: ${why}` : ''}` };
}

/** Every run's history, raw (no codec), as JSON; follows continue-as-new back to the first run. */
async function rawHistories(raw: Client, booking: PlannedBooking): Promise<string[]> {
  const id = bookingWorkflowId(booking.request.customerReferenceNo);
  const out: string[] = [];
  let runId: string | undefined;
  for (let i = 0; i < 50; i++) {
    const history = await retry(() => raw.workflow.getHandle(id, runId).fetchHistory());
    out.push(historyToJSON(history));
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    runId = started?.continuedExecutionRunId || undefined;
    if (!runId) break;
  }
  return out;
}

/** A history with every payload decrypted and decoded, for a person reading about a violation. */
async function decodedHistory(
  raw: Client,
  ref: string,
  codec: ReturnType<typeof createEncryptionCodec>,
): Promise<string> {
  const history = await raw.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
  const json: unknown = JSON.parse(historyToJSON(history));
  const decode = async (node: unknown): Promise<unknown> => {
    if (Array.isArray(node)) return Promise.all(node.map(decode));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    if (typeof obj.data === 'string' && obj.metadata && typeof obj.metadata === 'object') {
      try {
        const payload: Payload = {
          metadata: Object.fromEntries(
            Object.entries(obj.metadata as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
          ),
          data: Buffer.from(obj.data, 'base64'),
        };
        const [plain] = await codec.decode([payload]);
        return { decoded: defaultPayloadConverter.fromPayload(plain!) };
      } catch {
        return obj;
      }
    }
    return Object.fromEntries(await Promise.all(Object.entries(obj).map(async ([k, v]) => [k, await decode(v)])));
  };
  return `${JSON.stringify(await decode(json), null, 2)}\n`;
}

/** A few attempts for calls made after the chaos, when the server should answer. */
async function retry<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await sleep(500 * i);
    }
  }
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}
