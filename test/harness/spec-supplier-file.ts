/**
 * What every spec-supplier workflow test file shares: the order statuses the spec's fixture does not name, and the
 * file's setup, the shared time-skipping server with a booking worker on the supplier written from the spec's text.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SpecSupplier } from '../fixtures/spec-supplier';
import { startSpecWorker, type SpecWorker } from './spec-worker';
import { connectTimeSkipping } from './temporal';

/** supplier-facts.md: order status 3 is Cancelled. */
export const ORDER_CANCELLED = 3;
/** supplier-facts.md: order status 5 is CancelFailed. */
export const ORDER_CANCEL_FAILED = 5;

/** One file's server and worker: `spec` and `taskQueue` are the worker's own. */
export interface SpecFile {
  env: TestWorkflowEnvironment;
  spec: SpecSupplier;
  rig: SpecWorker;
  taskQueue: string;
}

/**
 * Starts the server connection and the worker (`name` prefixes its task queue) before the file's tests and hands
 * them to `use`; closes the worker, then the connection, after them.
 */
export function specSupplierFile(
  name: string,
  use: (file: SpecFile) => void,
  options?: Parameters<typeof startSpecWorker>[2],
): void {
  let env: TestWorkflowEnvironment | undefined;
  let rig: SpecWorker | undefined;
  beforeAll(async () => {
    env = await connectTimeSkipping();
    rig = await startSpecWorker(env, name, options);
    use({ env, spec: rig.spec, rig, taskQueue: rig.taskQueue });
  });
  afterAll(async () => {
    await rig?.close();
    await env?.teardown();
  });
}
