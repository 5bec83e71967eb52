/**
 * Traces with OpenTelemetry, off unless OTEL_TRACES_EXPORTER says where spans go. When on, the SDK's
 * OpenTelemetry plugin (@temporalio/interceptors-opentelemetry) traces the client's start, the workflow
 * run and each activity, handing the context along in Temporal headers, and each supplier request is a
 * client span under its activity (./metrics.ts) whose trace id is sent as the supplier's `Trace-Id`. So
 * one booking is one trace, from the caller's start to the supplier's logs.
 *
 * The exporter reads the standard variables itself (OTEL_EXPORTER_OTLP_ENDPOINT, ..._HEADERS, ...), and
 * the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Spans carry ids and operation names, never
 * a guest's data (the interceptors record workflow and activity ids, which are references at most).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

export interface Tracing {
  /** For Worker.create and Client's `plugins`: interceptors for client, workflow and activities, and the workflow span sink. */
  plugin: OpenTelemetryPlugin;
  /** Exports what is left and unregisters the global tracer, context manager and propagator. */
  shutdown(): Promise<void>;
}

/** Where spans go for OTEL_TRACES_EXPORTER's values: OTLP over HTTP in batches, or the console. */
export function spanProcessorFor(exporter: 'otlp' | 'console'): SpanProcessor {
  return exporter === 'otlp'
    ? new BatchSpanProcessor(new OTLPTraceExporter())
    : new SimpleSpanProcessor(new ConsoleSpanExporter());
}

/**
 * Registers the process's tracer provider (one per process, like the SDK runtime) with `processor`;
 * tests pass a SimpleSpanProcessor over an InMemorySpanExporter.
 */
export function startTracing(options: { serviceName: string; processor: SpanProcessor }): Tracing {
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': options.serviceName }))
    .merge(envDetectorSync.detect());
  const provider = new BasicTracerProvider({ resource, spanProcessors: [options.processor] });
  // Activities run in async contexts the interceptor opens; AsyncLocalStorage carries the span from the
  // activity to the supplier request, and W3C trace context is how the interceptors hand it over in headers.
  provider.register({
    contextManager: new AsyncLocalStorageContextManager().enable(),
    propagator: new W3CTraceContextPropagator(),
  });
  const plugin = new OpenTelemetryPlugin({ resource, spanProcessor: options.processor });
  return {
    plugin,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The SDK's workflow interceptors for tracing, which the plugin adds to a bundle built at start. */
export const TRACING_WORKFLOW_INTERCEPTORS =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** Something only a bundle with the tracing workflow interceptors contains (the SDK's span exporter sink). */
const TRACING_MARK = 'OpenTelemetryInboundInterceptor';

/**
 * A prebuilt bundle must match the worker's tracing: without the interceptors, workflows would not be
 * traced and each activity would start a trace of its own (and send its own Trace-Id); with them and no
 * tracing, every workflow task would call a sink the worker does not have. Returns the problem, if any.
 */
export function bundleTracingMismatch(bundleCode: string, tracing: boolean): string | undefined {
  const traced = bundleCode.includes(TRACING_MARK);
  if (tracing && !traced) {
    return 'WORKER_WORKFLOW_BUNDLE was built without tracing but OTEL_TRACES_EXPORTER is set: rebuild it with `npm run bundle -- --tracing`, or unset WORKER_WORKFLOW_BUNDLE';
  }
  if (!tracing && traced) {
    return 'WORKER_WORKFLOW_BUNDLE was built with --tracing but OTEL_TRACES_EXPORTER is not set: rebuild it without --tracing, or set OTEL_TRACES_EXPORTER';
  }
  return undefined;
}

/**
 * Tracing for a client process (`npm run book`) from OpenTelemetry's own variables: on when OTEL_TRACES_EXPORTER
 * is otlp or console, so the booking's trace starts at the caller. Workers read the same variables through src/runtime/config.
 */
export function clientTracingFromEnv(env: Record<string, string | undefined>): Tracing | undefined {
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter !== 'otlp' && exporter !== 'console') return undefined;
  return startTracing({
    serviceName: env.OTEL_SERVICE_NAME || 'hotel-booking-client',
    processor: spanProcessorFor(exporter),
  });
}
