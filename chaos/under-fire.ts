/**
 * Steps 2 and 3 of the chaos run, and the drain: the planned bookings started evenly over `minutes` (each planned
 * cancellation set off once its booking has started) while the chaos loops break the stack; then the wait until
 * every workflow and cancellation has closed, or the hard limit.
 */
import type { Client } from '@temporalio/client';
import { InvalidBookingRequestError, startBooking } from '../src/api/client/index';
import { cancelPlanned, type CancelDriverOptions } from './cancel';
import { runDrill } from './deploy';
import { type CancellationObservation } from './check/observation';
import {
  killLoop,
  prodFaults,
  progress,
  queryOrdersFaults,
  restartServerOnce,
  type NodeKill,
  type PostgresRestart,
} from './faults';
import { startOrder, type PlannedBooking } from './mix';
import { makeOrphans, type Orphanage } from './orphans';
import type { ChaosOptions } from './options';
import type { Cleanups, Stack } from './setup';
import { seconds, sleep } from './timing';
import { openOnes, RUNNING_QUERY } from './workflows';

export type StartResult = { ok: true; attempts: number } | { ok: false; attempts: number; error: string };

/** What the chaos loops and the drain count as they go, for the progress line and the report. */
export interface Live {
  openCount: number;
  allClosed: boolean;
  serverRestarts: number;
  downtimeMs: number[];
  nodeKills: NodeKill[];
  postgresRestarts: PostgresRestart[];
}

/** The run's clock (epoch ms): when the starts begin, how long they take, when the chaos ends, the hard limit. */
export interface Phases {
  phaseStart: number;
  startPhaseMs: number;
  chaosEndsAt: number;
  hardLimitAt: number;
}

/** What happened while the bookings were started under fire and drained: the raw material of the report. */
export interface FireRecord {
  phases: Phases;
  /** When the last start was done, and when the drain was. */
  startedAt: number;
  drainedAt: number;
  starts: StartResult[];
  /** Per booking index, milliseconds from the phase start to its start. */
  startedAtMs: number[];
  started: PlannedBooking[];
  cancellations: Map<number, CancellationObservation>;
  orphanage: Orphanage;
  live: Live;
  timeline: string[];
  /** QueryOrders fault injections, per fault. */
  injected: Record<string, number>;
}

/** What the loops share while they run: the record so far, the cancellations under way, the timeline's pen. */
interface Fire extends Omit<FireRecord, 'startedAt' | 'drainedAt' | 'started' | 'cancellations'> {
  cancels: CancelsOnDemand;
  mark: (event: string) => void;
  /** Aborts when the caller's signal does or when the drain is over. */
  signal: AbortSignal;
}

/** Starts the plan under fire and drains it; throws `interrupted` when the caller's signal aborts. */
export async function bookUnderFire(
  o: ChaosOptions,
  plan: PlannedBooking[],
  stack: Stack,
  cleanups: Cleanups,
): Promise<FireRecord> {
  const userSignal = o.signal ?? new AbortController().signal;
  const phases = phasesFrom(o, Date.now());
  const chaosStop = new AbortController();
  const cancels = new CancelsOnDemand({
    client: stack.client,
    sandbox: stack.sandbox,
    recovery: o.recovery,
    until: phases.hardLimitAt,
    signal: userSignal,
  });
  const fire = newFire(plan.length, phases, cancels, AbortSignal.any([userSignal, chaosStop.signal]));
  const ordered = startOrder(plan, o.startOrder, o.recovery.deadlineSeconds ?? 24 * 3600);
  const slot = new Map(ordered.map((b, k) => [b.index, k]));
  const startAll = startBookings(ordered, fire.starts, {
    client: stack.client,
    concurrency: o.startConcurrency,
    dueAt: (i) => phases.phaseStart + (slot.get(i)! * phases.startPhaseMs) / Math.max(1, plan.length),
    onStarted: (i) => {
      fire.startedAtMs[i] = Date.now() - phases.phaseStart;
      cancels.startFor(plan[i]!);
    },
    signal: userSignal,
  });
  const loops = chaosLoops(o, plan, stack, fire);
  let startsDone = false;
  // The deploy drill ends once build A is drained and stopped (or at the hard limit): not cut short by the drain.
  const drill = stack.deploy
    ? runDrill(stack.deploy, stack.fleet, stack.deploy.record, {
        phaseStart: phases.phaseStart,
        startPhaseMs: phases.startPhaseMs,
        hardLimitAt: phases.hardLimitAt,
        startsDone: () => startsDone,
        envOf: stack.deploy.envOf,
        signal: userSignal,
        log: o.log,
        mark: fire.mark,
      })
    : Promise.resolve();
  cleanups.push(() => drill);
  // Whatever happens below, the chaos loops end before the stack is taken down.
  cleanups.push(async () => {
    chaosStop.abort();
    await Promise.allSettled(loops);
  });

  await startAll;
  startsDone = true;
  const startedAt = Date.now();
  if (!userSignal.aborted)
    o.log(
      `all starts done in ${seconds(startedAt - phases.phaseStart)} s; waiting for workflows to close (limit ${seconds(phases.hardLimitAt - Date.now())} s)`,
    );
  await drain(stack.client, fire, userSignal);
  await cancels.settled();
  await drill;
  fire.live.allClosed = true;
  chaosStop.abort();
  await Promise.allSettled(loops);
  if (userSignal.aborted) throw new Error('interrupted');
  const drainedAt = Date.now();
  const started = plan.filter((b) => fire.starts[b.index]?.ok);
  await confirmClosed(stack.raw, started, phases.hardLimitAt, userSignal);
  if (userSignal.aborted) throw new Error('interrupted');
  const { cancels: _cancels, mark: _mark, signal: _signal, ...record } = fire;
  return { ...record, startedAt, drainedAt, started, cancellations: cancels.results };
}

