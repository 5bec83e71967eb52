/**
 * The sweep describes a reference's order workflow only where it reads it. Proven against the rule: for every
 * booking view, listed status and order view, where needsOrderView says no, classifyOrder's finding is the same
 * whatever the order workflow says (or with none looked up); and every orphan's order workflow is looked up (the
 * sweep cancels an orphan only if none exists). Then the activity's describe calls, counted.
 */
import { temporal } from '@temporalio/proto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReconciliationActivities } from '../../src/activities/sweep';
import { bookingWorkflowId, orderWorkflowId } from '../../src/api/contract/index';
import {
  classifyOrder,
  needsOrderView,
  type BookingView,
  type WorkflowView,
} from '../../src/runtime/rules/sweep-classify';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';

const codes = defaultSupplierProfile.orderStatus;

const bookings: WorkflowView[] = [
  { status: 'none' },
  { status: 'closed', stage: 'recovering' },
  { status: 'running', stage: 'recovering' },
  ...['confirmed', 'failed', 'unresolved', 'unavailable', 'price-rejected', 'cancelled'].map((stage) => ({
    status: 'completed' as const,
    stage,
  })),
  // Completed with no outcome or a running stage (a describe's lagging copy): an unknown outcome.
  { status: 'completed' },
  { status: 'completed', stage: 'booking' },
];
/** Every status the profile names, and one it does not. */
const statuses = [...Object.values(codes), 99];
const orderViews: Array<WorkflowView | undefined> = [
  undefined,
  { status: 'none' },
  { status: 'running', stage: 'order-cancelling' },
  { status: 'running', stage: 'order-confirmed' },
  { status: 'running' },
  ...['order-cancelled', 'order-cancel-failed', 'order-cancel-stopped', 'order-confirmed', 'order-closed'].map(
    (stage) => ({ status: 'completed' as const, stage }),
  ),
  { status: 'closed', stage: 'order-cancelling' },
];

const cases = bookings.flatMap((booking) => statuses.map((status) => ({ booking, status })));

test.each(cases)('order view skipped only where no order view changes the finding: %o', ({ booking, status }) => {
  const findings = orderViews.map((order) => classifyOrder(status, order ? { booking, order } : { booking }, codes));
  if (!needsOrderView(status, booking, codes)) {
    for (const finding of findings) expect(finding).toEqual(findings[0]);
  }
  if (findings.some((f) => f.verdict === 'orphan')) expect(needsOrderView(status, booking, codes)).toBe(true);
});

test('the common cases skip it: confirmed and Confirmed, failed and Failed, a booking still at work', () => {
  const completed = (stage: string): WorkflowView => ({ status: 'completed', stage });
  expect(needsOrderView(codes.confirmed, completed('confirmed'), codes)).toBe(false);
  expect(needsOrderView(codes.failed, completed('failed'), codes)).toBe(false);
  expect(needsOrderView(codes.confirming, { status: 'running', stage: 'recovering' }, codes)).toBe(false);
  expect(needsOrderView(codes.cancelled, completed('confirmed'), codes)).toBe(true);
  expect(needsOrderView(codes.confirmed, { status: 'none' }, codes)).toBe(true);
  // Of the 77 combinations, the order workflow is read in 37.
  const needed = cases.filter(({ booking, status }) => needsOrderView(status, booking, codes));
  expect({ cases: cases.length, needed: needed.length }).toEqual({ cases: 77, needed: 37 });
});

const Status = temporal.api.enums.v1.WorkflowExecutionStatus;

/** A workflow service that knows the given workflows (id → status and stage) and counts its describes. */
function countingTemporal(known: Record<string, { status: number; stage?: string }>) {
  const described: string[] = [];
  const workflowService = {
    async describeWorkflowExecution({ execution }: { execution: { workflowId: string } }) {
      described.push(execution.workflowId);
      const found = known[execution.workflowId];
      if (!found) throw Object.assign(new Error('workflow not found'), { code: 5 });
      const indexedFields = found.stage
        ? { BookingStage: { data: Buffer.from(JSON.stringify(found.stage)) } }
        : undefined;
      return { workflowExecutionInfo: { status: found.status, searchAttributes: { indexedFields } } };
    },
  };
  const t = { services: { workflowService }, namespace: 'default' } as unknown as Parameters<
    typeof createReconciliationActivities
  >[0]['temporal'];
  return { t, described };
}

