/**
 * `npm start`: the whole stack on one machine, for demos and local work.
 *
 * Starts the Temporal dev server (SQLite under .data/, so bookings survive a restart; Web UI
 * embedded), the sandbox supplier, and a booking worker, prints every URL, and on Ctrl-C stops the
 * worker first (in-flight tasks finish), then the sandbox, then the server: no orphan process.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { loadConfig } from '../../src/runtime/config/index';
import { createEncryptionCodec, newEncryptionKey } from '../../src/api/codec/encryption';
import { startCodecServer } from '../../src/servers/codec/server';
import { SANDBOX_PROFILE, startSandbox } from '../sandbox/server';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { dataConverterFor } from '../../src/api/codec/config';
import { CALLBACK_PATH, startCallbackReceiver } from '../../src/servers/callbacks/server';
import { temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import { startConsole } from '../../src/operators/console/server';
import { resolveServerExecutable } from '../temporal/binaries';
import { startDevServer } from '../temporal/dev-server';
import { createWorkerFromConfig } from '../../src/worker';
import { setUpObservability } from '../../src/runtime/observability/index';

const StackEnv = z.object({
  /** gRPC port of the dev server. */
  STACK_TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
  /** Web UI port of the dev server. */
  STACK_UI_PORT: z.coerce.number().int().positive().default(8233),
  /** Port of the sandbox supplier. */
  STACK_SANDBOX_PORT: z.coerce.number().int().nonnegative().default(8787),
  /** Port of the second sandbox supplier (account `sandbox-b`: its own status numbers and page size). */
  STACK_SANDBOX_B_PORT: z.coerce.number().int().nonnegative().default(8788),
  /** Where the dev server keeps its SQLite database (and the stack's own encryption key). */
  STACK_DATA_DIR: z.string().default(path.resolve(__dirname, '../../.data')),
  /** Port of the codec server the Web UI calls to show decrypted payloads. */
  STACK_CODEC_PORT: z.coerce.number().int().nonnegative().default(8235),
  /** Port of the operator console (what needs a person). */
  CONSOLE_PORT: z.coerce.number().int().nonnegative().default(8238),
});

/**
 * The demo stack always encrypts payloads. Without PAYLOAD_ENCRYPTION_KEYS it makes a key once and keeps
 * it beside the database (which it must outlive: the stored bookings are encrypted with it); `npm run book`
 * reads the same file. A real deployment sets the variables instead.
 */
export function stackEncryptionEnv(dataDir: string, env: NodeJS.ProcessEnv): Record<string, string> {
  if (env.PAYLOAD_ENCRYPTION_KEYS) return {};
  const file = path.join(dataDir, 'payload-encryption-keys');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `stack-${new Date().toISOString().slice(0, 10)}:${newEncryptionKey()}\n`, { mode: 0o600 });
  }
  return { PAYLOAD_ENCRYPTION_KEYS: readFileSync(file, 'utf8').trim() };
}

/**
 * The second sandbox's profile: a supplier that numbers its statuses its own way and pages QueryOrders at 200, as
 * a second platform would. Its account's profile says so; nothing else in the product knows it.
 */
export const SANDBOX_B_PROFILE = {
  ...SANDBOX_PROFILE,
  orderStatus: { unknown: 10, confirming: 11, confirmed: 12, cancelled: 13, failed: 14, cancelFailed: 15 },
  checkAvailStatus: { available: 0, unavailable: 9 },
  queryOrders: { pageSize: 200 },
} as const;

/**
 * The stack's two supplier accounts (SUPPLIER_ACCOUNTS_FILE), written beside the database with their credential
 * files: `sandbox` (every partner's default) and `sandbox-b`. `npm run book -- --supplier sandbox-b` books on the second.
 */
function writeStackAccounts(dataDir: string, urls: { sandbox: string; sandboxB: string }): string {
  const dir = path.join(dataDir, 'accounts');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'app-key'), 'sandbox-app\n', { mode: 0o600 });
  writeFileSync(path.join(dir, 'app-secret'), 'sandbox-secret\n', { mode: 0o600 });
  const credentials = { appKeyFile: 'app-key', appSecretFile: 'app-secret' };
  const file = path.join(dir, 'accounts.json');
  const accounts = [
    { id: 'sandbox', baseUrl: urls.sandbox, credentials, profile: SANDBOX_PROFILE, partners: ['*'] },
    { id: 'sandbox-b', baseUrl: urls.sandboxB, credentials, profile: SANDBOX_B_PROFILE, partners: ['*'] },
  ];
  writeFileSync(file, `${JSON.stringify({ accounts }, null, 2)}\n`);
  return file;
}

