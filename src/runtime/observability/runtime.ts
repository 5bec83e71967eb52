/**
 * The SDK runtime of a worker process, installed once at start: its logger (text or JSON, see
 * ./logging.ts) and, when a metrics port is set, the Prometheus endpoint that serves the SDK's own
 * metrics and the booking's (./definitions.ts), which go through the same runtime meter.
 */
import { Runtime, type LogLevel, type RuntimeOptions } from '@temporalio/worker';
import { BOOKING_METRICS } from './definitions';
import { createLogger, type LogFormat } from './logging';

export interface RuntimeSetup {
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Off when absent. */
  metrics?: { host: string; port: number };
}

/**
 * Prometheus conventions for every metric on the endpoint, the SDK's included: counters end in
 * `_total`, histograms carry their unit, durations are in seconds (the SDK's default is milliseconds
 * with no suffix). Dashboards and alert rules in deploy/ are written against these names.
 */
export function runtimeOptions(setup: RuntimeSetup): RuntimeOptions {
  const logger = createLogger(setup.logLevel, setup.logFormat);
  const options: RuntimeOptions = {
    logger,
    telemetryOptions: {
      // In JSON the SDK core's own lines (gRPC retries, task failures) must come through our logger too,
      // or they would be text in the middle of JSON.
      ...(setup.logFormat === 'json'
        ? { logging: { filter: { core: setup.logLevel, other: 'ERROR' }, forward: {} } }
        : {}),
      ...(setup.metrics
        ? {
            metrics: {
              prometheus: {
                bindAddress: `${setup.metrics.host}:${setup.metrics.port}`,
                countersTotalSuffix: true,
                unitSuffix: true,
                useSecondsForDurations: true,
                histogramBucketOverrides: bucketOverrides(),
              },
            },
          }
        : {}),
    },
  };
  return options;
}

function bucketOverrides(): Record<string, number[]> {
  return Object.fromEntries(
    Object.values(BOOKING_METRICS)
      .filter((def) => 'buckets' in def && def.buckets)
      .map((def) => [def.name, [...(def as { buckets: readonly number[] }).buckets]]),
  );
}

/** Installs the runtime; returns the metrics URL when metrics are on. */
export function installRuntime(setup: RuntimeSetup): { metricsUrl?: string } {
  Runtime.install(runtimeOptions(setup));
  if (!setup.metrics) return {};
  const host = setup.metrics.host === '0.0.0.0' ? '127.0.0.1' : setup.metrics.host;
  return { metricsUrl: `http://${host}:${setup.metrics.port}/metrics` };
}
