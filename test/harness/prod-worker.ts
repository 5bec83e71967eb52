/**
 * A worker on the production topology as `npm run worker` builds it: configured by environment variables alone (its
 * connection from TEMPORAL_TLS_*, so with the certificate the test names), booking on the sandbox supplier.
 */
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../src/runtime/config/index';
import { createWorkerFromConfig, type ConfiguredWorker } from '../../src/worker';

/** The sandbox's address and Ticket credential, recovery testing, no sweep Schedule, the tests' workflow bundle. */
export function sandboxWorkerEnv(sandboxUrl: string): Record<string, string | undefined> {
  return {
    SUPPLIER_BASE_URL: sandboxUrl,
    SUPPLIER_APP_KEY: 'sandbox-app',
    SUPPLIER_APP_SECRET: 'sandbox-secret',
    RECOVERY_TESTING: 'on',
    RECONCILIATION_SCHEDULE: 'off',
    WORKER_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE,
  };
}

export interface RunningWorker {
  worker: ConfiguredWorker;
  /** Settles when the worker has stopped and its connection is closed. */
  running: Promise<void>;
  /** Shuts the worker down (when it still runs), waits for it, and closes its supplier. */
  stop(): Promise<void>;
}

/** Starts the worker `env` configures and runs it until stop(). */
export async function startWorkerFromEnv(env: Record<string, string | undefined>): Promise<RunningWorker> {
  const config = loadConfig(env);
  const connection = await NativeConnection.connect(config.temporal.connection);
  const worker = await createWorkerFromConfig(connection, config);
  const running = worker.worker.run().finally(() => connection.close());
  return {
    worker,
    running,
    async stop() {
      if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
      await running.catch(() => undefined);
      await worker.closeSupplier();
    },
  };
}
