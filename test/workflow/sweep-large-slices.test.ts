/**
 * The sweep at scale, on the time-skipping server: a slice listing more orders than the ceiling is listed again in
 * halves until each half fits, and every order is still judged; a slice still too large at the minimal length is a
 * failed-slice finding, the rest of the window judged as usual. The real workflow and activities, with the ceiling
 * lowered to 10 and a supplier answering from memory (thousands of sandbox orders would say the same, slower);
 * no booking workflow stands for any order, so each one judged is an orphan. Each sweep's history is replayed
 * (the committed ones, test/replay/histories/sweep, have no slice large enough to split).
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { connectTimeSkipping, workflowBundle } from '../harness/temporal';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { createReconciliationActivities } from '../../src/activities/sweep';
import { queryOrdersTaskQueue, type SweepResult } from '../../src/api/contract/index';
import { SWEEP_SLICE_TOO_LARGE } from '../../src/runtime/rules/sweep-listing';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import type { HotelOrder, QueryOrdersRequest } from '../../src/runtime/supplier/schemas';
import type { SweepWorkflowInput } from '../../src/workflows/sweep';

const CEILING = 10;
const MINUTE = 60_000;

let env: TestWorkflowEnvironment;
let client: Client;

beforeAll(async () => {
  env = await connectTimeSkipping();
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
});
afterAll(async () => {
  await env?.teardown();
});

/**
 * A supplier whose orders were booked at the given offsets (ms) before the end of the sweep's first booking-time
 * listing: the workflow's clock is the server's, so the orders are placed by the window it asks for.
 */
function supplierWith(offsetsMs: number[]) {
  const refs = offsetsMs.map(() => randomUUID());
  let endMs: number | undefined;
  const answered: number[] = [];
  const supplier: Pick<SupplierClient, 'queryOrders'> = {
    async queryOrders(request: QueryOrdersRequest) {
      const window = request.bookingTimeWindow;
      if (!window) return { orders: [], unreadable: [] };
      endMs ??= Date.parse(window.end);
      const [from, to] = [Date.parse(window.start), Date.parse(window.end)];
      const orders: HotelOrder[] = offsetsMs.flatMap((offset, i) => {
        const at = endMs! - offset;
        if (at < from || at > to) return [];
        const ref = refs[i]!;
        const status = defaultSupplierProfile.orderStatus.confirmed;
        return [{ customerReferenceNo: ref, status, bookingTime: new Date(at).toISOString() }];
      });
      answered.push(orders.length);
      return { orders, unreadable: [] };
    },
  };
  return { refs, supplier, answered };
}

/** No workflow stands for any reference. */
const temporalWithoutWorkflows = {
  services: {
    workflowService: {
      describeWorkflowExecution: () => Promise.reject(Object.assign(new Error('workflow not found'), { code: 5 })),
    },
  },
  namespace: 'default',
} as unknown as Parameters<typeof createReconciliationActivities>[0]['temporal'];

/** Runs a sweep with the ceiling at 10; its result, and its history replayed against the same code. */
async function sweepWith(
  supplier: Pick<SupplierClient, 'queryOrders'>,
  overrides: Partial<SweepWorkflowInput> = {},
): Promise<{ result: SweepResult }> {
  const taskQueue = `sweep-large-${randomUUID().slice(0, 8)}`;
  const activities = createReconciliationActivities({
    supplier,
    profile: defaultSupplierProfile,
    temporal: temporalWithoutWorkflows,
    sliceCeiling: CEILING,
  });
  const connection = env.nativeConnection;
  const main = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: workflowBundle(),
    activities: { lookUpBookings: activities.lookUpBookings },
  });
  const queryOrders = await Worker.create({
    connection,
    taskQueue: queryOrdersTaskQueue(taskQueue),
    activities: { listOrdersBooked: activities.listOrdersBooked },
  });
  const input: SweepWorkflowInput = {
    lookbackMinutes: 60,
    settleMinutes: 0,
    sliceMinutes: 60,
    cancelOrphans: false,
    checkInHours: 6,
    statuses: defaultSupplierProfile.orderStatus,
    ...overrides,
  };
  const workflowId = `sweep-large-${randomUUID()}`;
  const sweep = () =>
    client.workflow.execute<(i: SweepWorkflowInput) => Promise<SweepResult>>('reconciliationSweepWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
    });
  const result = await main.runUntil(queryOrders.runUntil(sweep));
  // The path is deterministic: its history replays.
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, workflowId);
  return { result };
}

