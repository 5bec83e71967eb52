/**
 * The booking worker: polls the task queue, runs bookingWorkflow and the supplier activities.
 *
 * `npm run worker` runs it against an existing Temporal service, configured by environment
 * (src/config). `createBookingWorker` is what tests, the stack launcher and benchmarks use.
 */
import { NativeConnection, Runtime, DefaultLogger, Worker, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createActivities } from './activities/booking';
import { dataConverterFor } from './codec/config';
import { loadConfig, type AppConfig } from './config';
import type { SupplierClient } from './supplier/interface';
import { createHttpSupplierClient } from './supplier/http-client';
import { staticToken, ticketTokens } from './supplier/token';
import type { SupplierProfile } from './supplier/profile';
import type { QueryOrdersCoalescer } from './supplier/coalescer';
import { createSupplierStack } from './supplier/stack';

export interface BookingWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  supplier: SupplierClient;
  profile: SupplierProfile;
  /** A prebuilt bundle (tests, benchmarks); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  tuning?: Pick<
    WorkerOptions,
    'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
  >;
  /** Shares QueryOrders requests between concurrent lookups; without it each lookup is its own request. */
  orders?: QueryOrdersCoalescer;
  /** Payload encryption (src/codec); clients of these workflows must use the same keys. */
  dataConverter?: DataConverter;
}

export async function createBookingWorker(deps: BookingWorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    activities: createActivities({ supplier: deps.supplier, profile: deps.profile, orders: deps.orders }),
    ...(deps.workflowBundle
      ? { workflowBundle: deps.workflowBundle }
      : { workflowsPath: require.resolve('./workflows') }),
    ...deps.tuning,
    ...(deps.dataConverter ? { dataConverter: deps.dataConverter } : {}),
  });
}

/** The supplier client the configuration describes. */
export function createSupplierFromConfig(config: AppConfig['supplier']): SupplierClient {
  const { baseUrl, profile, credentials, maxConnections } = config;
  const tokens =
    credentials.kind === 'token'
      ? staticToken(credentials.token)
      : ticketTokens({ baseUrl, profile, appKey: credentials.appKey, appSecret: credentials.appSecret });
  return createHttpSupplierClient({ baseUrl, profile, tokens, maxConnections });
}

async function main(): Promise<void> {
  const config = loadConfig();
  Runtime.install({ logger: new DefaultLogger(config.logLevel) });
  const connection = await NativeConnection.connect(config.temporal.connection);
  // Rate-limited client and QueryOrders coalescer, so a recovery storm stays under the supplier's limits.
  const { supplier, orders, close: closeSupplier } = createSupplierStack(config.supplier);
  try {
    const worker = await createBookingWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      supplier,
      orders,
      profile: config.supplier.profile,
      dataConverter: dataConverterFor(config.encryption),
      ...(config.workflowBundlePath ? { workflowBundle: { codePath: config.workflowBundlePath } } : {}),
      tuning: {
        maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
        maxConcurrentWorkflowTaskExecutions: config.worker.maxConcurrentWorkflowTasks,
        maxCachedWorkflows: config.worker.maxCachedWorkflows,
      },
    });
    console.log(
      `Worker polling task queue "${config.taskQueue}" on ${config.temporal.connection.address} ` +
        `(namespace ${config.temporal.namespace}); supplier ${config.supplier.baseUrl}; ` +
        `payload encryption ${config.encryption ? `on (key ${config.encryption.activeKeyId})` : 'OFF: personal data is stored in clear'}`,
    );
    // Worker.run() returns after SIGINT/SIGTERM once in-flight tasks are done (the SDK's shutdown handling).
    await worker.run();
  } finally {
    await closeSupplier();
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
