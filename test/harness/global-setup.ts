/**
 * Starts the real Temporal servers once per test run, shared by the test files:
 *  - the Java time-skipping test server, for the `workflow` tier;
 *  - the Temporal CLI dev server (search attributes registered), for the `integration` tier, or with
 *    TEST_TEMPORAL_ENGINE=prod the production topology instead (PostgreSQL, two server nodes: dev/prod);
 *  - the production topology for the `prod` tier, which runs a set of integration files on it;
 * and bundles the workflow code once, so each file's workers start in milliseconds.
 * Jest runs up to maxWorkers files at once (see jest.config.js): each worker gets a time-skipping server and a dev
 * server of its own, so a file that skips time, or lists and counts the namespace, sees no other file's workflows.
 * Addresses reach the test files through environment variables, one set per worker (`_1`, `_2`, ...), which
 * ./use-worker-servers.ts turns into the plain names for the worker a file runs in (see ./temporal.ts).
 */
import type { Config } from '@jest/types';
import { bundleWorkflowCode } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { BookingStageKey, CustomerReferenceNoKey } from '../../src/api/contract/index';
import { dynamicConfigArgs, freePort } from '../../dev/temporal/dev-server';
import { startProdCluster, type ProdCluster } from '../../dev/prod/cluster';
import { startWebUi } from '../../dev/prod/ui';
import { Connection } from '@temporalio/client';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { workflowBundlerOptions } from '../../src/workflow-bundle';

const ALL_TIERS = ['unit', 'supplier', 'workflow', 'integration', 'replay', 'e2e', 'prod'];

/** Which engine the integration and e2e tiers run on: `dev` (the CLI dev server, default) or `prod`. */
function integrationEngine(): 'dev' | 'prod' {
  const engine = process.env.TEST_TEMPORAL_ENGINE ?? 'dev';
  if (engine !== 'dev' && engine !== 'prod') throw new Error(`TEST_TEMPORAL_ENGINE=${engine}: use dev or prod`);
  return engine;
}

/**
 * The production topology in a temp folder, with the Web UI and the search attributes a deployment's
 * setup registers; stopped by global-teardown.
 */
async function startProdEngine(): Promise<{ cluster: ProdCluster; uiUrl: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'booking-prod-engine-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the folder (mkdtemp makes it 0700).
  chmodSync(dataDir, 0o755);
  const cluster = await startProdCluster({ dataDir, frontendPort: 0, basePort: 0, postgresPort: 0, log });
  const ui = await startWebUi({
    dataDir,
    port: await freePort(),
    temporalAddress: cluster.address,
    namespace: 'default',
  });
  const globals = globalThis as Record<string, unknown>;
  globals.__prodStops = [
    ...((globals.__prodStops as Array<() => Promise<void>>) ?? []),
    () => ui.stop(),
    () => cluster.stop(),
    async () => rmSync(dataDir, { recursive: true, force: true }),
  ];
  const connection = await Connection.connect({ address: cluster.address });
  try {
    await ensureTemporalReady({ services: connection, namespace: cluster.namespace, register: true });
  } finally {
    await connection.close();
  }
  return { cluster, uiUrl: ui.url };
}

/** The tiers this run selected with --selectProjects (all when none). */
function selectedTiers(): string[] {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === '--selectProjects' || a.startsWith('--selectProjects='));
  if (i < 0) return ALL_TIERS;
  const inline = argv[i]!.includes('=') ? [argv[i]!.split('=')[1]!] : [];
  const following = [];
  for (let j = i + 1; j < argv.length && !argv[j]!.startsWith('-'); j++) following.push(argv[j]!);
  return [...inline, ...following];
}

/** A time-skipping test server with the search attributes the workflows upsert. */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: resolveServerExecutable('test-server') },
  });
  // The Java test server takes no search-attribute flags, but its operator service registers them;
  // without them every upsert from the workflow is rejected and workflow tasks retry forever.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: {
      [BookingStageKey.name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      [CustomerReferenceNoKey.name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    },
  });
  return env;
}

