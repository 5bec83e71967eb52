/**
 * What the workflows count, through the SDK's workflow meter: it records nothing while a history is replayed (a
 * worker picking up a cached-out booking does not count its past again) and makes no command, so recorded histories
 * replay unchanged. Labels are closed sets; no reference. Each carries the supplier account the booking, order or sweep
 * is on (the accounts file's ids, a closed set too), so one account's outcomes stand apart. The metrics are defined in
 * src/runtime/observability/definitions.ts.
 */
import type { MetricCounter } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
import { ACCOUNT_LABEL, BOOKING_METRICS, type BookingMetricKey } from '../runtime/observability/definitions';

const counters = new Map<BookingMetricKey, MetricCounter>();

/** The account's label, on a booking, order or sweep that has one (none before accounts, or on the worker's own). */
function on(account: string | undefined): Record<string, string> {
  return account ? { [ACCOUNT_LABEL]: account } : {};
}

function counter(key: BookingMetricKey): MetricCounter {
  let c = counters.get(key);
  if (!c) {
    const def = BOOKING_METRICS[key];
    counters.set(key, (c = metricMeter.createCounter(def.name, undefined, def.help)));
  }
  return c;
}

/** A booking entered a stage (once per booking and stage). */
export function countStageEntered(stage: string, account: string | undefined): void {
  counter('stageEntered').add(1, { stage, ...on(account) });
}

/** A booking ended; one that ended from recovery is also a recovery ended. */
export function countOutcome(kind: string, fromStage: string, account: string | undefined): void {
  counter('outcomes').add(1, { kind, ...on(account) });
  if (fromStage === 'recovering') counter('recoveriesEnded').add(1, { kind, ...on(account) });
}

/** One Book sent, by how it ended. */
export function countBookAttempt(result: string, account: string | undefined): void {
  counter('bookAttempts').add(1, { result, ...on(account) });
}

/** One recovery poll, by what it found. */
export function countRecoveryPoll(result: string, account: string | undefined): void {
  counter('recoveryPolls').add(1, { result, ...on(account) });
}

/** A booking's order was confirmed at a price above the one it accepted. */
export function countConfirmedAboveAccepted(account: string | undefined): void {
  counter('confirmedAboveAccepted').add(1, on(account));
}

/** A cancellation the supplier charged above the fee accepted. */
export function countCancelFeeAboveAccepted(account: string | undefined): void {
  counter('cancelFeeAboveAccepted').add(1, on(account));
}

/** One order workflow run ended, by its outcome kind. */
export function countOrderOutcome(kind: string, account: string | undefined): void {
  counter('orderOutcomes').add(1, { kind, ...on(account) });
}

/** One sweep ended (`clean` or `findings`), with its findings by kind. */
export function countSweep(
  result: 'clean' | 'findings',
  byKind: Record<string, number>,
  account: string | undefined,
): void {
  counter('sweeps').add(1, { result, ...on(account) });
  for (const [kind, n] of Object.entries(byKind)) if (n > 0) counter('sweepFindings').add(n, { kind, ...on(account) });
}
