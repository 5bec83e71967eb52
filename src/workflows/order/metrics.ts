/** What the order workflow counts, through the SDK's workflow meter (nothing while a history is replayed). */
import type { MetricCounter } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
import { BOOKING_METRICS } from '../../observability/definitions';

let outcomes: MetricCounter | undefined;

export function countOrderOutcome(kind: string): void {
  const def = BOOKING_METRICS.orderOutcomes;
  outcomes ??= metricMeter.createCounter(def.name, undefined, def.help);
  outcomes.add(1, { kind });
}