/** The run's clock from the moment the starts begin; the hard limit leaves the drain its own limit. */
function phasesFrom(o: ChaosOptions, phaseStart: number): Phases {
  const startPhaseMs = o.minutes * 60_000;
  const deadlineSeconds = o.recovery.deadlineSeconds ?? 24 * 3600;
  const drainLimitMs = (o.drainLimitSeconds ?? deadlineSeconds + 420) * 1000;
  return {
    phaseStart,
    startPhaseMs,
    chaosEndsAt: phaseStart + startPhaseMs + o.chaosTailSeconds * 1000,
    hardLimitAt: phaseStart + startPhaseMs + drainLimitMs,
  };
}

/** Nothing started, killed or injected yet; the timeline marks events in seconds since the phase start. */
function newFire(n: number, phases: Phases, cancels: CancelsOnDemand, signal: AbortSignal): Fire {
  const timeline: string[] = [];
  return {
    phases,
    starts: new Array<StartResult>(n),
    startedAtMs: new Array<number>(n),
    orphanage: { made: [], notMade: [] },
    live: { openCount: -1, allClosed: false, serverRestarts: 0, downtimeMs: [], nodeKills: [], postgresRestarts: [] },
    timeline,
    injected: {},
    cancels,
    mark: (event) => timeline.push(`t+${seconds(Date.now() - phases.phaseStart)} s ${event}`),
    signal,
  };
}

/** Cancellations on demand: each planned one waits for its booking's outcome, then quotes and cancels. */
class CancelsOnDemand {
  readonly results = new Map<number, CancellationObservation>();
  /** Cancellations under way: the kills go on while there are any. */
  inFlight = 0;
  private readonly tasks: Promise<void>[] = [];

  constructor(private readonly options: CancelDriverOptions) {}

  /** Sets off the booking's cancellation, if it has one planned. */
  startFor(booking: PlannedBooking): void {
    if (!booking.cancel) return;
    this.inFlight++;
    this.tasks.push(
      cancelPlanned(booking, this.options).then((c) => {
        this.results.set(booking.index, c);
        this.inFlight--;
      }),
    );
  }

  /** Every cancellation task ends by the hard limit (its own bound), so this wait is short. */
  async settled(): Promise<void> {
    await Promise.all(this.tasks);
  }
}

/** The chaos, as loops that run until the drain is over: kills, QueryOrders faults, orphans, server faults. */
function chaosLoops(o: ChaosOptions, plan: PlannedBooking[], stack: Stack, fire: Fire): Promise<void>[] {
  const { phases, live, mark, signal } = fire;
  return [
    killLoop(stack.fleet, {
      everyMs: o.killEverySeconds * 1000,
      firstAt: phases.phaseStart + o.killEverySeconds * 1000,
      endsAt: phases.chaosEndsAt,
      // Kills go on while cancellations are under way.
      keepGoing: () => fire.cancels.inFlight > 0,
      maxKills: o.maxKills,
      isDone: () => live.allClosed,
      signal,
      mark,
    }),
    queryOrdersFaults(stack.sandbox, {
      seed: o.seed,
      endsAt: phases.chaosEndsAt,
      injected: fire.injected,
      signal,
      log: o.log,
    }),
    makeOrphans(stack.raw, stack.sandbox, {
      targets: plan.filter((b) => b.orphanTarget).map((b) => b.request.customerReferenceNo),
      into: fire.orphanage,
      since: () => seconds(Date.now() - phases.phaseStart),
      signal,
      mark,
    }),
    serverFaults(o, stack.server, fire),
    progress(stack.client, {
      signal,
      onCount: (n) => (live.openCount = n),
      line: () => progressLine(plan, stack, fire),
      log: o.log,
    }),
  ];
}

