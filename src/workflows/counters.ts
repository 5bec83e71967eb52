/**
 * What the workflows count, through the SDK's workflow meter: it records nothing while a history is replayed (a
 * worker picking up a cached-out booking does not count its past again) and makes no command, so recorded histories
 * replay unchanged. Labels are closed sets; no reference. The metrics themselves are defined in
 * src/runtime/observability/definitions.ts.
 */
import type { MetricCounter } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
import { BOOKING_METRICS, type BookingMetricKey } from '../runtime/observability/definitions';

const counters = new Map<BookingMetricKey, MetricCounter>();

function counter(key: BookingMetricKey): MetricCounter {
  let c = counters.get(key);
  if (!c) {
    const def = BOOKING_METRICS[key];
    counters.set(key, (c = metricMeter.createCounter(def.name, undefined, def.help)));
  }
  return c;
}

/** A booking entered a stage (once per booking and stage). */
export function countStageEntered(stage: string): void {
  counter('stageEntered').add(1, { stage });
}

/** A booking ended; one that ended from recovery is also a recovery ended. */
export function countOutcome(kind: string, fromStage: string): void {
  counter('outcomes').add(1, { kind });
  if (fromStage === 'recovering') counter('recoveriesEnded').add(1, { kind });
}

/** One Book sent, by how it ended. */
export function countBookAttempt(result: string): void {
  counter('bookAttempts').add(1, { result });
}

/** One recovery poll, by what it found. */
export function countRecoveryPoll(result: string): void {
  counter('recoveryPolls').add(1, { result });
}

/** A booking's order was confirmed at a price above the one it accepted. */
export function countConfirmedAboveAccepted(): void {
  counter('confirmedAboveAccepted').add(1);
}

/** A cancellation the supplier charged above the fee accepted. */
export function countCancelFeeAboveAccepted(): void {
  counter('cancelFeeAboveAccepted').add(1);
}

/** One order workflow run ended, by its outcome kind. */
export function countOrderOutcome(kind: string): void {
  counter('orderOutcomes').add(1, { kind });
}

/** One sweep ended (`clean` or `findings`), with its findings by kind. */
export function countSweep(result: 'clean' | 'findings', byKind: Record<string, number>): void {
  counter('sweeps').add(1, { result });
  for (const [kind, n] of Object.entries(byKind)) if (n > 0) counter('sweepFindings').add(n, { kind });
}
