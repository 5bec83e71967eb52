/**
 * What a chaos run must prove, as pure functions over what it observed: each booking's ending, the
 * sandbox supplier's orders and calls, raw workflow histories and worker log lines.
 *
 * The invariants (each must be 0): two orders for one reference; an order the booking's outcome does not
 * account for (an orphan); a workflow still open past its deadline (stuck); a started workflow the server
 * no longer knows (lost); a workflow that failed instead of returning an outcome; Book sent more often than
 * the recovery policy allows; a secret or personal value in clear in a history or a log line.
 */
import type { BookingOutcome, BookingOutcomeKind, CancelFeeQuote } from '../src/contract';
import type { Money } from '../src/values';
import type { SandboxCall, SandboxOrderView } from '../dev/sandbox/server';
import { parseTestHeader } from '../dev/sandbox/scenario';
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../src/contract/definitions';
import {
  DURING_RECOVERY,
  EXPECTED_BY_KIND,
  FAULT_CLASSES,
  type AnyCancelKind,
  type FaultClass,
  type PlannedBooking,
} from './mix';

/** Order statuses of the supplier profile (src/supplier/profile.ts defaults, which the sandbox uses). */
const CONFIRMING = 1;
const CONFIRMED = 2;
const CANCELLED = 3;
const FAILED = 4;
const CANCEL_FAILED = 5;

/** How a booking's workflow ended, as the chaos client saw it after the run. */
export type Ending =
  | { state: 'completed'; outcome: BookingOutcome }
  /** Still running when the run's hard limit came. */
  | { state: 'open'; detail: string }
  /** Failed, terminated, timed out or cancelled instead of returning an outcome. */
  | { state: 'workflow-failed'; detail: string }
  /** Terminated by the run itself once Book had made its order: an orphan made on purpose, not a failure. */
  | { state: 'orphaned'; detail: string }
  /** Started (the server acknowledged it), but the server no longer knows it. */
  | { state: 'lost'; detail: string }
  /** The chaos client never got the start acknowledged. */
  | { state: 'not-started'; detail: string };

export interface Observation {
  booking: PlannedBooking;
  ending: Ending;
  /** The chaos client's cancellation of this booking, when it planned one (class cancelAfterConfirm). */
  cancellation?: CancellationObservation;
}

/**
 * A cancellation on demand as the chaos client made it: the quote, what it accepted and sent, the update's
 * answer and the order run's outcome. `state`: `done` (the run it confirmed in, or the quote's, ended),
 * `skipped` (the booking did not end confirmed: nothing asked), `open` (no ending by the hard limit), `error`.
 */
export interface CancellationObservation {
  customerReferenceNo: string;
  kind: AnyCancelKind;
  expected: string;
  state: 'done' | 'skipped' | 'open' | 'error';
  detail?: string;
  /** The quote (cancelBooking `{confirm: false}`). */
  quote?: CancelFeeQuote;
  /**
   * The fee sent with `{confirm: true}` (recorded before sending); `any`: the booking's own cancel, whose
   * `onCancelAfterBook: 'cancel'` accepts any fee; absent when nothing was asked.
   */
  acceptedFee?: Money | null | 'any';
  confirmSentAt?: string;
  /** `cancel-requested` (ambiguous or not), `cancel-refused`, or `update-failed:<type>`. */
  answer?: string;
  /** `duplicateConfirm`: both confirms' answers, the first sent first. */
  answers?: string[];
  /** Cancelled during recovery: the answer to the caller's cancelBooking through `order:<ref>` (to be refused). */
  callerAnswer?: string;
  /** The order run the caller's refused request started, when another run took the booking's cancellation: its end. */
  callerRunOutcome?: string;
  /** Cancelled during recovery: when the booking's own cancel (a workflow cancellation) was sent. */
  bookingCancelAskedAt?: string;
  /** Cancelled during recovery: the booking's outcome kind, and whether it says a cancel was asked for. */
  bookingOutcome?: string;
  cancelRequested?: boolean;
  /** Cancelled during recovery: other order runs started since (a hand-off delivered twice), their outcome kinds. */
  otherRunOutcomes?: string[];
  /** Who the order run's cancellation says asked for it (`caller`, `auto`, `reconciliation`). */
  origin?: string;
  /** The order run's outcome kind (the run the confirm went to). */
  outcome?: string;
  /** The outcome's reason or fees, for a person reading the report. */
  outcomeDetail?: string;
  /** The window kinds: whether the timing planned could be kept (the booking confirmed in time). */
  windowMissed?: boolean;
  /** Client calls retried (server restart, transport errors). */
  retries: number;
  /** The order runs it started: the quote's, the confirm's (their raw histories are scanned for secrets). */
  runIds?: string[];
}

