/**
 * The booking's own metrics: one list of names, units, label names and help texts, read by the code
 * that records them (workflow code through the SDK's workflow meter, the supplier side through the
 * runtime's meter) and by the test that checks every metric a dashboard or alert rule names exists.
 *
 * No imports and no I/O: workflow code imports it. Labels hold closed sets only (stage, outcome kind,
 * operation, error type, status class, drift path folded from the spec's field names): never a
 * reference, an id or anything a guest typed.
 *
 * Exported names follow Prometheus conventions because the runtime's exporter is set up that way
 * (src/runtime/observability/runtime.ts): counters get `_total`, histograms their unit (`_seconds`).
 */

export type MetricKind = 'counter' | 'histogram';

/**
 * The label naming the supplier account (the accounts file's `id`, a closed set the operator writes): on the supplier
 * side's series of an account's stack and on the workflows' series of a booking, order or sweep on an account. Absent
 * where there is none (the worker's own SUPPLIER_* credential, bookings from before accounts), so it is not in a
 * definition's `labels`, which list the labels every series has.
 */
export const ACCOUNT_LABEL = 'supplier_account';

export interface MetricDefinition {
  /** The name given to the SDK's meter; the exported name adds the suffixes (exportedNames). */
  name: string;
  kind: MetricKind;
  /** Histograms only; becomes the name's suffix. */
  unit?: 'seconds';
  valueType?: 'int' | 'float';
  labels: readonly string[];
  /** Series may carry ACCOUNT_LABEL too: they are recorded per supplier account where there is one. */
  byAccount?: true;
  /**
   * The values a label takes, where they are a closed set known ahead: the worker records each series at 0
   * when it starts (BookingMeters.initialize), since Prometheus's increase() and rate() miss a counter's
   * first step from an absent series (a worker's first unresolved booking would otherwise never alert).
   */
  values?: Readonly<Record<string, readonly string[]>>;
  help: string;
  /** Histograms only: bucket boundaries, in the unit. */
  buckets?: readonly number[];
}

const define = <const T extends Record<string, MetricDefinition>>(defs: T) => defs;

const OPERATIONS = ['checkAvail', 'book', 'queryOrders'] as const;

