/**
 * `npm start`: the whole stack on one machine, for demos and local work.
 *
 * Starts the Temporal dev server (SQLite under .data/, so bookings survive a restart; Web UI
 * embedded), the sandbox supplier, and a booking worker, prints every URL, and on Ctrl-C stops the
 * worker first (in-flight tasks finish), then the sandbox, then the server: no orphan process.
 */
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { loadConfig } from '../config';
import { startSandbox } from '../sandbox/server';
import { resolveServerExecutable } from '../temporal/binaries';
import { startDevServer } from '../temporal/dev-server';
import { createBookingWorker, createSupplierFromConfig } from '../worker';

const StackEnv = z.object({
  /** gRPC port of the dev server. */
  STACK_TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
  /** Web UI port of the dev server. */
  STACK_UI_PORT: z.coerce.number().int().positive().default(8233),
  /** Port of the sandbox supplier. */
  STACK_SANDBOX_PORT: z.coerce.number().int().nonnegative().default(8787),
  /** Where the dev server keeps its SQLite database. */
  STACK_DATA_DIR: z.string().default(path.resolve(__dirname, '../../.data')),
});

async function main(): Promise<void> {
  const env = StackEnv.parse(process.env);
  const exe = resolveServerExecutable('cli', { ...process.env, TEMPORAL_ALLOW_SDK_DOWNLOAD: '0' });
  if (exe.type !== 'existing-path') throw new Error('No Temporal CLI executable');

  const server = await startDevServer({
    cliPath: exe.path,
    port: env.STACK_TEMPORAL_PORT,
    uiPort: env.STACK_UI_PORT,
    dbFile: path.join(env.STACK_DATA_DIR, 'temporal.db'),
  });
  const stops: Array<() => Promise<void>> = [() => server.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
  };

  try {
    const sandbox = await startSandbox({ port: env.STACK_SANDBOX_PORT });
    stops.push(() => sandbox.close());

    const config = loadConfig({
      SUPPLIER_APP_KEY: 'sandbox-app',
      SUPPLIER_APP_SECRET: 'sandbox-secret',
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      SUPPLIER_BASE_URL: sandbox.url,
    });
    const connection = await NativeConnection.connect(config.temporal.connection);
    stops.push(() => connection.close());
    const supplier = createSupplierFromConfig(config.supplier);
    stops.push(() => supplier.close());
    const worker = await createBookingWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      supplier,
      profile: config.supplier.profile,
    });

    console.log(
      [
        '',
        'Hotel booking orchestrator is running:',
        `  Temporal gRPC     ${server.address}`,
        `  Temporal Web UI   ${server.uiUrl}`,
        `  Sandbox supplier  ${sandbox.url}  (inspect: ${sandbox.url}/_sandbox/orders)`,
        `  Worker            task queue "${config.taskQueue}", namespace "${config.temporal.namespace}"`,
        '',
        'Try: npm run book -- --scenario confirmAfterMs=0',
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    // Resolves after SIGINT/SIGTERM, once the worker has drained.
    await worker.run();
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