/** The server's share: the production engine's node and PostgreSQL faults, else one dev-server restart. */
function serverFaults(o: ChaosOptions, server: Stack['server'], fire: Fire): Promise<void> {
  const { phases, live, mark, signal } = fire;
  if ('killNode' in server) {
    return prodFaults(server, {
      phaseStart: phases.phaseStart,
      startPhaseMs: phases.startPhaseMs,
      nodeDownMs: o.nodeDownSeconds * 1000,
      signal,
      log: o.log,
      mark,
      live,
    });
  }
  if (o.serverRestart === 'none') return Promise.resolve();
  return restartServerOnce(server, {
    at: phases.phaseStart + phases.startPhaseMs / 2,
    how: o.serverRestart,
    signal,
    log: o.log,
    mark,
    done: (ms) => {
      live.serverRestarts++;
      live.downtimeMs.push(ms);
      mark(`dev server back after ${ms} ms`);
    },
  });
}

/** The progress line: starts, workflows running, cancellations under way, kills and server restarts so far. */
function progressLine(plan: PlannedBooking[], stack: Stack, fire: Fire): string {
  const started = fire.starts.filter((s) => s?.ok).length;
  const current = stack.deploy?.record.steps.filter((s) => s.setAfterMs !== undefined).at(-1);
  const build = current ? `, build ${current.build} current, workers ${stack.fleet.liveSlots().join(' ')}` : '';
  return `t+${seconds(Date.now() - fire.phases.phaseStart)} s: started ${started}/${plan.length}, running ${fire.live.openCount}, cancellations under way ${fire.cancels.inFlight}, kills ${stack.fleet.stats.kills}, server restarts ${fire.live.serverRestarts}${build}`;
}

/** Waits until nothing runs (bookings, cancellations), or the hard limit. */
async function drain(client: Client, fire: Fire, signal: AbortSignal): Promise<void> {
  while (Date.now() < fire.phases.hardLimitAt && !signal.aborted) {
    try {
      fire.live.openCount = (await client.workflow.count(RUNNING_QUERY)).count;
      if (fire.live.openCount === 0 && fire.cancels.inFlight === 0) break;
    } catch {
      // The server may be restarting: ask again.
    }
    await sleep(3_000, signal);
  }
}

/** Visibility lags a little behind: confirms every booking closed by describing it, waiting out the last ones. */
async function confirmClosed(
  raw: Client,
  started: PlannedBooking[],
  hardLimitAt: number,
  signal: AbortSignal,
): Promise<void> {
  let stillOpen = await openOnes(raw, started);
  while (stillOpen.length > 0 && Date.now() < hardLimitAt && !signal.aborted) {
    await sleep(3_000, signal);
    stillOpen = await openOnes(raw, stillOpen);
  }
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
  const pending = new Set<Promise<void>>();
  for (const booking of plan) {
    if (opts.signal.aborted) break;
    await sleep(opts.dueAt(booking.index) - Date.now(), opts.signal);
    while (pending.size >= opts.concurrency) await Promise.race(pending);
    const p: Promise<void> = startWithRetries(opts.client, booking, opts.signal)
      .then((r) => {
        results[booking.index] = r;
        if (r.ok) opts.onStarted(booking.index);
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

/** One booking's start, tried again with backoff for up to 3 minutes; a request the helper refuses is thrown. */
async function startWithRetries(client: Client, booking: PlannedBooking, signal: AbortSignal): Promise<StartResult> {
  const giveUpAt = Date.now() + 180_000;
  for (let attempt = 1; ; attempt++) {
    try {
      await startBooking(client, booking.request);
      return { ok: true, attempts: attempt };
    } catch (err) {
      if (err instanceof InvalidBookingRequestError) throw err;
      if (Date.now() > giveUpAt || signal.aborted) {
        return { ok: false, attempts: attempt, error: err instanceof Error ? err.message : String(err) };
      }
      await sleep(Math.min(500 * 2 ** attempt, 5_000), signal);
    }
  }
}
