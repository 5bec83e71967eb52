/**
 * Builds a benchmark worker the way `npm run worker` does (src/worker.ts main): the supplier stack
 * of the configuration (rate-limited client and QueryOrders coalescer), createBookingWorker, and a
 * prebuilt workflow bundle. Or the reference ("floor") worker of bench/floor-workflow.ts on the same
 * supplier stack and tuning. Used in process and by bench/worker-process.ts, so both placements run
 * the same thing.
 */
import { Client } from '@temporalio/client';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { dataConverterFor } from '../src/api/codec/config';
import type { RateLimits } from '../dev/sandbox/rate-limit';
import { createSupplierStack } from '../src/runtime/supplier/stack';
import { createWorkerFromConfig } from '../src/worker';
import { benchConfig, type WorkerTuning } from './config';
import { createFloorActivities } from './floor';

export type WorkerKind = 'booking' | 'floor';

export interface BookingWorkerSpec {
  kind: WorkerKind;
  namespace: string;
  taskQueue: string;
  sandboxUrl: string;
  /** What the sandbox allows; the worker's profile says the same (see benchConfig). */
  rateLimits: RateLimits;
  /** The bundle of src/workflows (booking) or bench/floor-workflow.ts (floor). */
  bundlePath: string;
  tuning: WorkerTuning;
  /** PAYLOAD_ENCRYPTION_KEYS for this run, when payloads are encrypted. */
  encryptionKeys?: string;
  /** Overrides SUPPLIER_MAX_CONNECTIONS. */
  maxConnections?: number;
}

/** What the benchmarks need of a worker: the booking worker pair or the floor's single worker. */
export type RunnableWorker = Pick<Worker, 'run' | 'shutdown' | 'getState' | 'getStatus'>;

export async function buildBookingWorker(
  connection: NativeConnection,
  spec: BookingWorkerSpec,
): Promise<{ worker: RunnableWorker; close(): Promise<void> }> {
  const config = benchConfig(spec.sandboxUrl, {
    encryptionKeys: spec.encryptionKeys,
    rateLimits: spec.rateLimits,
    maxConnections: spec.maxConnections,
  });
  if (spec.kind === 'booking') {
    // The wiring `npm run worker` and `npm start` use, with the benchmark's queue, bundle and tuning.
    const { worker, closeSupplier } = await createWorkerFromConfig(connection, config, {
      namespace: spec.namespace,
      taskQueue: spec.taskQueue,
      workflowBundle: { codePath: spec.bundlePath },
      tuning: spec.tuning,
    });
    return { worker, close: closeSupplier };
  }
  const { supplier, close } = createSupplierStack(config.supplier);
  const dataConverter = dataConverterFor(config.encryption);
  try {
    const worker = await Worker.create({
      connection,
      namespace: spec.namespace,
      taskQueue: spec.taskQueue,
      workflowBundle: { codePath: spec.bundlePath },
      activities: createFloorActivities(supplier, new Client({ connection, namespace: spec.namespace })),
      ...spec.tuning,
      ...(dataConverter ? { dataConverter } : {}),
    });
    return { worker, close };
  } catch (err) {
    await close();
    throw err;
  }
}