/** The cancellation's label in tables: the order run's outcome, or its state when there is none. */
export function cancellationKind(c: CancellationObservation): string {
  if (c.state === 'done')
    return (
      c.outcome ??
      (c.bookingOutcome ? `booking ${c.bookingOutcome}` : undefined) ??
      (c.answer ? `answer ${c.answer}` : 'done')
    );
  return c.state;
}

/** An ending's label in tables: the outcome kind, or the state when there is no outcome. */
export function endingKind(ending: Ending): BookingOutcomeKind | Exclude<Ending['state'], 'completed'> {
  return ending.state === 'completed' ? ending.outcome.kind : ending.state;
}

export interface Orphan {
  customerReferenceNo: string;
  outcome: string;
  orderStatus?: number;
  why: string;
}

/**
 * Orders the outcome does not account for. An order the supplier holds as Confirmed or Confirming must
 * end `confirmed`, `unresolved` (a person is told) or `failed` naming that order; `confirmed` needs a
 * Confirmed order; and a booking that says nothing was booked (unavailable, price-rejected, cancelled)
 * must have no order at all, whatever its status, since Book should never have been sent.
 */
export function findOrphans(observations: Observation[], orders: Map<string, SandboxOrderView[]>): Orphan[] {
  const orphans: Orphan[] = [];
  for (const { booking, ending, cancellation } of observations) {
    if (ending.state !== 'completed') continue;
    const ref = booking.request.customerReferenceNo;
    const order = orders.get(ref)?.[0];
    const outcome = ending.outcome;
    const add = (why: string) =>
      orphans.push({ customerReferenceNo: ref, outcome: outcome.kind, orderStatus: order?.status, why });
    if (outcome.kind === 'confirmed') {
      if (!order) {
        add('outcome confirmed, but the supplier has no order');
        continue;
      }
      // Cancelled by our own cancellation: the order run's outcome must account for the status.
      const why = cancellation ? cancelledOrderUnaccounted(cancellation, order.status) : undefined;
      if (why) add(why);
      else if (!cancellation && order.status !== CONFIRMED)
        add(`outcome confirmed, but the supplier order is in status ${order.status}`);
      continue;
    }
    if (!order) continue;
    if (outcome.kind === 'unavailable' || outcome.kind === 'price-rejected' || outcome.kind === 'cancelled') {
      add(`outcome ${outcome.kind} says nothing was booked, but the supplier has an order (status ${order.status})`);
      continue;
    }
    if (outcome.kind === 'failed') {
      if (order.status === CONFIRMED) add('outcome failed, but the supplier order is Confirmed');
      else if (order.status === CONFIRMING && outcome.order?.customerReferenceNo !== ref) {
        add('outcome failed without naming the order, but the supplier order is Confirming');
      }
    }
  }
  return orphans;
}

/**
 * Whether the order status of a confirmed booking we cancelled (or tried to) is what the order run's outcome says,
 * or why not: `cancelled` needs status 3, `cancel-failed` status 5; `cancel-unresolved` and `changed-by-supplier`
 * hand the order to a person (any status); every other ending (refused, stopped, quoted only, nothing asked) says
 * nothing was cancelled, so the order must still be Confirmed. A cancellation still open is the `stuck` check's.
 */
export function cancelledOrderUnaccounted(c: CancellationObservation, status: number): string | undefined {
  if (c.state === 'open') return undefined;
  const outcome = c.state === 'done' ? c.outcome : undefined;
  switch (outcome) {
    case 'cancelled':
      return status === CANCELLED
        ? undefined
        : `our cancellation ended cancelled, but the supplier order is in status ${status}`;
    case 'cancel-failed':
      return status === CANCEL_FAILED
        ? undefined
        : `our cancellation ended cancel-failed, but the supplier order is in status ${status}`;
    case 'cancel-unresolved':
    case 'changed-by-supplier':
      return undefined;
    default:
      return status === CONFIRMED
        ? undefined
        : `our cancellation ended ${outcome ?? c.state} (nothing cancelled), but the supplier order is in status ${status}`;
  }
}

