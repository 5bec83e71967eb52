/** Observability settings, JSON log lines, and the names dashboards and alert rules use. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig, ConfigError } from '../../src/runtime/config/index';
import {
  BOOKING_METRICS,
  CALLBACK_METRICS,
  exportedName,
  type MetricDefinition,
} from '../../src/runtime/observability/definitions';
import { counterText } from '../../src/runtime/observability/exposition';
import { jsonLine, stageOfActivity } from '../../src/runtime/observability/logging';
import { runtimeOptions } from '../../src/runtime/observability/runtime';
import { bundleTracingMismatch } from '../../src/runtime/observability/tracing';
import { BookingMeters, createSupplierObserver } from '../../src/runtime/observability/metrics';
import { noopMetricMeter, type MetricMeter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities/booking';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SupplierClient } from '../../src/runtime/supplier/interface';

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
      // Loopback unless told otherwise: like every listener, closed to strangers by default.
      metrics: { host: '127.0.0.1', port: 9464 },
      tracing: { exporter: 'otlp', serviceName: 'booking-eu' },
    });
    expect(loadConfig({ ...base, WORKER_METRICS_PORT: '9464', WORKER_METRICS_HOST: '0.0.0.0' }).observability).toEqual({
      logFormat: 'text',
      metrics: { host: '0.0.0.0', port: 9464 },
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
    expect(
      ['validateBookingRequest', 'checkRequestAndAvail', 'checkAvail', 'book', 'queryOrder'].map(stageOfActivity),
    ).toEqual(['checking-availability', 'checking-availability', 'checking-availability', 'booking', 'recovering']);
    expect(stageOfActivity('other')).toBeUndefined();
  });
});

describe('dashboards and alert rules name only metrics the worker exports', () => {
  const ROOT = path.resolve(__dirname, '../..');
  /** Metric family → its definition (undefined: the SDK's, whose labels are not checked). */
  const exported = new Map<string, MetricDefinition | undefined>();
  for (const def of [...Object.values(BOOKING_METRICS), ...Object.values(CALLBACK_METRICS)] as MetricDefinition[]) {
    const name = exportedName(def);
    if (def.kind === 'histogram') {
      for (const s of ['_bucket', '_sum', '_count'])
        exported.set(name + s, { ...def, labels: [...def.labels, ...(s === '_bucket' ? ['le'] : [])] });
    } else exported.set(name, def);
  }
  for (const line of readFileSync(path.join(ROOT, 'test/fixtures/sdk-metric-names.txt'), 'utf8').split('\n')) {
    const [name, type] = line.startsWith('#') ? [] : line.split(' ');
    if (!name) continue;
    for (const s of type === 'histogram' ? ['_bucket', '_sum', '_count'] : ['']) exported.set(name + s, undefined);
  }
  /** Prometheus's own series, which every scrape target has. */
  const SYNTHETIC = new Set(['up']);
  /**
   * The families a supplier account's requests are recorded on with its `supplier_account` label, read from what
   * createSupplierObserver records (a worker's own supplier records them without it).
   */
  const accountLabelled = (() => {
    const names = new Set<string>();
    const keep =
      (name: string) =>
      (_value: number, tags: Record<string, unknown> = {}) => {
        if ('supplier_account' in tags) names.add(name);
      };
    const meter = {
      ...noopMetricMeter,
      createCounter: (name: string) => ({ ...noopMetricMeter.createCounter(name), add: keep(name) }),
      createHistogram: (name: string) => ({ ...noopMetricMeter.createHistogram(name), record: keep(name) }),
    } as unknown as MetricMeter;
    const observer = createSupplierObserver(new BookingMeters(meter), 'acme');
    observer.request('book').end({ httpStatus: 429, errorType: 'SupplierRateLimited' });
    observer.rateLimitWait('book', 0.1);
    observer.queryOrdersBatch(3);
    return [...exported].filter(([, def]) => def && names.has(def.name)).map(([family]) => family);
  })();
  /** The families the definitions say may carry the account: the supplier's above, the workflows' and the callbacks'. */
  const byAccount = [...exported].filter(([, def]) => def?.byAccount).map(([family]) => family);
  /** Of those, what a person follows up: each alert on them says the account. */
  const followedUp = [
    'booking_outcomes_total',
    'booking_confirmed_above_accepted_total',
    'order_cancel_fee_above_accepted_total',
    'order_outcomes_total',
    'reconciliation_findings_total',
  ];

  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'infra/grafana/dashboards/booking.json'), 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  const rules = parse(readFileSync(path.join(ROOT, 'infra/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const expressions = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr }))),
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
  ];

  test('there is something to check: every panel has a query, every rule an expression', () => {
    expect(expressions.length).toBeGreaterThan(25);
    expect(rules.groups[0]!.rules.map((r) => r.alert)).toEqual([
      'BookingUnresolved',
      'ConfirmedAboveAccepted',
      'CancelFeeAboveAccepted',
      'SupplierOrderConflict',
      'OrderNeedsPerson',
      'ReconciliationFindings',
      'ReconciliationNotRunning',
      'BookingRecoveryBacklogGrowing',
      'SupplierRateLimiting',
      'SupplierServerErrors',
      'SupplierAccountDown',
      'BookingWorkerNotPolling',
      'WorkflowTaskFailing',
    ]);
  });

  test('supplier calls are seen per account: each panel on them takes the account variable, each alert groups by account', () => {
    expect(accountLabelled).toEqual(
      expect.arrayContaining([
        'booking_supplier_responses_total',
        'booking_supplier_rate_limited_total',
        'booking_supplier_errors_total',
        'booking_supplier_request_duration_seconds_bucket',
      ]),
    );
    const onAccounts = (expr: string) => metricNames(expr).some(({ name }) => accountLabelled.includes(name));
    const panels = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
    const supplierPanels = panels.filter((p) => onAccounts(p.expr));
    expect(supplierPanels.length).toBeGreaterThanOrEqual(8);
    for (const { title, expr } of supplierPanels) {
      for (const { name, labels } of metricNames(expr).filter((m) => accountLabelled.includes(m.name))) {
        expect({ title, name, account: labels.some(([l]) => l === 'supplier_account') }).toEqual({
          title,
          name,
          account: true,
        });
      }
      expect({ title, groupsByAccount: /by \([^)]*supplier_account/.test(expr) }).toEqual({
        title,
        groupsByAccount: true,
      });
    }
    expect(JSON.stringify(dashboard)).toContain('"name":"account"');
    const supplierAlerts = rules.groups.flatMap((g) => g.rules).filter((r) => onAccounts(r.expr));
    expect(supplierAlerts.map((r) => r.alert)).toEqual([
      'SupplierRateLimiting',
      'SupplierServerErrors',
      'SupplierAccountDown',
    ]);
    for (const { alert, expr } of supplierAlerts) {
      const groupings = [...expr.matchAll(/\bby \(([^)]*)\)/g)].map((m) => m[1]!);
      expect({ alert, groupings: groupings.every((g) => g.includes('supplier_account')) }).toEqual({
        alert,
        groupings: true,
      });
    }
  });

  test('bookings, orders, sweeps and callbacks are seen per account too: panels take the variable, alerts name it', () => {
    expect(byAccount).toEqual(expect.arrayContaining([...accountLabelled, ...followedUp, 'booking_callbacks_total']));
    const panels = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
    const onBookings = panels.filter((p) =>
      metricNames(p.expr).some(({ name }) => byAccount.includes(name) && !accountLabelled.includes(name)),
    );
    expect(onBookings.length).toBeGreaterThanOrEqual(8);
    for (const { title, expr } of onBookings) {
      const filtered = metricNames(expr).every(({ labels }) => labels.some(([l]) => l === 'supplier_account'));
      expect({ title, filtered }).toEqual({ title, filtered: true });
    }
    const alerts = rules.groups
      .flatMap((g) => g.rules)
      .filter((r) => metricNames(r.expr).some(({ name }) => followedUp.includes(name)));
    expect(alerts.map((r) => r.alert)).toEqual([
      'BookingUnresolved',
      'ConfirmedAboveAccepted',
      'CancelFeeAboveAccepted',
      'OrderNeedsPerson',
      'ReconciliationFindings',
    ]);
    for (const { alert, expr } of alerts)
      expect({ alert, byAccount: /\bby \([^)]*supplier_account/.test(expr) }).toEqual({ alert, byAccount: true });
  });

  test.each(expressions)('$where', ({ expr }) => {
    const names = metricNames(expr);
    expect(names.length).toBeGreaterThan(0);
    for (const { name, labels } of names) {
      if (SYNTHETIC.has(name)) continue;
      expect(exported.has(name) ? name : `${name} (not exported)`).toBe(name);
      const def = exported.get(name);
      if (!def) continue;
      for (const [label, value] of labels) {
        if (label === 'supplier_account' && byAccount.includes(name)) continue;
        expect(def.labels).toContain(label);
        // A value the code never records would make a panel or an alert silently empty.
        if (value !== undefined && def.values?.[label]) expect(def.values[label]).toContain(value);
      }
    }
  });
});

