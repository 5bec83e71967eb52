/**
 * The chaos run's invariants, checked against the supplier's own records once every booking has closed: one
 * order per reference, at most the allowed Book sends, no order the outcome does not account for, nothing stuck,
 * lost, failed or unstarted, no Cancel sent twice over a refusal, no fee nobody accepted, every cancellation asked
 * for done or in front of a person, no secret in a history
 * or a log line, no worker exit nobody caused, and a sweep that found what the run made.
 */
import { orderWorkflowId } from '../src/api/client/index';
import type { Money } from '../src/runtime/supplier/schemas';
import type { SandboxCall, SandboxOrderView } from '../dev/sandbox/server';
import { cancellationsNotDone, cancelSendViolations, feesNotAccepted } from './check/cancels';
import { type Ending, type Observation } from './check/observation';
import { bookSendsOverLimit, findOrphans, orderCounts } from './check/orders';
import type { Collected } from './collect';
import type { PlannedBooking } from './mix';
import type { BookingProblem, ReconciliationReport } from './report';
import type { Stack } from './setup';
import { reconciliationViolations } from './sweep';

/** What the checks found, each kind apart (the report lists them), and every violation as one line. */
export interface Checked {
  orders: SandboxOrderView[];
  calls: SandboxCall[];
  counts: ReturnType<typeof orderCounts>;
  orphans: ReturnType<typeof findOrphans>;
  overSends: ReturnType<typeof bookSendsOverLimit>;
  cancelSends: ReturnType<typeof cancelSendViolations>;
  /** The fee each cancellation accepted, by reference (`any`: the booking's own cancel, onCancelAfterBook `cancel`). */
  accepted: Map<string, Money | null | 'any' | undefined>;
  feeViolations: ReturnType<typeof feesNotAccepted>;
  /** Cancellations asked for that ended neither `cancelled` nor for a person nor refused to the caller's face. */
  notDone: ReturnType<typeof cancellationsNotDone>;
  stuck: BookingProblem[];
  lost: BookingProblem[];
  workflowFailures: BookingProblem[];
  notStarted: BookingProblem[];
  violations: string[];
  /** The references a violation names: their histories are kept for a person to read. */
  implicated: string[];
}

/** Reads the supplier's orders and calls once and checks every invariant against them and the endings. */
export function checkInvariants(
  stack: Stack,
  plan: PlannedBooking[],
  collected: Collected,
  reconciliation: ReconciliationReport,
  maxBookAttempts: number,
): Checked {
  const { observations, cancelObservations } = collected;
  const orders = stack.sandbox.orders();
  const calls = stack.sandbox.calls();
  const counts = orderCounts(orders, plan);
  const accepted = new Map(
    cancelObservations.filter((c) => c.acceptedFee !== undefined).map((c) => [c.customerReferenceNo, c.acceptedFee]),
  );
  const found = {
    orders,
    calls,
    counts,
    orphans: findOrphans(observations, counts.byRef),
    overSends: bookSendsOverLimit(calls, maxBookAttempts),
    cancelSends: cancelSendViolations(calls, orders),
    accepted,
    feeViolations: feesNotAccepted(orders, accepted),
    notDone: cancellationsNotDone(observations, counts.byRef, calls),
    stuck: problems(observations, 'open'),
    lost: problems(observations, 'lost'),
    workflowFailures: problems(observations, 'workflow-failed'),
    notStarted: problems(observations, 'not-started'),
  };
  return {
    ...found,
    violations: violationsOf(found, collected, reconciliation, { maxBookAttempts, fleet: stack.fleet.stats }),
    implicated: implicatedRefs(found, reconciliation),
  };
}

/** The bookings that ended in the state, with what an operator would look at. */
function problems(observations: Observation[], state: Ending['state']): BookingProblem[] {
  return observations
    .filter((x) => x.ending.state === state)
    .map((x) => ({
      customerReferenceNo: x.booking.request.customerReferenceNo,
      detail: 'detail' in x.ending ? x.ending.detail : '',
    }));
}

/** Every broken invariant as one line, in the order the report lists them. */
function violationsOf(
  f: Omit<Checked, 'violations' | 'implicated'>,
  collected: Collected,
  reconciliation: ReconciliationReport,
  o: { maxBookAttempts: number; fleet: Stack['fleet']['stats'] },
): string[] {
  const { openOrderRuns } = collected;
  return [
    ...f.counts.duplicates.map((d) => `duplicate: ${d.orders} supplier orders for ${d.ref}`),
    ...f.counts.strays.map((ref) => `duplicate: a supplier order for ${ref}, which no booking uses`),
    ...f.overSends.map((s) => `Book sent ${s.bookSends} times for ${s.ref} (at most ${o.maxBookAttempts})`),
    ...f.orphans.map((x) => `orphan: ${x.customerReferenceNo}: ${x.why}`),
    ...f.stuck.map((x) => `stuck: ${x.customerReferenceNo} still open at the hard limit: ${x.detail}`),
    ...f.lost.map((x) => `lost: ${x.customerReferenceNo}: ${x.detail}`),
    ...f.workflowFailures.map((x) => `workflow failed: ${x.customerReferenceNo}: ${x.detail}`),
    ...f.notStarted.map((x) => `not started: ${x.customerReferenceNo}: ${x.detail}`),
    ...f.cancelSends.map((v) => `Cancel sent twice over a refusal (${v.rule}): ${v.ref}: ${v.detail}`),
    ...f.feeViolations.map((v) => `cancelled at a fee nobody accepted: ${v.ref}: ${v.why}`),
    ...f.notDone.map((v) => `cancellation neither done nor for a person: ${v.ref} (${v.kind}): ${v.why}`),
    ...collected.cancelObservations
      .filter((c) => c.state === 'open' || c.state === 'error')
      .map(
        (c) =>
          `cancellation ${c.state === 'open' ? 'stuck' : 'failed'}: ${orderWorkflowId(c.customerReferenceNo)} (${c.kind}): ${c.detail ?? ''}`,
      ),
    ...(openOrderRuns > 0 ? [`stuck: ${openOrderRuns} order runs still open after the drain`] : []),
    ...collected.secretHits.map((h) => `secret: ${h.what} in ${h.where}`),
    ...(o.fleet.unexpectedExits > 0 ? [`${o.fleet.unexpectedExits} worker exits nobody caused`] : []),
    ...reconciliationViolations(reconciliation),
  ];
}

/** The references the violations name (a duplicate, an orphan, a stuck or failed booking, a sweep's miss). */
function implicatedRefs(f: Omit<Checked, 'violations' | 'implicated'>, r: ReconciliationReport): string[] {
  return [
    ...f.counts.duplicates.map((d) => d.ref),
    ...f.overSends.map((s) => s.ref),
    ...f.cancelSends.map((v) => v.ref),
    ...f.feeViolations.map((v) => v.ref),
    ...f.notDone.map((v) => v.ref),
    ...f.orphans.map((x) => x.customerReferenceNo),
    ...f.stuck.map((x) => x.customerReferenceNo),
    ...f.workflowFailures.map((x) => x.customerReferenceNo),
    ...r.orphansMissed,
    ...r.orphansExtra,
    ...r.mismatchesMissed,
    ...r.mismatchesExtra,
  ];
}