/** A CLI dev server with its Web UI, the search attributes and the settings `npm start` runs it with. */
async function startDevServer(): Promise<{ env: TestWorkflowEnvironment; uiUrl: string }> {
  const uiPort = await freePort();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: resolveServerExecutable('cli'),
      ui: true,
      uiPort,
      searchAttributes: [
        { name: BookingStageKey.name, type: SearchAttributeType.KEYWORD },
        { name: CustomerReferenceNoKey.name, type: SearchAttributeType.KEYWORD },
      ],
      // The settings `npm start` and docker-compose run the server with (eager activity execution).
      extraArgs: dynamicConfigArgs(),
    },
  });
  return { env, uiUrl: `http://127.0.0.1:${uiPort}` };
}

/** `start`, tried up to `tries` times: a server that did not come up is tried again, its error kept for the last. */
async function startedWithin<T>(tries: number, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= tries) throw err;
      log(
        `a test server did not start (${(err as Error).message.slice(0, 120)}); trying again (${attempt + 1}/${tries})`,
      );
    }
  }
}

/** Sets `name` for each worker (`name_1`, ...) and the plain `name` to the first, for a file run alone. */
function perWorker(name: string, values: string[]): void {
  values.forEach((value, i) => (process.env[`${name}_${i + 1}`] = value));
  process.env[name] = values[0];
}

export default async function globalSetup(globalConfig?: Config.GlobalConfig): Promise<void> {
  const tiers = selectedTiers();
  const needs = (...names: string[]) => names.some((n) => tiers.includes(n));
  const started: TestWorkflowEnvironment[] = [];
  (globalThis as Record<string, unknown>).__temporalEnvs = started;
  // One set of servers per worker Jest may run (JEST_WORKER_ID is 1..maxWorkers), started one after another, each
  // tried again when it does not come up: the SDK gives a server 5 s to listen, and two JVMs (or a JVM beside other
  // runs) starting at once on 2 busy cores have missed that ("ephemeral server ... did not start within 5s").
  const workers = Math.max(1, globalConfig?.maxWorkers ?? 1);
  const each = async <T>(start: () => Promise<T>): Promise<T[]> => {
    const servers: T[] = [];
    for (let i = 0; i < workers; i++) servers.push(await startedWithin(3, start));
    return servers;
  };

  if (needs('workflow', 'integration', 'replay', 'e2e', 'prod')) {
    const t0 = Date.now();
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../src/workflows'),
      // As the worker bundles it (src/workflow-bundle.ts): the tests run the shared, frozen modules that ship.
      ...workflowBundlerOptions(),
      logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
    });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'booking-bundle-'));
    const file = path.join(dir, 'workflow-bundle.js');
    writeFileSync(file, code);
    process.env.TEST_WORKFLOW_BUNDLE = file;
    log(`workflow bundle built in ${Date.now() - t0} ms`);
  }
  if (needs('workflow')) {
    const t0 = Date.now();
    const envs = await each(startTimeSkipping);
    started.push(...envs);
    perWorker(
      'TEST_TIME_SKIPPING_ADDRESS',
      envs.map((env) => env.address),
    );
    log(`${workers} time-skipping test server(s) on ${envs.map((e) => e.address).join(', ')} in ${Date.now() - t0} ms`);
  }
  if (needs('prod') || (needs('integration', 'e2e') && integrationEngine() === 'prod')) {
    const t0 = Date.now();
    const { cluster, uiUrl } = await startProdEngine();
    process.env.TEST_PROD_SERVER_ADDRESS = cluster.address;
    process.env.TEST_PROD_SERVER_UI_URL = uiUrl;
    log(
      `production engine (PostgreSQL + ${cluster.nodes.length} nodes) on ${cluster.address} in ${Date.now() - t0} ms`,
    );
    if (integrationEngine() === 'prod') {
      // One cluster for every worker (jest.config.js runs one file at a time on it).
      perWorker('TEST_DEV_SERVER_ADDRESS', [cluster.address]);
      perWorker('TEST_DEV_SERVER_UI_URL', [uiUrl]);
    }
  }
  if (needs('integration', 'e2e') && integrationEngine() === 'dev') {
    const t0 = Date.now();
    const servers = await each(startDevServer);
    started.push(...servers.map((s) => s.env));
    perWorker(
      'TEST_DEV_SERVER_ADDRESS',
      servers.map((s) => s.env.address),
    );
    perWorker(
      'TEST_DEV_SERVER_UI_URL',
      servers.map((s) => s.uiUrl),
    );
    log(`${workers} dev server(s) on ${servers.map((s) => s.env.address).join(', ')} in ${Date.now() - t0} ms`);
  }
}

function log(message: string): void {
  process.stderr.write(`[test harness] ${message}\n`);
}