/** PromQL's keywords and aggregation operators (which may be followed by `by (...)` before their parenthesis). */
const PROMQL_WORDS = new Set(
  'by without or and unless on ignoring group_left group_right bool offset sum min max avg group stddev stdvar count count_values bottomk topk quantile'.split(
    ' ',
  ),
);

/** The metric names of a PromQL expression, each with the label names its selector matches on. */
function metricNames(expr: string): Array<{ name: string; labels: Array<[string, string | undefined]> }> {
  const found: Array<{ name: string; labels: Array<[string, string | undefined]> }> = [];
  const text = expr.replace(/\[[^\]]*\]/g, ' ');
  for (const m of text.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name, selector, call] = m;
    const before = text.slice(0, m.index).trimEnd();
    // A function's name, a keyword, or a label inside by (...) / a selector is no metric.
    if (
      call ||
      PROMQL_WORDS.has(name!) ||
      /\b(by|without|on|ignoring)\s*\([^)]*$/.test(before) ||
      /\{[^}]*$/.test(before)
    )
      continue;
    // Label matchers; an exact match (=) gives its value, a regex or negation none.
    const labels = [...(selector ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"/g)].map(
      (l): [string, string | undefined] => [l[1]!, l[2] === '=' ? l[3] : undefined],
    );
    found.push({ name: name!, labels });
  }
  return found;
}

