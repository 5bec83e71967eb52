/**
 * The class's invariants, per account, from every run's raw history, each supplier's own record (its orders and the
 * calls it received) and what the callers saw:
 *  - **nothing booked twice**: at most one order per reference at its account's supplier, none at the other's;
 *  - **the failing account's bookings end confirmed once it returns, or with a person told** (`unresolved`), their
 *    order Confirmed at its supplier; the healthy account's all end confirmed;
 *  - **the healthy account is not delayed by the failing one**: of its bookings no worker kill struck (none of their
 *    tasks lost with a worker), the p95 start-to-outcome of those started while the other account failed (each phase
 *    apart) is at most twice (or 2 s over) that of those started while it was up;
 *  - **every Book, Cancel and QueryOrders of a booking went to its own account's supplier only**: the histories
 *    schedule `book`, `sendCancel` and `queryOrder` only on that account's queues, and each supplier received calls
 *    (CheckAvail by session, the others by reference) only for its own account's bookings;
 *  - every cancellation asked for ends `cancelled` (its order Cancelled) or with a person;
 *  - **every history replays** against the workflow bundle, no workflow task failed for nondeterminism, no workflow
 *    left open, failed or terminated.
 */
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../../src/api/contract/index';
import type { SandboxCall, SandboxOrderView } from '../../dev/sandbox/options';
import { NONDETERMINISM, runBuilds } from '../history';
import type { CollectedRun } from '../classes';
import type { AccountObservation } from './drive';
import type { OutagePhase } from './outage';
import { FAILING, HEALTHY, type AccountBooking } from './plan';

const CONFIRMED = 2;
const CANCELLED = 3;
/** The activities that call the supplier from an account's own queues. */
const ROUTED_ACTIVITIES = new Set(['book', 'sendCancel', 'queryOrder']);

export interface SupplierRecord {
  orders: SandboxOrderView[];
  calls: SandboxCall[];
}

export interface Latency {
  count: number;
  p50: number;
  p95: number;
  max: number;
}

export interface AccountFigures {
  bookings: number;
  outcomes: Record<string, number>;
  cancellations: Record<string, number>;
  orders: number;
  /** Requests its supplier received, by operation (HTTP 429 and failures included). */
  calls: Record<string, number>;
  latencyMs: Latency;
  /** By the failing account's phase the booking was started in. */
  latencyByPhaseMs: Record<string, Latency>;
  /** Bookings a worker kill struck: a task of theirs lost with its worker (timed out, then tried again). */
  struckByKill: number;
  /** The same by phase, of the bookings no kill struck: what the other account alone could have changed. */
  untouchedByPhaseMs: Record<string, Latency>;
  /** Bookings that reached an outcome per minute, from the first start to the last outcome of the account. */
  perMinute: number;
}

export interface AccountsCheck {
  figures: {
    accounts: Record<string, AccountFigures>;
    runs: number;
    replayed: number;
    routedActivities: number;
  };
  violations: string[];
}

