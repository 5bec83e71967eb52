/**
 * What the workflow counts, through the SDK's workflow meter: it records nothing while a history is
 * replayed (a worker picking up a cached-out booking does not count its past again) and makes no
 * command, so recorded histories replay unchanged. Labels are closed sets; no reference.
 */
import type { MetricCounter } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
import { BOOKING_METRICS, type BookingMetricKey } from '../../observability/definitions';

const counters = new Map<BookingMetricKey, MetricCounter>();

function counter(key: BookingMetricKey): MetricCounter {
  let c = counters.get(key);
  if (!c) {
    const def = BOOKING_METRICS[key];
    counters.set(key, (c = metricMeter.createCounter(def.name, undefined, def.help)));
  }
  return c;
}

export function countStageEntered(stage: string): void {
  counter('stageEntered').add(1, { stage });
}

export function countOutcome(kind: string, fromStage: string): void {
  counter('outcomes').add(1, { kind });
  if (fromStage === 'recovering') counter('recoveriesEnded').add(1, { kind });
}

export function countBookAttempt(result: string): void {
  counter('bookAttempts').add(1, { result });
}

export function countRecoveryPoll(result: string): void {
  counter('recoveryPolls').add(1, { result });
}