describe('a prebuilt workflow bundle matches the worker tracing', () => {
  const traced = 'var x = class OpenTelemetryInboundInterceptor {}';
  test('matching bundles pass', () => {
    expect(bundleTracingMismatch(traced, true)).toBeUndefined();
    expect(bundleTracingMismatch('plain', false)).toBeUndefined();
  });
  test('a mismatch names the fix', () => {
    expect(bundleTracingMismatch('plain', true)).toMatch(/npm run bundle -- --tracing/);
    expect(bundleTracingMismatch(traced, false)).toMatch(/OTEL_TRACES_EXPORTER/);
  });
});

/** A meter that records every counter addition, to read which series a piece of code writes. */
function recordingMeter() {
  const added: Array<{ name: string; value: number; tags: Record<string, unknown> }> = [];
  const meter = {
    ...noopMetricMeter,
    createCounter: (name: string) => ({
      ...noopMetricMeter.createCounter(name),
      add: (value: number, tags: Record<string, unknown> = {}) => added.push({ name, value, tags }),
    }),
  } as unknown as MetricMeter;
  return { meter, added };
}

describe('BookingMeters.initialize', () => {
  test("with accounts, each account's series too, so an alert sees the first unresolved booking or 429 of each", () => {
    const { meter, added } = recordingMeter();
    const workflow = { namespace: 'ns', taskQueue: 'q', workflowType: 'bookingWorkflow' };
    new BookingMeters(meter).initialize(workflow, ['alpha', 'beta']);
    for (const supplier_account of ['alpha', 'beta']) {
      expect(added).toContainEqual({
        name: 'booking_outcomes',
        value: 0,
        tags: { kind: 'unresolved', supplier_account, ...workflow },
      });
      expect(added).toContainEqual({
        name: 'booking_supplier_rate_limited',
        value: 0,
        tags: { operation: 'book', supplier_account },
      });
    }
    // And the series of bookings on no account (the worker's own supplier), as before.
    expect(added).toContainEqual({ name: 'booking_outcomes', value: 0, tags: { kind: 'unresolved', ...workflow } });
    expect(added.filter((a) => a.name === 'booking_outcomes')).toHaveLength(6 * 3);
  });

  test('records every known series at 0, workflow-side ones with the labels the SDK adds to workflow metrics', () => {
    const { meter, added } = recordingMeter();
    new BookingMeters(meter).initialize({ namespace: 'ns', taskQueue: 'q', workflowType: 'bookingWorkflow' });
    expect(added.every((a) => a.value === 0)).toBe(true);
    expect(added).toContainEqual({
      name: 'booking_outcomes',
      value: 0,
      tags: { kind: 'unresolved', namespace: 'ns', taskQueue: 'q', workflowType: 'bookingWorkflow' },
    });
    expect(added).toContainEqual({
      name: 'booking_supplier_responses',
      value: 0,
      tags: { operation: 'book', status_class: '5xx' },
    });
    expect(added.filter((a) => a.name === 'booking_supplier_drift')).toEqual([]);
  });
});