describe('lookUpBookings describes', () => {
  const agreeing = 'ref-confirmed';
  const orphan = 'ref-orphan';
  const known = {
    [bookingWorkflowId(agreeing)]: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, stage: 'confirmed' },
  };
  const lookUp = (input: Parameters<ReturnType<typeof createReconciliationActivities>['lookUpBookings']>[0]) => {
    const { t, described } = countingTemporal(known);
    const { lookUpBookings } = createReconciliationActivities({
      supplier: { queryOrders: () => Promise.reject(new Error('not listed here')) },
      profile: defaultSupplierProfile,
      temporal: t,
    });
    const run: Promise<Record<string, BookingView>> = new MockActivityEnvironment().run(lookUpBookings, input);
    return run.then((views) => ({ views, described }));
  };
  const listed = { status: { [agreeing]: codes.confirmed, [orphan]: codes.confirmed }, codes };

  test('one per confirmed and Confirmed reference, two per orphan', async () => {
    const { views, described } = await lookUp({ references: [agreeing, orphan], listed });
    expect(described).toEqual([bookingWorkflowId(agreeing), bookingWorkflowId(orphan), orderWorkflowId(orphan)]);
    expect(views).toEqual({
      [agreeing]: { booking: { status: 'completed', stage: 'confirmed' } },
      [orphan]: { booking: { status: 'none' }, order: { status: 'none' } },
    });
    expect(classifyOrder(codes.confirmed, views[agreeing]!, codes)).toEqual({ verdict: 'ok' });
  });

  test('a sweep started before, without listed statuses, has both described', async () => {
    const { views, described } = await lookUp({ references: [agreeing, orphan] });
    expect(described).toHaveLength(4);
    expect(views[agreeing]).toEqual({
      booking: { status: 'completed', stage: 'confirmed' },
      order: { status: 'none' },
    });
  });

  test('a reference with no listed status has both described', async () => {
    const { described } = await lookUp({ references: [agreeing], listed: { status: {}, codes } });
    expect(described).toEqual([bookingWorkflowId(agreeing), orderWorkflowId(agreeing)]);
  });
});

test("an order run's lagging copy (completed, still 'order-cancelling') is read from its history: the cancellation it made is no mismatch", async () => {
  const ref = 'ref-cancelled-by-its-order-run';
  const { t, described } = countingTemporal({
    [bookingWorkflowId(ref)]: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, stage: 'confirmed' },
    [orderWorkflowId(ref)]: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, stage: 'order-cancelling' },
  });
  const upsert = (stage: string) => ({
    upsertWorkflowSearchAttributesEventAttributes: {
      searchAttributes: { indexedFields: { BookingStage: { data: Buffer.from(JSON.stringify(stage)) } } },
    },
  });
  const reversed: Record<string, unknown[]> = {
    // Newest first: the run's last upsert is its ending.
    [orderWorkflowId(ref)]: [{}, upsert('order-cancelled'), {}, upsert('order-cancelling')],
  };
  Object.assign(t.services.workflowService, {
    async getWorkflowExecutionHistoryReverse({ execution }: { execution: { workflowId: string } }) {
      return { history: { events: reversed[execution.workflowId] ?? [] } };
    },
  });
  const { lookUpBookings } = createReconciliationActivities({
    supplier: { queryOrders: () => Promise.reject(new Error('not listed here')) },
    profile: defaultSupplierProfile,
    temporal: t,
  });
  const views: Record<string, BookingView> = await new MockActivityEnvironment().run(lookUpBookings, {
    references: [ref],
    listed: { status: { [ref]: codes.cancelled }, codes },
  });
  expect(views[ref]!.order).toEqual({ status: 'completed', stage: 'order-cancelled' });
  expect(classifyOrder(codes.cancelled, views[ref]!, codes)).toEqual({ verdict: 'ok' });
  // Asked three times before the history was read.
  expect(described.filter((id) => id === orderWorkflowId(ref))).toHaveLength(3);
});

test('a later order run, or an older copy, does not hide the cancellation an earlier order run made: every run is read', async () => {
  const ref = 'ref-cancelled-then-checked';
  // The newest run as described did not cancel (a caller's quote refused during recovery, say)...
  const { t } = countingTemporal({
    [bookingWorkflowId(ref)]: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, stage: 'confirmed' },
    [orderWorkflowId(ref)]: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, stage: 'order-not-cancellable' },
  });
  const run = (runId: string, stage: string, startedAt: number) => ({
    execution: { workflowId: orderWorkflowId(ref), runId },
    status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED,
    startTime: { seconds: startedAt },
    closeTime: { seconds: startedAt + 5 },
    searchAttributes: { indexedFields: { BookingStage: { data: Buffer.from(JSON.stringify(stage)) } } },
  });
  // ...and another run of the order id ended having cancelled it.
  Object.assign(t.services.workflowService, {
    async listWorkflowExecutions() {
      return { executions: [run('run-2', 'order-cancelled', 200), run('run-1', 'order-not-cancellable', 100)] };
    },
  });
  const { lookUpBookings } = createReconciliationActivities({
    supplier: { queryOrders: () => Promise.reject(new Error('not listed here')) },
    profile: defaultSupplierProfile,
    temporal: t,
  });
  const judged = async (status: number) => {
    const views: Record<string, BookingView> = await new MockActivityEnvironment().run(lookUpBookings, {
      references: [ref],
      listed: { status: { [ref]: status }, codes },
    });
    return classifyOrder(status, views[ref]!, codes);
  };
  expect(await judged(codes.cancelled)).toEqual({ verdict: 'ok' });
  // No run failed a cancellation: CancelFailed stays a mismatch for a person.
  expect(await judged(codes.cancelFailed)).toMatchObject({ verdict: 'mismatch' });
});