beforeEach(() => {
  expectWorkerWarnings(/^ERROR Reconciliation orphan: /, /^WARN Activity failed .*SweepSliceTooLarge/s);
});

test('a slice over the ceiling is listed again in halves, and every order in it is judged', async () => {
  // 50 orders, one every 40 s over the last 34 minutes: the hour's slice holds five times the ceiling.
  const { refs, supplier, answered } = supplierWith(Array.from({ length: 50 }, (_, i) => MINUTE + i * 40_000));
  const { result } = await sweepWith(supplier);

  expect(result.failedSlices).toEqual([]);
  expect(result.ordersSeen).toBe(50);
  expect(result.orphans.map((o) => o.customerReferenceNo).sort()).toEqual([...refs].sort());
  // The first answer was over the ceiling, and so was every answer split again; the halves that were kept fit.
  expect(answered[0]).toBe(50);
  const kept = answered.filter((n) => n <= CEILING);
  expect(kept.reduce((a, b) => a + b, 0)).toBe(50);
  expect(answered.length).toBeGreaterThan(3);
  // Booking-time listings as answered, plus one of cancellation time and one of check-in time.
  expect(result.requests).toBe(answered.length + 2);
});

test('a minimal slice still over the ceiling is a failed slice; the rest of the window is judged', async () => {
  expectWorkerWarnings(/^ERROR Reconciliation: a listing failed, its window was not seen/);
  // 12 orders in the same second, 5 others spread over the hour.
  const offsets = [...Array.from({ length: 12 }, () => 20 * MINUTE), ...[2, 9, 31, 44, 58].map((m) => m * MINUTE)];
  const { refs, supplier } = supplierWith(offsets);
  const { result } = await sweepWith(supplier);

  expect(result.failedSlices).toHaveLength(1);
  const failed = result.failedSlices![0]!;
  expect(failed).toMatchObject({ filter: 'booking', error: SWEEP_SLICE_TOO_LARGE });
  const length = Date.parse(failed.end) - Date.parse(failed.start);
  expect(length).toBeGreaterThanOrEqual(MINUTE);
  expect(length).toBeLessThan(2 * MINUTE);
  expect(result.orphans.map((o) => o.customerReferenceNo).sort()).toEqual(refs.slice(12).sort());
});

test('a check-in day over the ceiling is one failed listing at once: a day cannot be halved', async () => {
  expectWorkerWarnings(/^ERROR Reconciliation: a listing failed, its window was not seen/);
  // 12 orders checking in on the first day the sweep's check-in listings reach (a date: its midnight, UTC).
  const DAY = 24 * 3600_000;
  let day: number | undefined;
  const checkInListings: Array<{ start: string; end: string }> = [];
  const supplier: Pick<SupplierClient, 'queryOrders'> = {
    async queryOrders(request: QueryOrdersRequest) {
      const window = request.checkInTimeWindow;
      if (!window) return { orders: [], unreadable: [] };
      checkInListings.push(window);
      day ??= Math.ceil(Date.parse(window.start) / DAY) * DAY;
      if (day < Date.parse(window.start) || day > Date.parse(window.end)) return { orders: [], unreadable: [] };
      const checkIn = new Date(day).toISOString().slice(0, 10);
      const status = defaultSupplierProfile.orderStatus.confirmed;
      const orders: HotelOrder[] = Array.from({ length: 12 }, () => ({
        customerReferenceNo: randomUUID(),
        status,
        checkIn,
      }));
      return { orders, unreadable: [] };
    },
  };
  const { result } = await sweepWith(supplier, { checkInHours: 48 });

  expect(result.failedSlices).toHaveLength(1);
  const failed = result.failedSlices![0]!;
  expect(failed).toMatchObject({ filter: 'checkIn', error: SWEEP_SLICE_TOO_LARGE });
  expect(Date.parse(failed.start)).toBeLessThanOrEqual(day!);
  expect(Date.parse(failed.end)).toBeGreaterThanOrEqual(day!);
  // 48 hours in 6-hour listings, none listed again: halving around one midnight would have listed that day ~9 times.
  expect(checkInListings).toHaveLength(8);
});