describe('order conflicts', () => {
  test('counted on the worker meters, on the very series initialize() starts at 0, so the alert sees the first', async () => {
    const { meter, added } = recordingMeter();
    const meters = new BookingMeters(meter);
    meters.initialize({ namespace: 'ns', taskQueue: 'q', workflowType: 'bookingWorkflow' });
    const ref = '6f1f5b5e-8f0a-4c47-9a53-0a4b7b1f1c11';
    // A Failed order listed before a Confirmed one under the same reference.
    const supplier = {
      queryOrders: async () => ({
        orders: [
          { status: 4, customerReferenceNo: ref, platformReferenceNo: 'P-1' },
          { status: 2, customerReferenceNo: ref, platformReferenceNo: 'P-2' },
        ],
        unreadable: [],
      }),
    } as unknown as SupplierClient;
    const { queryOrder } = createActivities({ supplier, profile: defaultSupplierProfile, meters });
    const outcome = await new MockActivityEnvironment().run(queryOrder, { customerReferenceNo: ref, traceId: 't' });
    expect(outcome).toMatchObject({ kind: 'found', order: { status: 2, platformReferenceNo: 'P-2' } });
    expect(added.filter((a) => a.name === 'booking_order_conflicts')).toEqual([
      { name: 'booking_order_conflicts', value: 0, tags: {} },
      { name: 'booking_order_conflicts', value: 1, tags: {} },
    ]);
  });
});

describe('counters served without an SDK runtime (the callback receiver)', () => {
  test('HELP, TYPE and every known series at 0, then the counted values', () => {
    const def = CALLBACK_METRICS.callbacks;
    const text = counterText(def, new Map([['result=unverified', 3]]));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe(`# HELP booking_callbacks_total ${def.help}`);
    expect(lines[1]).toBe('# TYPE booking_callbacks_total counter');
    expect(lines.slice(2)).toEqual(
      def.values.result.map((r) => `booking_callbacks_total{result="${r}"} ${r === 'unverified' ? 3 : 0}`),
    );
  });
});