export function checkAccounts(
  plan: AccountBooking[],
  observations: AccountObservation[],
  runs: CollectedRun[],
  suppliers: Record<string, SupplierRecord>,
  phases: OutagePhase[],
  replay: { replayed: number; failed: Array<{ workflowId: string; runId: string; error: string }> },
  workerLogLines: string[],
): AccountsCheck {
  const violations: string[] = [];
  const accountOf = new Map(plan.map((b) => [b.request.customerReferenceNo, b.account as string]));
  const obsOf = new Map(observations.map((o) => [o.customerReferenceNo, o]));
  const short = (ref: string) => ref.slice(0, 8);

  // Nothing booked twice, and no order at the other account's supplier.
  for (const [account, record] of Object.entries(suppliers)) {
    const count = new Map<string, number>();
    for (const o of record.orders) count.set(o.customerReferenceNo, (count.get(o.customerReferenceNo) ?? 0) + 1);
    for (const [ref, n] of count) {
      if (n > 1) violations.push(`${account}: ${short(ref)} has ${n} orders`);
      if (accountOf.get(ref) !== account) {
        violations.push(`${account}: an order for ${short(ref)}, a booking of ${accountOf.get(ref) ?? 'no plan'}`);
      }
    }
  }

  // Outcomes, orders and cancellations, per booking.
  for (const b of plan) {
    const ref = b.request.customerReferenceNo;
    const o = obsOf.get(ref);
    const order = suppliers[b.account]?.orders.find((x) => x.customerReferenceNo === ref);
    const where = `${b.account} ${short(ref)} (started t+${Math.round((o?.startedAtMs ?? 0) / 1000)} s, ${phaseAt(phases, o?.startedAtMs ?? 0)})`;
    if (!o || o.problem || !o.bookingOutcome) {
      violations.push(`${where}: no outcome seen${o?.problem ? `: ${o.problem}` : ''}`);
      continue;
    }
    const allowed = b.account === FAILING ? ['confirmed', 'unresolved'] : ['confirmed'];
    if (!allowed.includes(o.bookingOutcome)) {
      violations.push(`${where}: ended ${o.bookingOutcome}${o.bookingDetail ? ` (${o.bookingDetail})` : ''}`);
    }
    if (o.bookingOutcome === 'confirmed') {
      const want = o.cancel?.orderOutcome === 'cancelled' ? CANCELLED : CONFIRMED;
      if (!order) violations.push(`${where}: confirmed, but its supplier has no order`);
      else if (!o.cancel && order.status !== want) {
        violations.push(`${where}: confirmed, but its order is in status ${order.status}`);
      } else if (o.cancel?.orderOutcome === 'cancelled' && order.status !== CANCELLED) {
        violations.push(`${where}: cancelled, but its order is in status ${order.status}`);
      }
    }
    if (b.cancel && o.bookingOutcome === 'confirmed') {
      const ended = o.cancel?.orderOutcome;
      if (ended !== 'cancelled' && !ORDER_OUTCOMES_NEEDING_A_PERSON.includes(ended as never)) {
        violations.push(
          `${where}: cancellation asked (${o.cancel?.answer ?? 'not asked'}), ended ${ended ?? 'unknown'}: neither cancelled nor for a person`,
        );
      }
    }
  }

  // Routing in the histories: every supplier activity of a booking on its own account's queues.
  let routedActivities = 0;
  for (const run of runs) {
    const ref = run.workflowId.replace(/^(booking|order):/, '');
    const account = accountOf.get(ref);
    if (!account) continue;
    for (const e of run.events) {
      const a = e.activityTaskScheduledEventAttributes;
      const type = a?.activityType?.name ?? '';
      if (!a || !ROUTED_ACTIVITIES.has(type)) continue;
      routedActivities++;
      const queue = a.taskQueue?.name ?? '';
      const named = /@([a-z0-9-]+?)(-query-orders)?$/.exec(queue)?.[1];
      if (named !== account) {
        violations.push(`${account} ${short(ref)}: ${type} scheduled on ${queue} (${run.workflowId} ${run.runId})`);
      }
    }
  }

  // Routing at the suppliers: each received calls only for its own account's bookings.
  for (const [account, record] of Object.entries(suppliers)) {
    for (const c of record.calls) {
      const refs =
        c.op === 'checkAvail'
          ? [c.sessionId?.replace(/^chaos-/, '') ?? '']
          : c.op === 'ticket'
            ? []
            : (c.customerReferenceNos ?? []);
      for (const ref of refs) {
        if (accountOf.get(ref) !== account) {
          violations.push(
            `${account}: received ${c.op} for ${short(ref)}, a booking of ${accountOf.get(ref) ?? 'no plan'}`,
          );
        }
      }
    }
  }

  // Replay, nondeterminism, workflows left open or ended badly.
  for (const f of replay.failed) violations.push(`replay failed: ${f.workflowId} ${f.runId}: ${f.error}`);
  for (const run of runs) {
    const builds = runBuilds(run.workflowId, run.runId, run.type, run.events);
    for (const t of builds.taskFailures) {
      if (NONDETERMINISM.test(`${t.cause} ${t.message}`)) {
        violations.push(`nondeterminism: ${run.workflowId} ${run.runId}: ${t.message}`);
      }
    }
    if (!['COMPLETED', 'CONTINUED_AS_NEW'].includes(run.status)) {
      violations.push(`${run.workflowId} ${run.runId} is ${run.status}`);
    }
  }
  const nd = workerLogLines.filter((l) => NONDETERMINISM.test(l));
  if (nd.length) violations.push(`${nd.length} worker log lines name nondeterminism, first: ${nd[0]!.slice(0, 200)}`);

  const struck = struckByKills(runs);
  const accounts = Object.fromEntries(
    [HEALTHY, FAILING].map((account) => [
      account,
      figuresOf(
        plan.filter((b) => b.account === account),
        obsOf,
        suppliers[account]!,
        phases,
        struck,
      ),
    ]),
  );
  // The healthy account while the other fails, against itself while both are up: its bookings no kill struck, whose
  // time only the other account could have changed.
  const healthy = accounts[HEALTHY]!.untouchedByPhaseMs;
  const up = healthy.up;
  for (const [phase, l] of Object.entries(healthy)) {
    if (phase === 'up' || !up || l.count === 0) continue;
    const bound = Math.max(2 * up.p95, up.p95 + 2_000);
    if (l.p95 > bound) {
      violations.push(
        `${HEALTHY} delayed while ${FAILING} was ${phase}: p95 ${l.p95} ms over ${bound} ms (up: p95 ${up.p95} ms), bookings no kill struck`,
      );
    }
  }
  return { figures: { accounts, runs: runs.length, replayed: replay.replayed, routedActivities }, violations };
}