export const BOOKING_METRICS = define({
  outcomes: {
    /** Recorded by workflow code, like the four below (src/workflows/counters.ts). */
    name: 'booking_outcomes',
    kind: 'counter',
    byAccount: true,
    labels: ['kind'],
    values: { kind: ['confirmed', 'failed', 'unavailable', 'price-rejected', 'cancelled', 'unresolved'] },
    help: 'Bookings ended, by outcome kind (confirmed, failed, unavailable, price-rejected, cancelled, unresolved).',
  },
  stageEntered: {
    name: 'booking_stage_entered',
    kind: 'counter',
    byAccount: true,
    labels: ['stage'],
    values: { stage: ['checking-availability', 'awaiting-price-approval', 'booking', 'recovering'] },
    help: 'Bookings entering a stage (checking-availability, awaiting-price-approval, booking, recovering).',
  },
  recoveriesEnded: {
    name: 'booking_recoveries_ended',
    kind: 'counter',
    byAccount: true,
    labels: ['kind'],
    values: { kind: ['confirmed', 'failed', 'unresolved'] },
    help: 'Bookings that left recovery, by outcome kind; with booking_stage_entered{stage="recovering"}, the recovery backlog.',
  },
  bookAttempts: {
    name: 'booking_book_attempts',
    kind: 'counter',
    byAccount: true,
    labels: ['result'],
    values: { result: ['order', 'refused', 'rejected', 'ambiguous'] },
    help: 'Book activities completed, by the Book rule value (order, refused, rejected, ambiguous).',
  },
  recoveryPolls: {
    name: 'booking_recovery_polls',
    kind: 'counter',
    byAccount: true,
    labels: ['result'],
    values: { result: ['confirmed', 'failed', 'pending', 'not-found', 'error'] },
    help: 'Recovery polls (QueryOrders lookups of one booking), by result (confirmed, failed, pending, not-found, error).',
  },
  confirmedAboveAccepted: {
    /** Recorded by the booking workflow (src/workflows/counters.ts) when an order is confirmed. */
    name: 'booking_confirmed_above_accepted',
    kind: 'counter',
    byAccount: true,
    labels: [],
    help: 'Bookings confirmed at a price above the one accepted (beyond the caller allowance and a cent): a person checks the charge.',
  },
  cancelFeeAboveAccepted: {
    /** Recorded by the order workflow (src/workflows/counters.ts) when a cancellation ends. */
    name: 'order_cancel_fee_above_accepted',
    kind: 'counter',
    byAccount: true,
    labels: [],
    help: 'Cancellations the supplier charged a service fee above the fee accepted (or any fee for a free one): a person checks the charge.',
  },
  orderOutcomes: {
    /** Recorded by the order workflow's code (src/workflows/counters.ts). */
    name: 'order_outcomes',
    kind: 'counter',
    byAccount: true,
    labels: ['kind'],
    values: {
      kind: [
        'cancelled',
        'cancel-failed',
        'cancel-unresolved',
        'cancel-refused',
        'cancel-stopped',
        'quoted',
        'checked',
        'changed-by-supplier',
        'not-cancellable',
        'cancel-not-done',
      ],
    },
    help:
      'Order workflow runs ended, by outcome kind; cancel-failed, cancel-unresolved, cancel-stopped, ' +
      'changed-by-supplier and cancel-not-done need a person.',
  },
  sweeps: {
    /** Recorded by the sweep's code (src/workflows/counters.ts); a sweep that fails records nothing. */
    name: 'reconciliation_sweeps',
    kind: 'counter',
    byAccount: true,
    labels: ['result'],
    values: { result: ['clean', 'findings'] },
    help: 'Reconciliation sweeps ended, by result (clean, findings). No increase for a whole interval: sweeps fail or do not run.',
  },
  sweepFindings: {
    name: 'reconciliation_findings',
    kind: 'counter',
    byAccount: true,
    labels: ['kind'],
    values: { kind: ['orphan', 'mismatch', 'unreadable', 'failed-slice'] },
    help: 'Reconciliation findings, by kind (orphan, mismatch, unreadable order, failed listing): each needs a person.',
  },
  /** Recorded on the worker side (src/runtime/observability/metrics.ts), like the rest below. */
  supplierRequestDuration: {
    name: 'booking_supplier_request_duration',
    kind: 'histogram',
    byAccount: true,
    unit: 'seconds',
    valueType: 'float',
    labels: ['operation', 'outcome'],
    help: 'Supplier HTTP requests, from sending to the answer read, by operation and outcome (success or error).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 90],
  },
  supplierResponses: {
    name: 'booking_supplier_responses',
    kind: 'counter',
    byAccount: true,
    labels: ['operation', 'status_class'],
    values: { operation: OPERATIONS, status_class: ['2xx', '4xx', '5xx', 'other', 'none'] },
    help: 'Supplier requests by HTTP status class (2xx, 4xx, 5xx, other; none when no answer came).',
  },
  supplierErrors: {
    name: 'booking_supplier_errors',
    kind: 'counter',
    byAccount: true,
    labels: ['operation', 'error_type'],
    help: 'Supplier requests that ended in an error, by its stable type (SupplierRateLimited, SupplierServerError, ...).',
  },
  supplierRateLimited: {
    name: 'booking_supplier_rate_limited',
    kind: 'counter',
    byAccount: true,
    labels: ['operation'],
    values: { operation: OPERATIONS },
    help: 'Supplier answers 429 (quota limit exceeded).',
  },
  rateLimiterWait: {
    name: 'booking_rate_limiter_wait',
    kind: 'histogram',
    byAccount: true,
    unit: 'seconds',
    valueType: 'float',
    labels: ['operation'],
    help: "Time a request waited for the worker's token bucket before it was sent.",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
  queryOrdersBatchReferences: {
    name: 'booking_query_orders_batch_references',
    kind: 'histogram',
    byAccount: true,
    valueType: 'int',
    labels: [],
    help: 'References carried by one QueryOrders request of the coalescer.',
    buckets: [1, 2, 5, 10, 20, 30, 40, 50],
  },
  supplierDrift: {
    name: 'booking_supplier_drift',
    kind: 'counter',
    labels: ['operation', 'path'],
    help: 'Supplier answer fields whose shape drifts from the spec, by operation and JSON path (indices folded).',
  },
  /**
   * Recorded by the queryOrder and the sweep's listing activities (src/activities/booking.ts) on the worker's
   * meters, so the series the worker starts at 0 is the one that counts (an alert sees the first conflict).
   */
  orderConflicts: {
    name: 'booking_order_conflicts',
    kind: 'counter',
    labels: [],
    help:
      'QueryOrders lookups that found several orders under one customer reference (one reference should be one ' +
      'order): a Confirmed one is read, else one still pending. Each is also an ERROR line with the references and statuses.',
  },
});

export type BookingMetricKey = keyof typeof BOOKING_METRICS;

/**
 * The callback receiver's metrics (src/servers/callbacks): its own process, served on its own `/metrics`
 * (./exposition.ts), not through a worker's runtime, so they are listed apart from the worker's.
 */
export const CALLBACK_METRICS = define({
  callbacks: {
    name: 'booking_callbacks',
    kind: 'counter',
    byAccount: true,
    labels: ['result'],
    values: {
      result: [
        'signalled-booking',
        'signalled-order',
        'unknown-reference',
        'duplicate',
        'unverified',
        'invalid',
        'too-large',
        'failed',
        'deferred',
      ],
    },
    help:
      'Order-status callbacks received, by what became of them: signalled to the booking or its order workflow, ' +
      'no open workflow for the reference, a duplicate, refused 401 (unverified), 400 (invalid), 413 (too large), ' +
      'or 503 (failed: Temporal unreachable; deferred: the order was read moments ago): the supplier sends it again.',
  },
});

export type CallbackResult = (typeof CALLBACK_METRICS.callbacks.values.result)[number];

/** The name Prometheus shows for a definition (series of a histogram add _bucket, _sum, _count). */
export function exportedName(def: MetricDefinition): string {
  if (def.kind === 'counter') return `${def.name}_total`;
  return def.unit ? `${def.name}_${def.unit}` : def.name;
}

/** Metrics recorded by workflow code: the SDK adds its own labels to them (namespace, taskQueue, workflowType). */
export const WORKFLOW_METRICS: readonly BookingMetricKey[] = [
  'outcomes',
  'stageEntered',
  'recoveriesEnded',
  'bookAttempts',
  'recoveryPolls',
];

/** Every combination of the label values a definition lists (none when it lists none; one for a label-less counter). */
export function labelCombinations(def: MetricDefinition): Array<Record<string, string>> {
  // A counter without labels has exactly one series, known ahead.
  if (!def.values) return def.labels.length === 0 ? [{}] : [];
  let combos: Array<Record<string, string>> = [{}];
  for (const [label, values] of Object.entries(def.values)) {
    combos = combos.flatMap((c) => values.map((v) => ({ ...c, [label]: v })));
  }
  return combos;
}
