/**
 * Step 1 of the chaos run: its private stack. A dev server (or the production engine) on a temp database, the
 * sandbox supplier in process, two worker processes with payload encryption, short supplier timeouts and a
 * prebuilt bundle, and the client helper configured as a partner's backend would be.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient } from '../src/client';
import { newEncryptionKey } from '../src/codec/encryption';
import { SANDBOX_PROFILE, type Sandbox } from '../dev/sandbox/server';
import type { ChaosOptions } from './run';
import {
  buildBundle,
  compileWorker,
  startChaosSandbox,
  startProdServer,
  startServer,
  WorkerFleet,
  type ProdServerHandle,
  type ServerHandle,
} from './stack';
import { seconds } from './timing';

export const REPO = path.resolve(__dirname, '..');
export const APP_KEY = 'sandbox-app';
export const APP_SECRET = 'sandbox-secret';
export const WORKER_SLOTS = ['A', 'B'];

/** What the run takes down at the end, last first; each step registers its own as soon as it starts it. */
export type Cleanups = Array<() => Promise<void>>;

/** The run's stack, up and polling. */
export interface Stack {
  sandbox: Sandbox;
  server: ServerHandle | ProdServerHandle;
  fleet: WorkerFleet;
  /** The client helper, with the payload codec. */
  client: Client;
  /** The same server, read without the codec: what an export or a backup holds. */
  raw: Client;
  /** The payload encryption key (base64) and its id. */
  key: string;
  keyId: string;
  /** From the run's start until the stack was up. */
  setupMs: number;
}

/** Stands the stack up, registering each part's cleanup before awaiting it, so a failure still stops the rest. */
export async function standUpStack(o: ChaosOptions, dir: string, cleanups: Cleanups, t0: number): Promise<Stack> {
  const sandboxP = startChaosSandbox();
  const serverP: Promise<ServerHandle | ProdServerHandle> =
    o.engine === 'prod' ? startProdServer(dir, o.log) : startServer(dir, o.log);
  // Registered before awaiting, so a failure of one still stops the others.
  cleanups.push(async () => (await sandboxP.catch(() => undefined))?.close());
  cleanups.push(async () => (await serverP.catch(() => undefined))?.stop());
  const [entry, bundlePath, sandbox, server] = await Promise.all([
    compileWorker(path.join(dir, 'lib')),
    o.bundlePath ?? buildBundle(dir),
    sandboxP,
    serverP,
  ]);
  const keyId = `chaos-${o.seed}`;
  const key = newEncryptionKey();
  const keys = `${keyId}:${key}`;
  writeFileSync(path.join(dir, 'payload-encryption-keys'), `${keys}\n`, { mode: 0o600 });
  const fleet = workerFleet(o, { entry, bundlePath, dir, keys, server, sandbox });
  cleanups.push(() => fleet.stop());
  await fleet.start();
  // The client helper, configured exactly like a partner's backend: same variables, same keys.
  const client = await connectClient({ TEMPORAL_ADDRESS: server.address, PAYLOAD_ENCRYPTION_KEYS: keys });
  cleanups.push(() => client.connection.close());
  const raw = new Client({ connection: client.connection, namespace: 'default' });
  const setupMs = Date.now() - t0;
  o.log(
    `stack up in ${seconds(setupMs)} s: server ${server.address}, sandbox ${sandbox.url}, workers ${WORKER_SLOTS.join(', ')}`,
  );
  return { sandbox, server, fleet, client, raw, key, keyId, setupMs };
}

/** The run's two workers, configured as production's are but for the chaos schedule and timeouts. */
function workerFleet(
  o: ChaosOptions,
  s: { entry: string; bundlePath: string; dir: string; keys: string; server: { address: string }; sandbox: Sandbox },
): WorkerFleet {
  return new WorkerFleet({
    entry: s.entry,
    slots: WORKER_SLOTS,
    logDir: s.dir,
    log: o.log,
    env: workerEnv({
      TEMPORAL_ADDRESS: s.server.address,
      SUPPLIER_BASE_URL: s.sandbox.url,
      SUPPLIER_APP_KEY: APP_KEY,
      SUPPLIER_APP_SECRET: APP_SECRET,
      SUPPLIER_PROFILE: JSON.stringify({ ...SANDBOX_PROFILE, timeoutsMs: o.supplierTimeoutsMs }),
      PAYLOAD_ENCRYPTION_KEYS: s.keys,
      WORKER_WORKFLOW_BUNDLE: s.bundlePath,
      LOG_LEVEL: 'WARN',
      // The bookings' schedule is CHAOS_RECOVERY's, below the production bounds.
      RECOVERY_TESTING: 'on',
    }),
  });
}

/** The worker's environment: ours, over the parent's minus anything that would configure a worker differently. */
function workerEnv(own: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (kv): kv is [string, string] =>
      kv[1] !== undefined && !/^(TEMPORAL_|SUPPLIER_|WORKER_|PAYLOAD_|BOOKING_|RECOVERY_|LOG_LEVEL$)/.test(kv[0]),
  );
  // The build lives in the temp dir: its `require`s find the project's dependencies through NODE_PATH.
  return { ...Object.fromEntries(inherited), NODE_PATH: path.join(REPO, 'node_modules'), ...own };
}
