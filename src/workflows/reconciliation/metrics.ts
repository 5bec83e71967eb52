/** What a sweep counts, through the SDK's workflow meter (nothing while a history is replayed). */
import type { MetricCounter } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
import { BOOKING_METRICS } from '../../observability/definitions';

let sweeps: MetricCounter | undefined;
let findings: MetricCounter | undefined;

/** One sweep ended (`clean` or `findings`), with its findings by kind. */
export function countSweep(result: 'clean' | 'findings', byKind: Record<string, number>): void {
  sweeps ??= metricMeter.createCounter(BOOKING_METRICS.sweeps.name, undefined, BOOKING_METRICS.sweeps.help);
  findings ??= metricMeter.createCounter(
    BOOKING_METRICS.sweepFindings.name,
    undefined,
    BOOKING_METRICS.sweepFindings.help,
  );
  sweeps.add(1, { result });
  for (const [kind, n] of Object.entries(byKind)) if (n > 0) findings.add(n, { kind });
}
