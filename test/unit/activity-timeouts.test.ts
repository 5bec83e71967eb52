/**
 * The config's timeout rule knows every activity that sends a supplier request, with the timeout the workflows
 * really give it: the workflows' activity proxies are run here with a recording stand-in for the SDK, so a
 * workflow that changes a timeout (or adds a supplier activity) fails this test instead of the rule going stale.
 */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import { loadConfig, SUPPLIER_CALL_ACTIVITIES, supplierTimeoutBoundMs } from '../../src/runtime/config/index';
import { createActivities } from '../../src/activities/booking';
import { createOrderActivities } from '../../src/activities/order';
import { createReconciliationActivities } from '../../src/activities/sweep';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';

/** Every activity a workflow proxied, with the options it was given (names read off the proxy). */
const mockProxied: Array<{ name: string; options: ActivityOptions | LocalActivityOptions }> = [];

jest.mock('@temporalio/workflow', () => {
  const record = (options: ActivityOptions | LocalActivityOptions) =>
    new Proxy(
      {},
      {
        get: (_target, name) => {
          mockProxied.push({ name: String(name), options });
          // The sweep's listing is the one activity awaited here: an empty window ends the sweep at once.
          return async () => ({ orders: [], unreadable: 0 });
        },
      },
    );
  return {
    ...jest.requireActual('@temporalio/workflow'),
    proxyActivities: record,
    proxyLocalActivities: record,
    patched: () => true,
    workflowInfo: () => ({ taskQueue: 'hotel-booking', workflowId: 'sweep' }),
    upsertSearchAttributes: () => undefined,
    setCurrentDetails: () => undefined,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    metricMeter: { createCounter: () => ({ add: () => undefined }) },
  };
});

/** Activities built over the supplier client that never send a request to it. */
const NO_SUPPLIER_REQUEST: Record<string, string> = {
  validateBookingRequest: 'checks the input against the contract schemas, no I/O',
  lookUpBookings: 'reads Temporal only',
  judgeOrder: 'reads Temporal only (the order status comes in its input)',
  startOrderWorkflow: 'starts a workflow in Temporal only',
  bookingInProgress: 'reads Temporal only',
  checkOrderStart: 'checks the input and reads Temporal only',
  earlierCancelSends: 'reads Temporal only',
  clockForFees: "reads the worker's clock only",
};

async function proxiedByTheWorkflows(): Promise<Map<string, number[]>> {
  const booking = await import('../../src/workflows/booking/proxies');
  booking.queryOrderActivity(undefined);
  const order = await import('../../src/workflows/order/proxies');
  order.orderQueryActivity(undefined);
  const { reconciliationSweepWorkflow } = await import('../../src/workflows/sweep');
  await reconciliationSweepWorkflow({
    lookbackMinutes: 60,
    settleMinutes: 10,
    sliceMinutes: 60,
    cancelOrphans: false,
    statuses: defaultSupplierProfile.orderStatus,
  });
  const seconds = new Map<string, number[]>();
  for (const { name, options } of mockProxied) {
    const ms = msToNumber(options.startToCloseTimeout!);
    seconds.set(name, [...(seconds.get(name) ?? []), ms / 1000]);
  }
  return seconds;
}

test('every supplier activity the workflows call is in the rule, with the timeout the workflows give it', async () => {
  const proxied = await proxiedByTheWorkflows();
  for (const { activity, activitySeconds } of SUPPLIER_CALL_ACTIVITIES) {
    expect({ activity, seconds: [...new Set(proxied.get(activity))] }).toEqual({
      activity,
      seconds: [activitySeconds],
    });
  }
});

test('every activity the worker registers is either in the rule or sends no supplier request', () => {
  const unused = undefined as never;
  const names = [
    ...Object.keys(createActivities({ supplier: unused, profile: defaultSupplierProfile })),
    ...Object.keys(createOrderActivities({ supplier: unused, profile: defaultSupplierProfile, client: unused })),
    ...Object.keys(
      createReconciliationActivities({ supplier: unused, profile: defaultSupplierProfile, temporal: unused }),
    ),
  ];
  const inRule = new Set(SUPPLIER_CALL_ACTIVITIES.map((a) => a.activity));
  expect(names.filter((n) => !inRule.has(n) && !(n in NO_SUPPLIER_REQUEST))).toEqual([]);
});

test('Cancel is bound by its activities: a client timeout within 10 s of them is refused, naming both', () => {
  const base = { SUPPLIER_TOKEN: 't' };
  expect(supplierTimeoutBoundMs('cancel')).toBe(20_000);
  expect(() => loadConfig({ ...base, SUPPLIER_PROFILE: '{"timeoutsMs":{"cancel":25000}}' })).toThrow(
    /SUPPLIER_PROFILE\.timeoutsMs\.cancel: must be at most 20000 ms, 10 s below the sendCancel activity's own 30 s timeout/,
  );
  expect(
    loadConfig({ ...base, SUPPLIER_PROFILE: '{"timeoutsMs":{"cancel":20000}}' }).supplier.profile.timeoutsMs.cancel,
  ).toBe(20_000);
});

test("QueryOrders is bound by both activities that send it (a booking's poll and the sweep's listing)", () => {
  expect(
    SUPPLIER_CALL_ACTIVITIES.filter((a) => a.call === 'queryOrders')
      .map((a) => a.activity)
      .sort(),
  ).toEqual(['listOrdersBooked', 'queryOrder']);
  expect(() => loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: '{"timeoutsMs":{"queryOrders":20001}}' })).toThrow(
    /timeoutsMs\.queryOrders: must be at most 20000 ms, 10 s below the queryOrder and listOrdersBooked activities' own 30 s timeout/,
  );
});