/** Orders per reference: the histogram, references with more than one, and orders for references never booked. */
export function orderCounts(orders: SandboxOrderView[], plan: PlannedBooking[]) {
  const byRef = new Map<string, SandboxOrderView[]>();
  for (const o of orders) byRef.set(o.customerReferenceNo, [...(byRef.get(o.customerReferenceNo) ?? []), o]);
  const known = new Set(plan.map((b) => b.request.customerReferenceNo));
  const histogram: Record<string, number> = {};
  for (const b of plan) {
    const n = byRef.get(b.request.customerReferenceNo)?.length ?? 0;
    histogram[n] = (histogram[n] ?? 0) + 1;
  }
  const duplicates = [...byRef]
    .filter(([, list]) => list.length > 1)
    .map(([ref, list]) => ({ ref, orders: list.length }));
  const strays = [...byRef.keys()].filter((ref) => !known.has(ref));
  return { byRef, histogram, duplicates, strays };
}

/**
 * Book calls per reference that reached the supplier's order logic. Refusals before any work (429, and a
 * 401 the client answers by renewing its ticket) do not count; everything else is a Book attempt, and
 * the workflow may make at most `maxBookAttempts` of them.
 */
export function bookSendsOverLimit(calls: SandboxCall[], maxBookAttempts: number) {
  const sends = new Map<string, number>();
  for (const c of calls) {
    if (c.op !== 'book' || c.httpStatus === 429 || c.httpStatus === 401) continue;
    for (const ref of c.customerReferenceNos ?? []) sends.set(ref, (sends.get(ref) ?? 0) + 1);
  }
  return [...sends].filter(([, n]) => n > maxBookAttempts).map(([ref, n]) => ({ ref, bookSends: n }));
}

export interface ClassCoverage {
  /** Bookings given the fault. */
  assigned: number;
  assignedPercent: number;
  /** Bookings where the sandbox's calls (or the outcome) show the fault really happened. */
  exercised: number;
}

/** Per fault class: how many bookings carried it, and how many show evidence that it struck. */
export function coverage(observations: Observation[], calls: SandboxCall[], queryRefs: Set<string>) {
  const faultsBySession = new Map<string, Set<string>>();
  const faultsByRef = new Map<string, Set<string>>();
  const laggedRefs = new Set(calls.flatMap((c) => c.lagged ?? []));
  for (const c of calls) {
    if (!c.fault) continue;
    if (c.op === 'checkAvail' && c.sessionId) {
      faultsBySession.set(c.sessionId, (faultsBySession.get(c.sessionId) ?? new Set()).add(c.fault));
    }
    if (c.op === 'book') {
      for (const ref of c.customerReferenceNos ?? [])
        faultsByRef.set(ref, (faultsByRef.get(ref) ?? new Set()).add(c.fault));
    }
  }
  const struck = (cls: FaultClass, o: Observation): boolean => {
    const { booking, ending } = o;
    const ref = booking.request.customerReferenceNo;
    const ca = faultsBySession.get(booking.request.sessionId ?? '') ?? new Set<string>();
    const bk = faultsByRef.get(ref) ?? new Set<string>();
    const outcome = ending.state === 'completed' ? ending.outcome : undefined;
    switch (cls) {
      case 'checkAvail429':
        return ca.has('429');
      case 'checkAvail5xx':
        return ca.has('500') || ca.has('503');
      case 'checkAvailHang':
        return ca.has('hang');
      case 'checkAvailMalformed':
        return ca.has('malformed');
      case 'priceChanged':
        return ca.has('ariChanged');
      case 'soldOut':
        return outcome?.kind === 'unavailable';
      case 'book504AfterCreate':
        return bk.has('504AfterCreate');
      case 'bookHangAfterCreate':
        return bk.has('hangAfterCreate');
      case 'bookHangBeforeCreate':
        return bk.has('hangBeforeCreate');
      case 'bookResetAfterCreate':
        return bk.has('resetAfterCreate');
      case 'book429':
        return bk.has('429');
      case 'bookMalformedAfterCreate':
        return bk.has('malformedAfterCreate');
      case 'orderNeverFound':
        return bk.has('504BeforeCreate') && outcome?.kind === 'unresolved';
      // The order was Confirming for seconds after Book answered: a confirmed or failed ending that names
      // it, after QueryOrders asked for it, means the workflow waited it out by polling.
      case 'pendingThenConfirmed':
        return outcome?.kind === 'confirmed' && queryRefs.has(ref);
      case 'pendingThenFailed':
        return outcome?.kind === 'failed' && outcome.order?.status === 4 && queryRefs.has(ref);
      // A re-send was refused (the first Book's fault is limited to it), and the booking still ended on
      // the order's own status: confirmed, or failed naming the order.
      case 'listedLateResendRateLimited':
        return bk.has('429') && (outcome?.kind === 'confirmed' || (outcome?.kind === 'failed' && !!outcome.order));
      // The confirmed booking was quoted and a cancellation asked for, and its order run ended.
      case 'cancelAfterConfirm':
        return o.cancellation?.state === 'done' && o.cancellation.acceptedFee !== undefined;
      // The overlap happened: the caller refused and the booking cancelled while it recovered (and the listing
      // lagged for the order run), or two confirms answered for one order; and the order run ended.
      case 'cancelOverlaps': {
        const c = o.cancellation;
        if (c?.state !== 'done' || c.outcome === undefined) return false;
        if (c.kind === 'duplicateConfirm') return (c.answers?.length ?? 0) === 2;
        const recovered = c.cancelRequested === true && !!c.callerAnswer?.includes('BookingInProgress');
        return recovered && (c.kind !== 'cancelDuringRecoveryListingLags' || laggedRefs.has(ref));
      }
    }
  };
  const n = observations.length;
  return Object.fromEntries(
    FAULT_CLASSES.map((cls) => {
      const carrying = observations.filter((o) => o.booking.classes.includes(cls));
      const entry: ClassCoverage = {
        assigned: carrying.length,
        assignedPercent: n ? Math.round((carrying.length / n) * 1000) / 10 : 0,
        exercised: carrying.filter((o) => struck(cls, o)).length,
      };
      return [cls, entry];
    }),
  ) as Record<FaultClass, ClassCoverage>;
}