/**
 * The references whose booking run lost a task to a worker kill: a workflow task timed out, or an activity started again after
 * its attempt timed out (a killed worker's task waits out its timeout before another takes it).
 */
function struckByKills(runs: CollectedRun[]): Set<string> {
  const struck = new Set<string>();
  for (const run of runs) {
    // Only the booking's own run: its outcome's time is what the figures read.
    if (!run.workflowId.startsWith('booking:')) continue;
    const hit = run.events.some(
      (e) =>
        e.workflowTaskTimedOutEventAttributes ||
        e.activityTaskTimedOutEventAttributes ||
        (e.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo &&
          (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1),
    );
    if (hit) struck.add(run.workflowId.slice('booking:'.length));
  }
  return struck;
}

function figuresOf(
  bookings: AccountBooking[],
  obsOf: Map<string, AccountObservation>,
  supplier: SupplierRecord,
  phases: OutagePhase[],
  struck: Set<string>,
): AccountFigures {
  const outcomes: Record<string, number> = {};
  const cancellations: Record<string, number> = {};
  const calls: Record<string, number> = {};
  const latencies: number[] = [];
  const byPhase = new Map<string, number[]>();
  const untouched = new Map<string, number[]>();
  let first = Infinity;
  let last = 0;
  for (const b of bookings) {
    const o = obsOf.get(b.request.customerReferenceNo);
    const kind = o?.bookingOutcome ?? 'none';
    outcomes[kind] = (outcomes[kind] ?? 0) + 1;
    if (o?.cancel)
      cancellations[o.cancel.orderOutcome ?? 'none'] = (cancellations[o.cancel.orderOutcome ?? 'none'] ?? 0) + 1;
    if (!o || o.outcomeAtMs === undefined) continue;
    const ms = o.outcomeAtMs - o.startedAtMs;
    latencies.push(ms);
    const phase = phaseAt(phases, o.startedAtMs);
    byPhase.set(phase, [...(byPhase.get(phase) ?? []), ms]);
    if (!struck.has(b.request.customerReferenceNo)) untouched.set(phase, [...(untouched.get(phase) ?? []), ms]);
    first = Math.min(first, o.startedAtMs);
    last = Math.max(last, o.outcomeAtMs);
  }
  for (const c of supplier.calls) calls[c.op] = (calls[c.op] ?? 0) + 1;
  return {
    bookings: bookings.length,
    outcomes,
    cancellations,
    orders: supplier.orders.length,
    calls,
    latencyMs: latency(latencies),
    latencyByPhaseMs: Object.fromEntries([...byPhase].map(([p, ms]) => [p, latency(ms)])),
    struckByKill: bookings.filter((b) => struck.has(b.request.customerReferenceNo)).length,
    untouchedByPhaseMs: Object.fromEntries([...untouched].map(([p, ms]) => [p, latency(ms)])),
    perMinute: last > first ? Math.round((latencies.length * 60_000 * 10) / (last - first)) / 10 : 0,
  };
}

/** The failing account's phase at `atMs` from the start of bookings: `up` outside every fault. */
export function phaseAt(phases: OutagePhase[], atMs: number): string {
  return phases.find((p) => atMs >= p.fromMs && atMs < p.toMs)?.mode ?? 'up';
}

function latency(ms: number[]): Latency {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! : 0);
  return { count: s.length, p50: at(0.5), p95: at(0.95), max: s.at(-1) ?? 0 };
}
