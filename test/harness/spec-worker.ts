/**
 * A booking worker whose supplier is the one written from the spec's text (test/fixtures/spec-supplier.ts), on the
 * shared time-skipping server: what the spec-supplier workflow tests run against.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bookingWorkflowId, type BookingOutcome, type BookingRequest } from '../../src/api/contract/index';
import type { bookingWorkflow } from '../../src/workflows';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import type { DriftReporter } from '../../src/runtime/supplier/drift';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import type { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { staticToken } from '../../src/runtime/supplier/token';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { startSpecSupplier, type SpecSupplier } from '../fixtures/spec-supplier';
import { testProfile } from './booking';
import { workflowBundle } from './temporal';

export interface SpecWorker {
  spec: SpecSupplier;
  worker: BookingWorker;
  taskQueue: string;
  /** Starts a booking on this worker's queue, as any caller would (no search attributes), and waits for its outcome. */
  book(request: BookingRequest): Promise<BookingOutcome>;
  /** Stops the worker (after `beforeStop`, while it still runs) and closes the supplier's clients and server. */
  close(beforeStop?: () => Promise<unknown>): Promise<void>;
}

export async function startSpecWorker(
  env: TestWorkflowEnvironment,
  name: string,
  {
    drift,
    recoveryTesting,
    profile: overrides,
  }: { drift?: DriftReporter; recoveryTesting?: boolean; profile?: Partial<SupplierProfile> } = {},
): Promise<SpecWorker> {
  const profile: SupplierProfile = { ...testProfile, ...overrides };
  const taskQueue = `${name}-${randomUUID().slice(0, 8)}`;
  const spec = await startSpecSupplier();
  const supplier = createHttpSupplierClient({
    baseUrl: spec.url,
    profile,
    tokens: staticToken('spec-token'),
    ...(drift ? { drift } : {}),
  });
  const orders = createQueryOrdersCoalescer({ supplier, profile });
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    supplier,
    profile,
    orders,
    workflowBundle: workflowBundle(),
    ...(recoveryTesting ? { recoveryTesting: true } : {}),
  });
  const running = worker.run();
  return {
    spec,
    worker,
    taskQueue,
    async book(request) {
      const handle = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
        taskQueue,
        workflowId: bookingWorkflowId(request.customerReferenceNo),
        args: [request],
      });
      return handle.result();
    },
    async close(beforeStop) {
      await beforeStop?.();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await orders.close();
      await supplier.close();
      await spec.close();
    },
  };
}