/** `expected → actual → count`, to see where chaos changed an ending (informational, not an invariant). */
export function outcomeMatrix(observations: Observation[]): Record<string, Record<string, number>> {
  const matrix: Record<string, Record<string, number>> = {};
  for (const { booking, ending } of observations) {
    const row = (matrix[booking.expected] ??= {});
    const kind = endingKind(ending);
    row[kind] = (row[kind] ?? 0) + 1;
  }
  return matrix;
}

// --- Reconciliation ---------------------------------------------------------------------------

/**
 * What the reconciliation sweep should report for the run's supplier orders, from what the run itself saw
 * (an oracle apart from the sweep's own rule): an orphan is an order no booking stands for (its workflow
 * was terminated, failed or is unknown, or it ended saying nothing was booked); a mismatch is an order whose
 * status denies the outcome its booking returned (confirmed but not Confirmed, failed but still Confirming
 * or Confirmed, unresolved with any order). A booking still running is its own business.
 */
export function expectedSweepFindings(
  observations: Observation[],
  orders: Map<string, SandboxOrderView[]>,
): { orphans: string[]; mismatches: string[] } {
  const orphans: string[] = [];
  const mismatches: string[] = [];
  const known = new Set<string>();
  for (const { booking, ending, cancellation } of observations) {
    const ref = booking.request.customerReferenceNo;
    known.add(ref);
    const order = orders.get(ref)?.[0];
    if (!order) continue;
    if (ending.state === 'open') continue;
    if (ending.state !== 'completed') {
      orphans.push(ref);
      continue;
    }
    const s = order.status;
    switch (ending.outcome.kind) {
      case 'confirmed': {
        // A cancelled (or cancel-failed) order is as reported when the last order run ended so: our cancellation's.
        const lastRun = cancellation?.state === 'done' ? cancellation.outcome : undefined;
        const known =
          (s === CANCELLED && lastRun === 'cancelled') || (s === CANCEL_FAILED && lastRun === 'cancel-failed');
        if (s !== CONFIRMED && !known) mismatches.push(ref);
        break;
      }
      case 'failed':
        if (s !== FAILED && s !== CANCELLED && s !== CANCEL_FAILED) mismatches.push(ref);
        break;
      case 'unresolved':
        mismatches.push(ref);
        break;
      default:
        orphans.push(ref);
    }
  }
  for (const ref of orders.keys()) if (!known.has(ref)) orphans.push(ref);
  return { orphans: orphans.sort(), mismatches: mismatches.sort() };
}