async function main(): Promise<void> {
  const env = StackEnv.parse(process.env);
  const exe = resolveServerExecutable('cli', { ...process.env, TEMPORAL_ALLOW_SDK_DOWNLOAD: '0' });
  if (exe.type !== 'existing-path') throw new Error('No Temporal CLI executable');

  const encryptionEnv = stackEncryptionEnv(env.STACK_DATA_DIR, process.env);
  const codecUrl = `http://127.0.0.1:${env.STACK_CODEC_PORT}`;
  const server = await startDevServer({
    cliPath: exe.path,
    port: env.STACK_TEMPORAL_PORT,
    uiPort: env.STACK_UI_PORT,
    dbFile: path.join(env.STACK_DATA_DIR, 'temporal.db'),
    codecEndpoint: codecUrl,
  });
  const stops: Array<() => Promise<void>> = [() => server.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
  };

  try {
    // Callbacks from the sandbox to the receiver, signed with a secret made for this run.
    const callbackSecret = process.env.SUPPLIER_CALLBACK_SECRET ?? randomBytes(24).toString('hex');
    const sandbox = await startSandbox({ port: env.STACK_SANDBOX_PORT, callbackSecret });
    stops.push(() => sandbox.close());
    const sandboxB = await startSandbox({
      port: env.STACK_SANDBOX_B_PORT,
      callbackSecret,
      profile: SupplierProfile.parse(SANDBOX_B_PROFILE),
    });
    stops.push(() => sandboxB.close());
    // Two accounts, unless the environment names its own supplier: then that one alone, as before.
    const ownSupplier = ['SUPPLIER_ACCOUNTS_FILE', 'SUPPLIER_TOKEN', 'SUPPLIER_APP_KEY'].some((k) => process.env[k]);
    const accounts = ownSupplier
      ? {
          SUPPLIER_APP_KEY: 'sandbox-app',
          SUPPLIER_APP_SECRET: 'sandbox-secret',
          SUPPLIER_PROFILE: JSON.stringify(SANDBOX_PROFILE),
        }
      : {
          SUPPLIER_ACCOUNTS_FILE: writeStackAccounts(env.STACK_DATA_DIR, {
            sandbox: sandbox.url,
            sandboxB: sandboxB.url,
          }),
        };
    const callbacksPort = process.env.CALLBACKS_PORT ?? '8236';

    const config = loadConfig({
      ...accounts,
      // Metrics on by default here, on this machine only: the numbers of the bookings you make move at once.
      WORKER_METRICS_PORT: '9464',
      WORKER_METRICS_HOST: '127.0.0.1',
      // A dev stack against the sandbox: bookings may scale the recovery schedule down (`recovery.testing`)
      // to watch a re-send in minutes. RECOVERY_TESTING=off in the environment turns it off.
      RECOVERY_TESTING: 'on',
      ...process.env,
      ...encryptionEnv,
      TEMPORAL_ADDRESS: server.address,
      SUPPLIER_BASE_URL: sandbox.url,
      SUPPLIER_CALLBACK_URL: `http://127.0.0.1:${callbacksPort}${CALLBACK_PATH}`,
      SUPPLIER_CALLBACK_SECRET: callbackSecret,
      CALLBACKS_PORT: callbacksPort,
    });
    const codec = await startCodecServer({
      codec: createEncryptionCodec(config.encryption!),
      port: env.STACK_CODEC_PORT,
      allowedOrigin: server.uiUrl,
      token: process.env.CODEC_SERVER_TOKEN || undefined,
    });
    stops.push(() => codec.close());

    const observability = setUpObservability(config.logLevel, config.observability);
    stops.push(() => observability.shutdown());
    const connection = await NativeConnection.connect(config.temporal.connection);
    stops.push(() => connection.close());
    // The same wiring as `npm run worker`: WORKER_* tuning, WORKER_WORKFLOW_BUNDLE and the namespace check apply.
    const plugins = observability.tracing ? [observability.tracing.plugin] : undefined;
    const { worker, closeSupplier } = await createWorkerFromConfig(connection, config, plugins ? { plugins } : {});
    stops.push(closeSupplier);
    const callbacks = await startCallbackReceiver({
      host: config.callbacks!.host,
      port: config.callbacks!.port,
      profile: config.supplier.profile,
      secret: config.callbacks!.secret,
      admin: config.callbacks!.admin,
      ...(config.callbacks!.maxConnections ? { maxConnections: config.callbacks!.maxConnections } : {}),
      target: temporalCallbackTarget(
        new Client({
          connection,
          namespace: config.temporal.namespace,
          dataConverter: dataConverterFor(config.encryption),
        }),
        { taskQueue: config.taskQueue },
      ),
    });
    stops.push(() => callbacks.close());
    // On loopback; a token when CONSOLE_TOKEN is set (the same rule as the codec server).
    const operatorConsole = await startConsole({
      client: new Client({
        connection,
        namespace: config.temporal.namespace,
        dataConverter: dataConverterFor(config.encryption),
      }),
      port: env.CONSOLE_PORT,
      token: process.env.CONSOLE_TOKEN || undefined,
      taskQueue: config.taskQueue,
      webUiUrl: server.uiUrl,
    });
    stops.push(() => operatorConsole.close());

    console.log(
      [
        '',
        'Hotel booking orchestrator is running:',
        `  Temporal gRPC     ${server.address}`,
        `  Temporal Web UI   ${server.uiUrl}`,
        `  Sandbox supplier  ${sandbox.url}  (inspect: ${sandbox.url}/_sandbox/orders)`,
        ...(ownSupplier
          ? []
          : [
              `  Second supplier   ${sandboxB.url}  (account sandbox-b, its own status numbers: npm run book -- --supplier sandbox-b)`,
            ]),
        `  Codec server      ${codec.url}  (payloads encrypted with key "${config.encryption!.activeKeyId}"; the Web UI decodes through it)`,
        ...(process.env.CODEC_SERVER_TOKEN
          ? [
              `                    with CODEC_SERVER_TOKEN the Web UI decodes once you log in at ${codec.url}/login and, in`,
              `                    the UI's Codec Server settings, use a browser setting: ${codec.url}, "Include cross-origin credentials"`,
            ]
          : []),
        `  Worker            task queue "${config.taskQueue}", namespace "${config.temporal.namespace}"`,
        `  Callbacks         ${callbacks.url}${CALLBACK_PATH}  (the sandbox's order-status callbacks, signed; stats on loopback: ${callbacks.adminUrl}/callbacks/stats)`,
        `  Worker metrics    ${observability.metricsUrl ?? 'off (WORKER_METRICS_PORT)'}  (Prometheus: the SDK's and the booking's)`,
        `  Operator console  ${operatorConsole.url}  (what needs a person: unresolved bookings, orders, sweep findings)`,
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

if (require.main === module)
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
