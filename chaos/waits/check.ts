/**
 * The class's invariants, from every run's raw history, the supplier's record and what the callers were answered:
 *  - **no wait past its ceiling**: every timer a Book or a Cancel refusal started (the timer after a `book` or
 *    `sendCancel` activity, with no other activity between) is at most the profile's Retry-After ceiling, their sum
 *    in one run at most the 10-minute window refusals are retried in, and a caller's cancellation (its order runs) paused
 *    at most the 10 s a caller's update may be held; no Book re-sent after a refusal past the booking's deadline;
 *  - **every cancellation asked for ends done or with a person**: its order run (through the runs it continued as)
 *    `cancelled` on an order the supplier shows Cancelled (status 3), or an outcome of ORDER_OUTCOMES_NEEDING_A_PERSON;
 *  - **every overlapping request answered**: taken, or refused with a reason (`update-failed:<type>`), never left
 *    without an answer;
 *  - **no nondeterminism**: every history collected replays against the current workflow code (and no workflow task
 *    failed, no worker log line says so);
 *  - **nothing booked twice**: at most one supplier order per reference, Book at most `maxBookAttempts` times and
 *    Cancel at most `maxBookAttempts` times per reference (429s aside), at most one Cancel taken per order;
 *  - no workflow left open, failed or terminated.
 */
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../../src/api/contract/index';
import type { SandboxCall, SandboxOrderView } from '../../dev/sandbox/options';
import { NONDETERMINISM, runBuilds } from '../history';
import type { CollectedRun } from '../classes';
import type { WaitObservation } from './drive';
import type { WaitBooking } from './plan';

/** The window Book's and Cancel's refusals are retried in (src/workflows/booking/book.ts, order/cancel.ts). */
export const REFUSAL_WINDOW_MS = 10 * 60_000;
/** The longest a caller's update is held by refusals before it is answered (src/workflows/order/cancel.ts). */
export const CALLER_HOLD_MS = 10_000;

/** One wait a refusal started, as its history records it. */
export interface RefusalWait {
  workflowId: string;
  runId: string;
  after: 'book' | 'sendCancel';
  ms: number;
}

export interface WaitsFigures {
  runs: number;
  bookings: number;
  bookingOutcomes: Record<string, number>;
  cancellations: number;
  orderOutcomes: Record<string, number>;
  continuedAsNew: number;
  asks: Record<string, number>;
  /** The longest refusal wait seen, by what was refused, against its ceiling. */
  longestWaitMs: { book: number; cancel: number; ceiling: number };
  /** The shortest: a day's hint cut to the ceiling is waited in full (a shorter one would not honour it). */
  shortestWaitMs: { book: number; cancel: number };
  /** The longest a caller's confirm took to be answered, and the longest of those answered `cancel-refused`. */
  longestCallerAnswerMs: number;
  longestCallerRefusalMs: number;
  /** The longest gap between a 429 and the next Book or Cancel of its reference, as the supplier saw it. */
  longestSupplierGapMs: { book: number; cancel: number };
  refusalWaits: number;
  replayed: number;
  ordersTwice: number;
  cancelsTaken: number;
}

export interface WaitsCheck {
  figures: WaitsFigures;
  violations: string[];
  implicated: string[];
}

function ms(d: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!d) return 0;
  return Number(d.seconds ?? 0) * 1000 + Math.floor((d.nanos ?? 0) / 1e6);
}

/** The waits a Book or Cancel refusal started in one history: a timer right after a `book` or `sendCancel`. */
export function refusalWaits(run: Pick<CollectedRun, 'workflowId' | 'runId' | 'events'>): RefusalWait[] {
  const out: RefusalWait[] = [];
  let lastActivity: string | undefined;
  for (const e of run.events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) lastActivity = scheduled.activityType?.name ?? undefined;
    const timer = e.timerStartedEventAttributes;
    if (timer && (lastActivity === 'book' || lastActivity === 'sendCancel')) {
      out.push({ workflowId: run.workflowId, runId: run.runId, after: lastActivity, ms: ms(timer.startToFireTimeout) });
    }
    // A timer only counts for the activity just before it: the next one is a schedule's, not a refusal's.
    if (timer) lastActivity = undefined;
  }
  return out;
}

