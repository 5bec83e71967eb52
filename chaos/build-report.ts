/**
 * The chaos run's report assembled from what each step saw: options and phases, outcomes and surprises, the
 * supplier's records, cancellations, the sweep, the chaos done, the secret scan, and where to look.
 */
import { cancellationTable } from './check/cancels';
import { coverage, outcomeMatrix } from './check/coverage';
import { type CancellationObservation, type Ending, type Observation, endingKind } from './check/observation';
import type { Collected } from './collect';
import type { Checked } from './invariants';
import type { PlannedBooking } from './mix';
import type { ChaosReport, ReconciliationReport } from './report';
import type { ChaosOptions } from './options';
import type { Stack } from './setup';
import { seconds } from './timing';
import type { FireRecord } from './under-fire';

/** Everything the report is made of. */
export interface RunRecord {
  o: ChaosOptions;
  /** When the run began (epoch ms). */
  t0: number;
  plan: PlannedBooking[];
  stack: Stack;
  fire: FireRecord;
  collected: Collected;
  checked: Checked;
  reconciliation: ReconciliationReport;
  /** Decoded histories written for a person (paths relative to the repository). */
  histories: string[];
  /** The temp dir, when it is kept. */
  tempDir: string | undefined;
}

/** The report, with the collecting phase and the whole run timed up to now. */
export function buildReport(r: RunRecord): ChaosReport {
  const { o, fire, collected, checked } = r;
  const { phaseStart } = fire.phases;
  const { observations } = collected;
  return {
    seed: o.seed,
    engine: o.engine,
    ok: checked.violations.length === 0,
    violations: checked.violations,
    options: {
      n: o.n,
      minutes: o.minutes,
      killEverySeconds: o.killEverySeconds,
      chaosTailSeconds: o.chaosTailSeconds,
      serverRestart: o.serverRestart,
      recovery: o.recovery,
      supplierTimeoutsMs: o.supplierTimeoutsMs,
      hardLimitSeconds: seconds(fire.phases.hardLimitAt - phaseStart),
    },
    elapsedSeconds: seconds(Date.now() - r.t0),
    phasesSeconds: {
      setup: seconds(r.stack.setupMs),
      starting: seconds(fire.startedAt - phaseStart),
      draining: seconds(fire.drainedAt - fire.startedAt),
      collecting: seconds(Date.now() - fire.drainedAt),
    },
    bookings: {
      planned: r.plan.length,
      started: fire.started.length,
      startFailures: r.plan.length - fire.started.length,
      startRetries: fire.starts.filter((s) => s && s.attempts > 1).length,
    },
    outcomes: tally(observations.map((x) => endingKind(x.ending))),
    expectedVsActual: outcomeMatrix(observations),
    unresolvedBySupplierStatus: unresolvedBySupplierStatus(observations, checked),
    ...surprisesOf(observations, fire.startedAtMs),
    faultClasses: coverage(observations, checked.calls, queriedRefs(checked)),
    queryOrdersFaults: { injected: fire.injected, faultedCalls: faultedQueryOrders(checked) },
    supplier: supplierSection(r),
    orphans: checked.orphans,
    stuck: checked.stuck,
    lost: checked.lost,
    workflowFailures: checked.workflowFailures,
    cancellations: cancellationsSection(r.plan, collected, checked),
    reconciliation: r.reconciliation,
    chaos: chaosSection(r.stack, fire),
    secrets: {
      historiesScanned: collected.historiesScanned,
      logLinesScanned: collected.logLinesScanned,
      hits: collected.secretHits,
    },
    artifacts: { ...(r.tempDir !== undefined ? { tempDir: r.tempDir } : {}), histories: r.histories },
  };
}

/** An unresolved booking is a person's job: what the supplier holds for those tells how big a job. */
function unresolvedBySupplierStatus(observations: Observation[], checked: Checked): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of observations) {
    if (endingKind(x.ending) !== 'unresolved') continue;
    const status = String(checked.counts.byRef.get(x.booking.request.customerReferenceNo)?.[0]?.status ?? 'no order');
    out[status] = (out[status] ?? 0) + 1;
  }
  return out;
}

/** The bookings that did not end as planned: how many, and the first 200 with a one-line digest each. */
function surprisesOf(
  observations: Observation[],
  startedAtMs: number[],
): Pick<ChaosReport, 'surprisesTotal' | 'surprises'> {
  const surprising = observations.filter((x) => endingKind(x.ending) !== x.booking.expected);
  return {
    surprisesTotal: surprising.length,
    surprises: surprising.slice(0, 200).map((x) => ({
      customerReferenceNo: x.booking.request.customerReferenceNo,
      startedAtSeconds: seconds(startedAtMs[x.booking.index] ?? NaN),
      test: x.booking.request.context?.test ?? '',
      expected: x.booking.expected,
      actual: endingKind(x.ending),
      digest: digest(x.ending),
    })),
  };
}

/** The references QueryOrders was asked about, for the fault classes' coverage. */
function queriedRefs(checked: Checked): Set<string> {
  return new Set(checked.calls.filter((c) => c.op === 'queryOrders').flatMap((c) => c.customerReferenceNos ?? []));
}

