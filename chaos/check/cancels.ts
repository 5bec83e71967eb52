/**
 * The cancellations' invariants: no Cancel re-sent over a refusal,
 * every cancellation asked for done or in front of a person, no fee charged above the one accepted; and their table.
 */
import type { Money } from '../../src/api/values/index';
import type { SandboxCall, SandboxOrderView } from '../../dev/sandbox/server';
import { parseTestHeader } from '../../dev/sandbox/scenario';
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../../src/api/contract/definitions';
import { DURING_RECOVERY, EXPECTED_BY_KIND, type AnyCancelKind } from '../mix';
import { CANCELLED, cancellationKind, endingKind, type CancellationObservation, type Observation } from './observation';

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