// --- Cancellations ------------------------------------------------------------------------------

/** How the sandbox took a Cancel call, read from its record (dev/sandbox/server.ts, `cancel`). */
type CancelCallKind =
  /** Turned away before any work: 429, 401 (the client renews its ticket). */
  | 'not-reached'
  /** 400/403/404 with no Cancel taken for the order: nothing was done. */
  | 'refusal'
  /** 400 "cannot be cancelled" because a Cancel was taken before (`cancelRepeat=refuse`). */
  | 'repeat-refused'
  /** 504 with nothing taken (`cancel=lost`). */
  | 'lost'
  /** Taken: 200 code 0, `504AfterAccept`, `unknownCode`; or, once taken, a repeat answered the same. */
  | 'taken'
  | 'other';

function cancelCallKind(c: SandboxCall): CancelCallKind {
  if (c.httpStatus === 429 || c.httpStatus === 401) return 'not-reached';
  if (c.fault === 'cancelRepeat') return 'repeat-refused';
  if (c.fault === 'lost') return 'lost';
  if (c.httpStatus === 400 || c.httpStatus === 403 || c.httpStatus === 404) return 'refusal';
  if (c.httpStatus === 200 || c.fault === '504AfterAccept') return 'taken';
  return 'other';
}

export interface CancelSendViolation {
  ref: string;
  rule: 'sent-after-refusal' | 'sent-after-settled-answer' | 'taken-twice';
  detail: string;
}

/**
 * "0 Cancels sent twice over a refusal", from the supplier's own record of every Cancel and QueryOrders call:
 *  - `sent-after-refusal`: a Cancel reached the supplier after it had refused a first Cancel for the order in words
 *    that prove nothing was done (400/403/404 before any Cancel that may have acted; 429 and 401 aside);
 *  - `sent-after-settled-answer`: a Cancel reached the supplier after a QueryOrders answer had shown the order
 *    settled by the Cancel taken (status 3 or 5: the taken Cancel's `cancelAfterMs` had passed when it answered);
 *  - `taken-twice`: more than one Cancel call answered as taken (200 code 0, 504 after taking, an unknown code)
 *    for one order: a live supplier may charge each.
 * Each violation names the order; the first Cancel call that broke the rule is in `detail`.
 */
export function cancelSendViolations(calls: SandboxCall[], orders: SandboxOrderView[]): CancelSendViolation[] {
  const cancels = new Map<string, SandboxCall[]>();
  const queries = new Map<string, string[]>();
  for (const c of calls) {
    for (const ref of c.customerReferenceNos ?? []) {
      if (c.op === 'cancel') cancels.set(ref, [...(cancels.get(ref) ?? []), c]);
      // A QueryOrders answered in full (no injected fault) that named the order.
      if (c.op === 'queryOrders' && c.httpStatus === 200 && !c.fault && cancels.has(ref))
        queries.set(ref, [...(queries.get(ref) ?? []), c.at]);
    }
  }
  const byRef = new Map(orders.map((o) => [o.customerReferenceNo, o]));
  const out: CancelSendViolation[] = [];
  for (const [ref, list] of cancels) {
    const ms = (c: SandboxCall) => Date.parse(c.at);
    const kinds = list.map(cancelCallKind);
    // A refusal that proves nothing was done: the first Cancel that reached the supplier was refused.
    const firstReached = kinds.findIndex((k) => k !== 'not-reached');
    if (firstReached >= 0 && kinds[firstReached] === 'refusal') {
      const after = list.slice(firstReached + 1);
      if (after.length > 0) {
        out.push({
          ref,
          rule: 'sent-after-refusal',
          detail: `Cancel refused ${list[firstReached]!.httpStatus} at ${list[firstReached]!.at}, then ${after.length} more sent (first at ${after[0]!.at}, HTTP ${after[0]!.httpStatus})`,
        });
      }
    }
    const taken = list.filter((_, i) => kinds[i] === 'taken');
    if (taken.length > 1) {
      out.push({
        ref,
        rule: 'taken-twice',
        detail: `${taken.length} Cancels answered as taken: ${taken.map((c) => c.at).join(', ')}`,
      });
    }
    // When the taken Cancel settled, and the first full QueryOrders answer after that (with a margin for the
    // time between the status being read and the call being recorded).
    const order = byRef.get(ref);
    if (!order?.cancel) continue;
    const flags = parseTestHeader(order.test);
    const afterMs = flags.cancelAfterMs ?? flags.confirmAfterMs;
    if (afterMs === undefined || flags.cancelAfterQueries !== undefined || flags.cancel === 'pending') continue;
    const settledAt = Date.parse(order.cancel.requestedAt) + afterMs;
    const told = (queries.get(ref) ?? []).map(Date.parse).find((t) => t >= settledAt + 500);
    if (told === undefined) continue;
    const late = list.filter((c) => ms(c) > told);
    if (late.length > 0) {
      out.push({
        ref,
        rule: 'sent-after-settled-answer',
        detail: `order settled at ${new Date(settledAt).toISOString()}, told by QueryOrders at ${new Date(told).toISOString()}, then Cancel at ${late[0]!.at}`,
      });
    }
  }
  return out.sort((a, b) => a.ref.localeCompare(b.ref) || a.rule.localeCompare(b.rule));
}

