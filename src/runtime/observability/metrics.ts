/**
 * The booking's metrics on the worker side: the supplier observer (request latency, status classes,
 * error types, 429s, token-bucket waits, QueryOrders batch sizes, one span per request) and drift
 * counting. They go through the SDK runtime's meter, so they share the worker's one Prometheus
 * endpoint with the SDK's own metrics (src/runtime/observability/runtime.ts).
 */
import { isSpanContextValid, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { MetricCounter, MetricHistogram, MetricMeter } from '@temporalio/common';
import type { DriftReporter } from '../supplier/drift';
import type { SupplierObserver } from '../supplier/observer';
import { accountLabel, accountLabelSets } from './exposition';
import {
  BOOKING_METRICS,
  labelCombinations,
  WORKFLOW_METRICS,
  type BookingMetricKey,
  type MetricDefinition,
} from './definitions';

/** Counters and histograms of the definitions, created once on the given meter. */
export class BookingMeters {
  private readonly counters = new Map<BookingMetricKey, MetricCounter>();
  private readonly histograms = new Map<BookingMetricKey, MetricHistogram>();

  constructor(private readonly meter: MetricMeter) {}

  /**
   * Records every known series at 0, so alert rules see the first step of each (see MetricDefinition.values).
   * Workflow-side series carry the labels the SDK adds to workflow metrics, which `workflow` gives. With supplier
   * accounts, each series once more for each account, which every one of them may carry (ACCOUNT_LABEL).
   */
  initialize(
    workflow: { namespace: string; taskQueue: string; workflowType: string },
    accounts: readonly string[] = [],
  ): void {
    const whose = accountLabelSets(accounts);
    for (const [key, def] of Object.entries(BOOKING_METRICS) as Array<[BookingMetricKey, MetricDefinition]>) {
      if (def.kind !== 'counter') continue;
      const extra = WORKFLOW_METRICS.includes(key) ? workflow : {};
      for (const labels of labelCombinations(def))
        for (const account of whose) this.counter(key).add(0, { ...labels, ...account, ...extra });
    }
  }

  counter(key: BookingMetricKey): MetricCounter {
    let c = this.counters.get(key);
    if (!c) {
      const def = BOOKING_METRICS[key];
      this.counters.set(key, (c = this.meter.createCounter(def.name, undefined, def.help)));
    }
    return c;
  }

  histogram(key: BookingMetricKey): MetricHistogram {
    let h = this.histograms.get(key);
    if (!h) {
      const def = BOOKING_METRICS[key];
      const unit = 'unit' in def ? def.unit : undefined;
      const valueType = 'valueType' in def ? def.valueType : 'int';
      this.histograms.set(key, (h = this.meter.createHistogram(def.name, valueType, unit, def.help)));
    }
    return h;
  }
}

/** The tracer of supplier requests; a no-op one unless tracing is on (src/runtime/observability/tracing.ts). */
const tracer = () => trace.getTracer('hotel-booking-supplier');

/**
 * Records every supplier request (metrics always, a client span when tracing is on). A traced
 * request sends its trace id as `Trace-Id`, so the supplier's logs can be found from our trace and back.
 */
export function createSupplierObserver(meters: BookingMeters, account?: string): SupplierObserver {
  // With several supplier accounts, every series and span says whose: one account's 429s or latency stand apart.
  const whose = accountLabel(account);
  return {
    request(operation) {
      const started = performance.now();
      const span = tracer().startSpan(`supplier ${operation}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          'supplier.operation': operation,
          ...(account ? { 'supplier.account': account } : {}),
        },
      });
      const context = span.spanContext();
      return {
        ...(isSpanContextValid(context) ? { traceId: context.traceId } : {}),
        end({ httpStatus, errorType }) {
          const seconds = (performance.now() - started) / 1000;
          meters.histogram('supplierRequestDuration').record(seconds, {
            operation,
            outcome: errorType ? 'error' : 'success',
            ...whose,
          });
          meters.counter('supplierResponses').add(1, { operation, status_class: statusClass(httpStatus), ...whose });
          if (errorType) meters.counter('supplierErrors').add(1, { operation, error_type: errorType, ...whose });
          if (httpStatus === 429 || errorType === 'SupplierRateLimited') {
            meters.counter('supplierRateLimited').add(1, { operation, ...whose });
          }
          if (httpStatus !== undefined) span.setAttribute('http.response.status_code', httpStatus);
          if (errorType) {
            span.setAttribute('error.type', errorType);
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
          }
          span.end();
        },
      };
    },
    rateLimitWait(operation, seconds) {
      meters.histogram('rateLimiterWait').record(seconds, { operation, ...whose });
    },
    queryOrdersBatch(references) {
      meters.histogram('queryOrdersBatchReferences').record(references, whose);
    },
  };
}

function statusClass(status: number | undefined): string {
  if (status === undefined) return 'none';
  if (status >= 200 && status < 600) return `${Math.floor(status / 100)}xx`;
  return 'other';
}

/** The reporter, counting each drifting path too (booking_supplier_drift_total); it still logs once per path. */
export function countedDrift(reporter: DriftReporter, meters: BookingMeters): DriftReporter {
  return {
    report(operation, paths) {
      reporter.report(operation, paths);
      for (const path of new Set(paths)) meters.counter('supplierDrift').add(1, { operation, path });
    },
    counts: () => reporter.counts(),
  };
}

/** One lookup that found several orders under one reference (booking_order_conflicts_total), on an activity's meter. */
export function countOrderConflict(meter: MetricMeter): void {
  const def = BOOKING_METRICS.orderConflicts;
  meter.createCounter(def.name, undefined, def.help).add(1);
}
