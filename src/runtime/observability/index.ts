/**
 * Observability of a worker process, set up once at start from the configuration: the SDK runtime
 * (logger, Prometheus endpoint), the booking's meters, and tracing when on. `npm run worker` and
 * `npm start` call it before creating the worker; createWorkerFromConfig takes what it returns.
 */
import { Runtime, type LogLevel } from '@temporalio/worker';
import type { ObservabilityConfig } from '../config/index';
import { BookingMeters } from './metrics';
import { installRuntime } from './runtime';
import { spanProcessorFor, startTracing, type Tracing } from './tracing';

export { BookingMeters, countedDrift, createSupplierObserver } from './metrics';
export { startTracing, type Tracing } from './tracing';

export interface Observability {
  /** Where Prometheus scrapes this worker, when metrics are on. */
  metricsUrl?: string;
  meters: BookingMeters;
  tracing?: Tracing;
  /** Flushes spans; the runtime stops by itself with the last worker and connection. */
  shutdown(): Promise<void>;
}

export function setUpObservability(
  logLevel: LogLevel,
  config: ObservabilityConfig = { logFormat: 'text' },
): Observability {
  const { metricsUrl } = installRuntime({ logLevel, logFormat: config.logFormat, metrics: config.metrics });
  const tracing = config.tracing
    ? startTracing({ serviceName: config.tracing.serviceName, processor: spanProcessorFor(config.tracing.exporter) })
    : undefined;
  return {
    ...(metricsUrl ? { metricsUrl } : {}),
    meters: new BookingMeters(Runtime.instance().metricMeter),
    ...(tracing ? { tracing } : {}),
    shutdown: async () => tracing?.shutdown(),
  };
}
