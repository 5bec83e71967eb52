/**
 * Starts the real Temporal servers once per test run, shared by every test file:
 *  - the Java time-skipping test server, for the `workflow` tier;
 *  - the Temporal CLI dev server (search attributes registered), for the `integration` tier, or with
 *    TEST_TEMPORAL_ENGINE=prod the production topology instead (PostgreSQL, two server nodes: dev/prod);
 *  - the production topology for the `prod` tier, which runs a set of integration files on it;
 * and bundles the workflow code once, so each file's workers start in milliseconds.
 * Addresses reach the test files through environment variables (see ./temporal.ts).
 */
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

export default async function globalSetup(): Promise<void> {
  const tiers = selectedTiers();
  const needs = (...names: string[]) => names.some((n) => tiers.includes(n));
  const started: TestWorkflowEnvironment[] = [];
  (globalThis as Record<string, unknown>).__temporalEnvs = started;

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
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: resolveServerExecutable('test-server') },
    });
    started.push(env);
    // The Java test server takes no search-attribute flags, but its operator service registers them;
    // without them every upsert from the workflow is rejected and workflow tasks retry forever.
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: {
        [BookingStageKey.name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        [CustomerReferenceNoKey.name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      },
    });
    process.env.TEST_TIME_SKIPPING_ADDRESS = env.address;
    log(`time-skipping test server on ${env.address} in ${Date.now() - t0} ms`);
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
      process.env.TEST_DEV_SERVER_ADDRESS = cluster.address;
      process.env.TEST_DEV_SERVER_UI_URL = uiUrl;
    }
  }
  if (needs('integration', 'e2e') && integrationEngine() === 'dev') {
    const t0 = Date.now();
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
    started.push(env);
    process.env.TEST_DEV_SERVER_ADDRESS = env.address;
    process.env.TEST_DEV_SERVER_UI_URL = `http://127.0.0.1:${uiPort}`;
    log(`dev server on ${env.address} (Web UI on ${uiPort}) in ${Date.now() - t0} ms`);
  }
}

function log(message: string): void {
  process.stderr.write(`[test harness] ${message}\n`);
}