/** A cancellation the run asked for that ended neither done nor in front of a person, and why. */
export interface CancellationNotDone {
  ref: string;
  kind: AnyCancelKind;
  why: string;
}

const NEEDS_A_PERSON = new Set<string>(ORDER_OUTCOMES_NEEDING_A_PERSON);

/**
 * "Every cancellation asked for ends `cancelled` or in an outcome that needs a person": for every cancellation the
 * run asked for (a confirm sent, or a booking cancelled while it recovered), its order run ended `cancelled` (the
 * order in status 3), or in one of ORDER_OUTCOMES_NEEDING_A_PERSON; or the caller was told it was refused: a
 * refused update (with no Cancel reaching the supplier after the confirm), or `cancel-refused` answered to the caller
 * (a caller's cancellation only: the system's is `cancel-not-done`). A booking cancelled during recovery ends
 * `confirmed` with `cancelRequested` and its order run as above, or `unresolved` (a person is told); never `failed`
 * over an order that exists, never confirmed saying no cancel was asked. Of two confirms at once, at most one is
 * taken. Cancellations still open or failed are the `cancellation stuck` check's.
 */
export function cancellationsNotDone(
  observations: Observation[],
  orders: Map<string, SandboxOrderView[]>,
  calls: SandboxCall[],
): CancellationNotDone[] {
  const cancelCallsAt = new Map<string, number[]>();
  for (const c of calls) {
    if (c.op !== 'cancel' || c.httpStatus === 429 || c.httpStatus === 401) continue;
    for (const ref of c.customerReferenceNos ?? [])
      cancelCallsAt.set(ref, [...(cancelCallsAt.get(ref) ?? []), Date.parse(c.at)]);
  }
  const out: CancellationNotDone[] = [];
  for (const { ending, cancellation: c } of observations) {
    if (!c || c.state !== 'done' || c.acceptedFee === undefined) continue;
    const ref = c.customerReferenceNo;
    const order = orders.get(ref)?.[0];
    const add = (why: string) => out.push({ ref, kind: c.kind, why });
    if (DURING_RECOVERY.has(c.kind) && c.acceptedFee === 'any') {
      const outcome = ending.state === 'completed' ? ending.outcome : undefined;
      if (outcome?.kind === 'failed' && order)
        add(`cancelled during recovery, the booking ended failed over an order that exists (status ${order.status})`);
      if (outcome?.kind === 'unresolved') continue;
      if (outcome?.kind === 'confirmed' && !outcome.cancelRequested)
        add('cancelled during recovery, the booking ended confirmed without cancelRequested');
      if (outcome?.kind !== 'confirmed') {
        if (order && outcome?.kind !== 'failed')
          add(
            `cancelled during recovery, the booking ended ${endingKind(ending)} with an order (status ${order.status})`,
          );
        continue;
      }
    }
    if (c.kind === 'duplicateConfirm') {
      const taken = (c.answers ?? []).filter((a) => a.startsWith('cancel-requested'));
      if (taken.length > 1) add(`two confirms at once, both taken: ${c.answers!.join(', ')}`);
    }
    const outcome = c.outcome;
    if (outcome === 'cancelled') {
      if (order && order.status !== CANCELLED) add(`order run ended cancelled, the order is in status ${order.status}`);
      continue;
    }
    if (outcome !== undefined && NEEDS_A_PERSON.has(outcome)) continue;
    // The order was already Cancelled when the system's cancellation read it: nothing left to do.
    if (outcome === 'checked' && c.acceptedFee === 'any' && order?.status === CANCELLED) continue;
    if (outcome === 'cancel-refused' && c.answer === 'cancel-refused') continue;
    if (
      c.answer?.startsWith('update-failed:') &&
      (c.answers ?? [c.answer]).every((a) => !a.startsWith('cancel-requested'))
    ) {
      const sentAfter = (cancelCallsAt.get(ref) ?? []).filter((t) => t >= Date.parse(c.confirmSentAt ?? ''));
      if (sentAfter.length === 0) continue;
      add(`the confirm was refused (${c.answer}), yet ${sentAfter.length} Cancel reached the supplier after it`);
      continue;
    }
    add(
      `asked (${c.answer ?? (c.acceptedFee === 'any' ? "the booking's own cancel" : 'confirm')}), ended ${outcome ?? cancellationKind(c)}: neither cancelled nor for a person${c.outcomeDetail ? ` (${c.outcomeDetail})` : ''}`,
    );
  }
  return out.sort((a, b) => a.ref.localeCompare(b.ref));
}