/** QueryOrders calls answered with an injected fault, per fault. */
function faultedQueryOrders(checked: Checked): Record<string, number> {
  const faultedCalls: Record<string, number> = {};
  for (const c of checked.calls)
    if (c.op === 'queryOrders' && c.fault) faultedCalls[c.fault] = (faultedCalls[c.fault] ?? 0) + 1;
  return faultedCalls;
}

/** What the supplier holds: orders per reference, duplicates and strays, Book sends over the limit, call stats. */
function supplierSection(r: RunRecord): ChaosReport['supplier'] {
  const { checked } = r;
  const stats = r.stack.sandbox.stats();
  return {
    orders: checked.orders.length,
    ordersPerReference: checked.counts.histogram,
    duplicates: checked.counts.duplicates,
    strayOrders: checked.counts.strays,
    bookSendsOverLimit: checked.overSends,
    stats: { byOperation: stats.byOperation, byStatus: stats.byStatus },
  };
}

/** How the cancellations on demand went, what the supplier took and charged, and their invariants. */
function cancellationsSection(
  plan: PlannedBooking[],
  collected: Collected,
  checked: Checked,
): ChaosReport['cancellations'] {
  const items: CancellationObservation[] = collected.cancelObservations;
  const cancelTable = cancellationTable(items);
  const cancelCalls = checked.calls.filter((c) => c.op === 'cancel');
  return {
    planned: plan.filter((b) => b.cancel).length,
    asked: items.filter((c) => c.acceptedFee !== undefined).length,
    byOutcome: cancelTable.byOutcome,
    byKind: cancelTable.byKind,
    windowMissed: items.filter((c) => c.windowMissed).length,
    cancelCalls: cancelCalls.length,
    cancelCallsByAnswer: tally(cancelCalls.map((c) => `${c.httpStatus}${c.fault ? ` ${c.fault}` : ''}`)),
    repeatsRefused: cancelCalls.filter((c) => c.fault === 'cancelRepeat').length,
    ordersCancelled: checked.orders.filter((x) => x.status === 3).length,
    feesCharged: checked.orders
      .filter((x) => x.cancel)
      .map((x) => ({
        ref: x.customerReferenceNo,
        status: x.status,
        charged: x.cancel!.serviceFee,
        accepted: checked.accepted.get(x.customerReferenceNo) ?? null,
      })),
    sendsOverRefusal: checked.cancelSends,
    feesNotAccepted: checked.feeViolations,
    notDone: checked.notDone,
    openOrderRunsAfterDrain: collected.openOrderRuns,
    overlaps: overlapsSection(plan, items, checked),
    items,
  };
}

/** Class cancelOverlaps: what the caller was told during recovery, how the bookings ended, the pairs of answers. */
function overlapsSection(
  plan: PlannedBooking[],
  items: CancellationObservation[],
  checked: Checked,
): ChaosReport['cancellations']['overlaps'] {
  const during = items.filter((c) => c.callerAnswer !== undefined || c.bookingOutcome !== undefined);
  const lagged = checked.calls.flatMap((c) => c.lagged ?? []);
  return {
    planned: plan.filter((b) => b.classes.includes('cancelOverlaps')).length,
    callerAnswers: tally(during.map((c) => c.callerAnswer ?? 'not asked')),
    callerRunOutcomes: tally(during.flatMap((c) => (c.callerRunOutcome ? [c.callerRunOutcome.split(':')[0]!] : []))),
    bookingOutcomes: tally(
      during.map((c) => `${c.bookingOutcome ?? 'none'}${c.cancelRequested ? ', cancelRequested' : ''}`),
    ),
    otherRunOutcomes: tally(during.flatMap((c) => c.otherRunOutcomes ?? [])),
    origins: tally(items.flatMap((c) => (c.origin ? [c.origin] : []))),
    duplicateAnswers: tally(items.flatMap((c) => (c.answers ? [[...c.answers].sort().join(' + ')] : []))),
    laggedAnswers: checked.calls.filter((c) => c.lagged?.length).length,
    laggedOrders: new Set(lagged).size,
  };
}

/** The chaos done: worker kills and restarts, server restarts or node kills, QueryOrders faults, the timeline. */
function chaosSection(stack: Stack, fire: FireRecord): ChaosReport['chaos'] {
  const { stats } = stack.fleet;
  const sorted = [...stats.startMs].sort((a, b) => a - b);
  return {
    workerKills: stats.kills,
    workerRestarts: stats.restarts,
    unexpectedWorkerExits: stats.unexpectedExits,
    workerStartMs: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0 },
    serverRestarts: fire.live.serverRestarts,
    serverDowntimeMs: fire.live.downtimeMs,
    nodeKills: fire.live.nodeKills,
    postgresRestarts: fire.live.postgresRestarts,
    queryOrdersFaultInjections: Object.values(fire.injected).reduce((a, b) => a + b, 0),
    timeline: fire.timeline,
  };
}

/** Counts per label. */
function tally(labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
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
