/**
 * The conformance kit's proposed profile, given to a worker, books correctly against the supplier it was proposed
 * for: a supplier written from the spec's text with its own numbers (test/fixtures/conformance-supplier.ts), on the
 * time-skipping server. With the documented defaults the same worker cannot book there (its CheckAvail "available",
 * 0, reads as not available, so Book is never sent); with the profile the kit proposed from one run (which also
 * reads its pending 3 as Confirming, not Cancelled, and its 6 as Confirmed), the booking is confirmed with one Book.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadConfig } from '../../src/runtime/config/index';
import { runConformance } from '../../src/operators/conformance/run';
import { bookingWorkflowId, type BookingOutcome, type BookingRequest } from '../../src/api/contract/index';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { createDriftReporter } from '../../src/runtime/supplier/drift';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { staticToken } from '../../src/runtime/supplier/token';
import { createBookingWorker } from '../../src/worker';
import type { bookingWorkflow } from '../../src/workflows';
import { kitOptions, startConformanceSupplier } from '../fixtures/conformance-supplier';
import type { SpecSupplier } from '../fixtures/spec-supplier';
import { bookingRequest } from '../harness/booking';
import { connectTimeSkipping, workflowBundle } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let supplier: SpecSupplier;

beforeAll(async () => {
  env = await connectTimeSkipping();
  supplier = await startConformanceSupplier();
});

afterAll(async () => {
  await supplier?.close();
  await env?.teardown();
});

/** Short client timeouts, as every workflow test's profile has, over the profile under test. */
const withTestTimeouts = (profile: object) =>
  SupplierProfile.parse({ ...profile, timeoutsMs: { book: 1_500, checkAvail: 1_500, queryOrders: 1_500 } });

/** One booking through a worker of its own that reads the supplier with `profile`; the worker stops after it. */
async function bookWith(profile: SupplierProfile, request: BookingRequest): Promise<BookingOutcome> {
  const taskQueue = `conformance-profile-${randomUUID().slice(0, 8)}`;
  const client = createHttpSupplierClient({
    baseUrl: supplier.url,
    profile,
    tokens: staticToken('conformance-token'),
    drift: createDriftReporter(() => undefined),
  });
  const orders = createQueryOrdersCoalescer({ supplier: client, profile });
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    supplier: client,
    profile,
    orders,
    workflowBundle: workflowBundle(),
  });
  const running = worker.run();
  try {
    const handle = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
      taskQueue,
      workflowId: bookingWorkflowId(request.customerReferenceNo),
      args: [request],
    });
    return await handle.result();
  } finally {
    worker.shutdown();
    await running;
    await orders.close();
    await client.close();
  }
}

const booksOf = (ref: string) => supplier.callsOf('book').filter((c) => c.body.customerReferenceNo === ref);

test('the profile the kit proposes makes a worker book there; the defaults do not', async () => {
  const report = await runConformance(kitOptions(supplier.url));
  expect(report.summary.blocker).toBe(0);
  // As a worker reads SUPPLIER_PROFILE: accepted by its configuration.
  const proposed = loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(report.proposedProfile) })
    .supplier.profile;

  const before = bookingRequest({ ratePkgId: 'pkg-standard-double' });
  const withDefaults = await bookWith(withTestTimeouts({}), before);
  expect(withDefaults.kind).toBe('unavailable');
  expect(booksOf(before.customerReferenceNo)).toHaveLength(0);

  const after = bookingRequest({ ratePkgId: 'pkg-standard-double' });
  const withProposed = await bookWith(withTestTimeouts(proposed), after);
  expect(withProposed.kind).toBe('confirmed');
  expect(booksOf(after.customerReferenceNo)).toHaveLength(1);
});