export interface FeeViolation {
  ref: string;
  status: number;
  charged: Money;
  /** What our confirm accepted; absent: nobody asked to cancel this order. */
  accepted?: Money | null | 'any';
  why: string;
}

/**
 * "0 orders cancelled at a fee nobody accepted": every order the supplier took a Cancel for (the sandbox charges
 * the policy's fee at that moment, whatever the order's status becomes) was charged at most the fee our confirm
 * accepted (a free quote accepted is 0 in any currency), and only orders we asked to cancel were.
 */
export function feesNotAccepted(
  orders: SandboxOrderView[],
  accepted: Map<string, Money | null | 'any' | undefined>,
): FeeViolation[] {
  const out: FeeViolation[] = [];
  for (const o of orders) {
    if (!o.cancel) continue;
    const charged = o.cancel.serviceFee;
    const fee = accepted.get(o.customerReferenceNo);
    const add = (why: string) =>
      out.push({
        ref: o.customerReferenceNo,
        status: o.status,
        charged,
        ...(fee !== undefined ? { accepted: fee } : {}),
        why,
      });
    if (!accepted.has(o.customerReferenceNo) || fee === undefined) {
      add('the supplier took a Cancel nobody asked for');
      continue;
    }
    if (charged.amount <= 0) continue;
    // An unknown fee accepted as such (never in this run: every policy has fees), or any fee (onCancelAfterBook).
    if (fee === null || fee === 'any') continue; // an unknown fee was accepted as such (never in this run: every policy has fees)
    if (fee.amount <= 0) add(`charged ${charged.amount} ${charged.currency}, accepted only a free cancellation`);
    else if (fee.currency !== charged.currency)
      add(`charged ${charged.amount} ${charged.currency}, accepted ${fee.amount} ${fee.currency}`);
    else if (charged.amount > fee.amount + 0.005)
      add(`charged ${charged.amount} ${charged.currency}, above the accepted ${fee.amount}`);
  }
  return out;
}

/** Cancellations by kind → order run outcome (or state), and overall by outcome. */
export function cancellationTable(cancellations: CancellationObservation[]) {
  const byOutcome: Record<string, number> = {};
  const byKind: Record<string, { planned: number; expected: string; outcomes: Record<string, number> }> = {};
  for (const c of cancellations) {
    const label = cancellationKind(c);
    byOutcome[label] = (byOutcome[label] ?? 0) + 1;
    const row = (byKind[c.kind] ??= { planned: 0, expected: EXPECTED_BY_KIND[c.kind], outcomes: {} });
    row.planned++;
    row.outcomes[label] = (row.outcomes[label] ?? 0) + 1;
  }
  return { byOutcome, byKind };
}

/** Two sets of references compared: what one has and the other lacks. */
export function setDifference(expected: string[], actual: string[]): { missed: string[]; extra: string[] } {
  const want = new Set(expected);
  const got = new Set(actual);
  return {
    missed: [...want].filter((r) => !got.has(r)).sort(),
    extra: [...got].filter((r) => !want.has(r)).sort(),
  };
}

// --- Secrets ------------------------------------------------------------------------------------

export { JWT, scanHistory, scanLogLines, type SecretHit, type SecretNeedles } from '../dev/codec/scan';