export function checkWaits(
  plan: WaitBooking[],
  observations: WaitObservation[],
  runs: CollectedRun[],
  supplier: { orders: SandboxOrderView[]; calls: SandboxCall[] },
  limits: { ceilingMs: number; deadlineMs: number; maxSends: number; workerLogLines: string[] },
  replay: { replayed: number; failed: Array<{ workflowId: string; runId: string; error: string }> },
): WaitsCheck {
  const violations: string[] = [];
  const implicated: string[] = [];
  const refOf = (workflowId: string) => workflowId.replace(/^(booking|order):/, '');
  const flag = (ref: string, line: string) => {
    violations.push(`${ref}: ${line}`);
    implicated.push(ref);
  };
  const planned = new Set(plan.map((b) => b.request.customerReferenceNo));

  // Waits: each refusal's timer, their sum per run, a caller's hold, and Book's re-send against the deadline.
  const waits = runs.flatMap(refusalWaits);
  const callerRuns = new Set(
    observations.filter((o) => o.kind === 'callerCancelRetryAfter').flatMap((o) => o.orderRunIds),
  );
  const perRun = new Map<string, number>();
  for (const w of waits) {
    if (w.ms > limits.ceilingMs)
      flag(
        refOf(w.workflowId),
        `a ${w.after} refusal waited ${w.ms} ms, past the ceiling ${limits.ceilingMs} ms (run ${w.runId})`,
      );
    perRun.set(w.runId, (perRun.get(w.runId) ?? 0) + w.ms);
  }
  for (const [runId, total] of perRun) {
    const w = waits.find((x) => x.runId === runId)!;
    if (total > REFUSAL_WINDOW_MS)
      flag(refOf(w.workflowId), `refusals waited ${total} ms in run ${runId}, past the 10-minute window`);
    if (callerRuns.has(runId) && total > CALLER_HOLD_MS)
      flag(
        refOf(w.workflowId),
        `a caller's cancellation was held ${total} ms by refusals (run ${runId}), past ${CALLER_HOLD_MS} ms`,
      );
  }
  const byRef = new Map<string, SandboxCall[]>();
  for (const c of supplier.calls) {
    for (const ref of c.customerReferenceNos ?? []) byRef.set(ref, [...(byRef.get(ref) ?? []), c]);
  }
  const gaps = { book: 0, cancel: 0 };
  for (const [ref, calls] of byRef) {
    for (const op of ['book', 'cancel'] as const) {
      const own = calls.filter((c) => c.op === op);
      own.forEach((c, i) => {
        const next = own[i + 1];
        if (c.httpStatus === 429 && next) gaps[op] = Math.max(gaps[op], Date.parse(next.at) - Date.parse(c.at));
      });
      const sends = own.filter((c) => c.httpStatus !== 429).length;
      if (sends > limits.maxSends)
        flag(ref, `${op} reached the supplier ${sends} times (429s aside), more than ${limits.maxSends}`);
    }
    const books = calls.filter((c) => c.op === 'book');
    const firstBook = books[0];
    const late = books.find(
      (c, i) =>
        i > 0 && books[i - 1]!.httpStatus === 429 && Date.parse(c.at) > Date.parse(firstBook!.at) + limits.deadlineMs,
    );
    if (late) flag(ref, `Book sent again after a refusal at ${late.at}, past the booking's deadline`);
  }

  // Nothing booked twice; every order is one of ours; one Cancel taken per order (the sandbox records one).
  const ordersByRef = new Map<string, number>();
  for (const order of supplier.orders)
    ordersByRef.set(order.customerReferenceNo, (ordersByRef.get(order.customerReferenceNo) ?? 0) + 1);
  let ordersTwice = 0;
  for (const [ref, n] of ordersByRef) {
    if (n > 1) {
      ordersTwice++;
      flag(ref, `${n} supplier orders`);
    }
    if (!planned.has(ref)) flag(ref, 'a supplier order for a reference no booking used');
  }

  // Every cancellation asked for: done (Cancelled at the supplier) or with a person.
  const orderOf = new Map(supplier.orders.map((x) => [x.customerReferenceNo, x]));
  const needsPerson = new Set<string>(ORDER_OUTCOMES_NEEDING_A_PERSON);
  // Asked: a caller's confirm was sent, or the booking's own cancel was taken.
  const asked = observations.filter(
    (o) => o.kind !== 'bookRetryAfter' && (o.asks.some((a) => a.what === 'confirm') || o.cancelRequested === true),
  );
  for (const o of asked) {
    const ref = o.customerReferenceNo;
    const done = o.orderOutcome === 'cancelled' && orderOf.get(ref)?.status === 3;
    if (!done && !needsPerson.has(o.orderOutcome ?? '')) {
      flag(
        ref,
        `cancellation asked (${o.kind}) ended ${o.orderOutcome ?? 'with no ending'}${o.orderOutcomeDetail ? ` (${o.orderOutcomeDetail})` : ''}${o.problem ? `: ${o.problem}` : ''}, neither done nor with a person`,
      );
    }
  }
  // A booking cancelled while it recovers is confirmed with the cancellation asked, or unresolved (a person): never failed over an order.
  for (const o of observations) {
    if (o.problem && !asked.includes(o)) flag(o.customerReferenceNo, `driver: ${o.problem}`);
    if (o.bookingOutcome === 'failed' && orderOf.has(o.customerReferenceNo))
      flag(o.customerReferenceNo, 'booking failed over an order that exists');
  }

  // Every overlapping request answered.
  const asks: Record<string, number> = {};
  let longestCallerAnswerMs = 0;
  let longestCallerRefusalMs = 0;
  for (const o of observations) {
    for (const a of o.asks) {
      const key = `${a.what} → ${a.answer.startsWith('error:') ? 'error' : a.answer.startsWith('signalled:') ? 'signalled' : a.answer}`;
      asks[key] = (asks[key] ?? 0) + 1;
      // `unknown (...)`: lost on the way, a run started by it but no answer came back (chaos/cancel.ts confirmCancel).
      if (a.answer.startsWith('error:') || a.answer.startsWith('unknown ('))
        flag(o.customerReferenceNo, `${a.what} got no answer: ${a.answer}`);
      if (o.kind === 'callerCancelRetryAfter' && a.what === 'confirm')
        longestCallerAnswerMs = Math.max(longestCallerAnswerMs, a.ms);
      if (o.kind === 'callerCancelRetryAfter' && a.answer === 'cancel-refused')
        longestCallerRefusalMs = Math.max(longestCallerRefusalMs, a.ms);
    }
  }

  // No nondeterminism; no run open, failed or terminated.
  for (const f of replay.failed) flag(refOf(f.workflowId), `run ${f.runId} does not replay: ${f.error}`);
  for (const r of runs) {
    const failures = runBuilds(r.workflowId, r.runId, r.type, r.events).taskFailures;
    for (const f of failures.filter((x) => NONDETERMINISM.test(`${x.cause} ${x.message}`)))
      flag(refOf(r.workflowId), `workflow task failed for nondeterminism in run ${r.runId}: ${f.message}`);
    if (!['COMPLETED', 'CONTINUED_AS_NEW'].includes(r.status)) flag(refOf(r.workflowId), `run ${r.runId} ${r.status}`);
  }
  const logHits = limits.workerLogLines.filter((l) => NONDETERMINISM.test(l));
  if (logHits.length)
    violations.push(`worker log lines naming nondeterminism: ${logHits.length} (${logHits[0]!.slice(0, 200)})`);

  const count = (xs: Array<string | undefined>) =>
    xs.reduce<Record<string, number>>((acc, x) => ({ ...acc, [x ?? 'none']: (acc[x ?? 'none'] ?? 0) + 1 }), {});
  const figures: WaitsFigures = {
    runs: runs.length,
    bookings: plan.length,
    bookingOutcomes: count(observations.map((o) => o.bookingOutcome)),
    cancellations: asked.length,
    orderOutcomes: count(asked.map((o) => o.orderOutcome)),
    continuedAsNew: runs.filter((r) => r.status === 'CONTINUED_AS_NEW').length,
    asks,
    longestWaitMs: {
      book: Math.max(0, ...waits.filter((w) => w.after === 'book').map((w) => w.ms)),
      cancel: Math.max(0, ...waits.filter((w) => w.after === 'sendCancel').map((w) => w.ms)),
      ceiling: limits.ceilingMs,
    },
    shortestWaitMs: {
      book: Math.min(...waits.filter((w) => w.after === 'book').map((w) => w.ms)),
      cancel: Math.min(...waits.filter((w) => w.after === 'sendCancel').map((w) => w.ms)),
    },
    longestCallerAnswerMs,
    longestCallerRefusalMs,
    longestSupplierGapMs: gaps,
    refusalWaits: waits.length,
    replayed: replay.replayed,
    ordersTwice,
    cancelsTaken: supplier.orders.filter((x) => x.cancel).length,
  };
  return { figures, violations, implicated: [...new Set(implicated)] };
}
