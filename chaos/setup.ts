/**
 * Step 1 of the chaos run: its private stack. A dev server (or the production engine) on a temp database, the
 * sandbox supplier in process, two worker processes with payload encryption, short supplier timeouts and a
 * prebuilt bundle, and the client helper configured as a partner's backend would be.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient } from '../src/api/client/index';
import { newEncryptionKey } from '../src/api/codec/encryption';
import { SANDBOX_PROFILE, type Sandbox } from '../dev/sandbox/server';
import type { ChaosOptions } from './options';
import { createEncryptionCodec } from '../src/api/codec/encryption';
import {
  BUILD_SLOTS,
  DRILL_DEPLOYMENT,
  makeCurrent,
  operatorClient,
  type BuildLabel,
  type DeployRecord,
  type DeployStep,
  type DeployStack,
} from './deploy';
import {
  buildBundle,
  buildChangedCommandsBundle,
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
  /** `--deploy`: the drill's builds (A's workers polling and current, B's started later), its operator and record. */
  deploy?: DeployStack & { record: DeployRecord; envOf: (label: BuildLabel) => Record<string, string> };
}

/** Stands the stack up, registering each part's cleanup before awaiting it, so a failure still stops the rest. */
export async function standUpStack(o: ChaosOptions, dir: string, cleanups: Cleanups, t0: number): Promise<Stack> {
  const sandboxP = startChaosSandbox();
  const serverP: Promise<ServerHandle | ProdServerHandle> =
    o.engine === 'prod' ? startProdServer(dir, o.log) : startServer(dir, o.log);
  // Registered before awaiting, so a failure of one still stops the others.
  cleanups.push(async () => (await sandboxP.catch(() => undefined))?.close());
  cleanups.push(async () => (await serverP.catch(() => undefined))?.stop());
  const [entry, bundlePath, bundleB, sandbox, server] = await Promise.all([
    compileWorker(path.join(dir, 'lib')),
    o.bundlePath ?? buildBundle(dir),
    o.deploy ? buildChangedCommandsBundle(dir) : undefined,
    sandboxP,
    serverP,
  ]);
  const keyId = `chaos-${o.seed}`;
  const key = newEncryptionKey();
  const keys = `${keyId}:${key}`;
  writeFileSync(path.join(dir, 'payload-encryption-keys'), `${keys}\n`, { mode: 0o600 });
  const fleet = workerFleet(o, { entry, bundlePath, dir, keys, server, sandbox });
  cleanups.push(() => fleet.stop());
  const builds = { A: `a-${o.seed}`, B: `b-${o.seed}` };
  const bundles = { A: bundlePath, B: bundleB ?? bundlePath };
  // A build's workers: the fleet's environment, their deployment, build id and bundle.
  const envOf = (label: BuildLabel) => ({
    WORKER_DEPLOYMENT_NAME: DRILL_DEPLOYMENT,
    WORKER_BUILD_ID: builds[label],
    WORKER_WORKFLOW_BUNDLE: bundles[label],
  });
  if (o.deploy) await fleet.add([...BUILD_SLOTS.A], envOf('A'));
  else await fleet.start();
  // The client helper, configured exactly like a partner's backend: same variables, same keys.
  const client = await connectClient({ TEMPORAL_ADDRESS: server.address, PAYLOAD_ENCRYPTION_KEYS: keys });
  cleanups.push(() => client.connection.close());
  const raw = new Client({ connection: client.connection, namespace: 'default' });
  const deploy = o.deploy ? await firstBuildCurrent(o, { client, builds, bundles, keyId, key, envOf, t0 }) : undefined;
  const setupMs = Date.now() - t0;
  o.log(
    `stack up in ${seconds(setupMs)} s: server ${server.address}, sandbox ${sandbox.url}, workers ${fleet.liveSlots().join(', ')}`,
  );
  return { sandbox, server, fleet, client, raw, key, keyId, setupMs, ...(deploy ? { deploy } : {}) };
}

/** The drill's first step, before any booking: build A, polling, made current by the operator. */
async function firstBuildCurrent(
  o: ChaosOptions,
  s: {
    client: Client;
    builds: Record<BuildLabel, string>;
    bundles: Record<BuildLabel, string>;
    keyId: string;
    key: string;
    envOf: (label: BuildLabel) => Record<string, string>;
    t0: number;
  },
): Promise<NonNullable<Stack['deploy']>> {
  const codec = createEncryptionCodec({
    keys: new Map([[s.keyId, Buffer.from(s.key, 'base64')]]),
    activeKeyId: s.keyId,
  });
  const deploy: NonNullable<Stack['deploy']> = {
    deploymentName: DRILL_DEPLOYMENT,
    builds: {
      A: { deploymentName: DRILL_DEPLOYMENT, buildId: s.builds.A },
      B: { deploymentName: DRILL_DEPLOYMENT, buildId: s.builds.B },
    },
    bundles: s.bundles,
    operator: operatorClient(s.client.connection, 'default'),
    dataConverter: { payloadCodecs: [codec] },
    envOf: s.envOf,
    record: { deploymentName: DRILL_DEPLOYMENT, builds: s.builds, steps: [], errors: [], implicated: [] },
  };
  const step: DeployStep = { kind: 'first', build: 'A', buildId: s.builds.A, atSeconds: 0, setAttempts: 0 };
  deploy.record.steps.push(step);
  if (!(await makeCurrent(deploy, 'A', step, { log: o.log }))) {
    throw new Error(`build A could not be made current: ${step.error}`);
  }
  return deploy;
}

/** The run's two workers, configured as production's are but for the chaos schedule and timeouts. */
function workerFleet(
  o: ChaosOptions,
  s: { entry: string; bundlePath: string; dir: string; keys: string; server: { address: string }; sandbox: Sandbox },
): WorkerFleet {
  return new WorkerFleet({
    entry: s.entry,
    // The drill adds its builds' slots itself (fleet.add).
    slots: o.deploy ? [] : WORKER_SLOTS,
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
