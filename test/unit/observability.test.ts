/** Observability settings, JSON log lines, and the names dashboards and alert rules use. */
import { loadConfig, ConfigError } from '../../src/config';
import { jsonLine, stageOfActivity } from '../../src/observability/logging';
import { runtimeOptions } from '../../src/observability/runtime';

const base = { SUPPLIER_APP_KEY: 'k', SUPPLIER_APP_SECRET: 's3cret-value' };

describe('configuration', () => {
  test('by default: text logs, no metrics endpoint, no tracing', () => {
    expect(loadConfig(base).observability).toEqual({ logFormat: 'text' });
    expect(loadConfig({ ...base, WORKER_METRICS_PORT: '' }).observability).toEqual({ logFormat: 'text' });
  });

  test('metrics port, JSON logs and an OTLP exporter, from their variables', () => {
    const config = loadConfig({
      ...base,
      WORKER_METRICS_PORT: '9464',
      LOG_FORMAT: 'json',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_SERVICE_NAME: 'booking-eu',
    });
    expect(config.observability).toEqual({
      logFormat: 'json',
      metrics: { host: '0.0.0.0', port: 9464 },
      tracing: { exporter: 'otlp', serviceName: 'booking-eu' },
    });
  });

  test('bad values name their variable', () => {
    for (const [name, value] of [
      ['WORKER_METRICS_PORT', '70000'],
      ['LOG_FORMAT', 'xml'],
      ['OTEL_TRACES_EXPORTER', 'zipkin'],
    ]) {
      expect(() => loadConfig({ ...base, [name!]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, [name!]: value })).toThrow(new RegExp(name!));
    }
  });

  test('the Prometheus endpoint follows its conventions: _total counters, unit suffixes, seconds', () => {
    const prometheus = (
      runtimeOptions({ logLevel: 'INFO', logFormat: 'text', metrics: { host: '127.0.0.1', port: 9464 } })
        .telemetryOptions?.metrics as { prometheus: Record<string, unknown> }
    ).prometheus;
    expect(prometheus).toMatchObject({
      bindAddress: '127.0.0.1:9464',
      countersTotalSuffix: true,
      unitSuffix: true,
      useSecondsForDurations: true,
    });
    expect(runtimeOptions({ logLevel: 'INFO', logFormat: 'text' }).telemetryOptions?.metrics).toBeUndefined();
  });
});

describe('LOG_FORMAT=json', () => {
  const at = 1_790_000_000_123n * 1_000_000n;

  test('an activity line: one object with workflowId, runId, activity and its booking stage; no task token', () => {
    const line = jsonLine({
      level: 'INFO',
      message: 'Activity completed',
      timestampNanos: at,
      meta: {
        activityType: 'queryOrder',
        workflowId: 'booking:abc',
        workflowRunId: 'run-1',
        taskToken: 'dG9rZW4=',
        attempt: 2,
      },
    });
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      time: new Date(1_790_000_000_123).toISOString(),
      level: 'INFO',
      message: 'Activity completed',
      workflowId: 'booking:abc',
      runId: 'run-1',
      activity: 'queryOrder',
      bookingStage: 'recovering',
      attempt: 2,
    });
  });

  test('a workflow line keeps its ids; bigints and errors are written as text', () => {
    const parsed = JSON.parse(
      jsonLine({
        level: 'ERROR',
        message: 'Booking unresolved',
        timestampNanos: at,
        meta: {
          workflowId: 'booking:abc',
          runId: 'run-2',
          workflowType: 'bookingWorkflow',
          n: 5n,
          error: new Error('x\ny'),
        },
      }),
    ) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      workflowId: 'booking:abc',
      runId: 'run-2',
      n: '5',
      error: { name: 'Error', message: 'x\ny' },
    });
  });

  test('each activity of ours names its stage', () => {
    expect(['validateBookingRequest', 'checkAvail', 'book', 'queryOrder'].map(stageOfActivity)).toEqual([
      'checking-availability',
      'checking-availability',
      'booking',
      'recovering',
    ]);
    expect(stageOfActivity('other')).toBeUndefined();
  });
});
