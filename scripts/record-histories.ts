/**
 * Re-records the replay histories: runs every scenario of test/replay/scenarios.ts on a real dev
 * server against the sandbox supplier, and writes the full history of each workflow's last run (for
 * a continue-as-new chain, the run that resumed: the first runs are like any other recovery) to
 * test/replay/histories/<version>, one folder per shape of the workflow's histories.
 *
 *   npm run record-histories [-- <version>]      (default: CURRENT_VERSION)
 *
 * After a patched workflow change, record a new version folder and keep the old ones: the replay
 * test replays them all, so both the old path (runs started before the patch) and the new one stay
 * covered. Drop a folder only once no running booking can be on that shape. Never re-record to
 * silence a failure.
 */
import { writeFileSync, mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { SearchAttributeType } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { createBookingWorker } from '../src/worker';
import {
  approvePriceChangeUpdate,
  bookingStateQuery,
  BookingStageKey,
  CustomerReferenceNoKey,
  supplierOrderUpdateSignal,
} from '../src/contract';
import { Client } from '@temporalio/client';
import { startBooking } from '../src/client';
import { testDataConverter } from '../test/fixtures/encryption';
import { startSandbox } from '../dev/sandbox/server';
import { createHttpSupplierClient } from '../src/supplier/http-client';
import { ticketTokens } from '../src/supplier/token';
import { resolveServerExecutable } from '../dev/temporal/binaries';
import { bookingRequest, testProfile } from '../test/harness/booking';
import { replayScenarios, type ReplayScenario } from '../test/replay/scenarios';

/**
 * The newest shape: a re-sent Book decides only on an order, and is never sent after Book answered with
 * one (PATCHES.resendDecidesOnlyOnOrder), on top of v5's fewer workflow tasks (PATCHES.fewerTasks).
 */
const CURRENT_VERSION = 'v6-resend-decides-only-on-order';
const OUT = path.resolve(__dirname, '../test/replay/histories', process.argv[2] ?? CURRENT_VERSION);

async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: resolveServerExecutable('cli'),
      searchAttributes: [
        { name: BookingStageKey.name, type: SearchAttributeType.KEYWORD },
        { name: CustomerReferenceNoKey.name, type: SearchAttributeType.KEYWORD },
      ],
    },
  });
  // Limits high enough that no 429 retry lands in a history by accident of timing.
  const sandbox = await startSandbox({
    port: 0,
    rateLimits: { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: 10_000 },
  });
  const tokens = ticketTokens({
    baseUrl: sandbox.url,
    profile: testProfile,
    appKey: 'sandbox-app',
    appSecret: 'sandbox-secret',
  });
  const supplier = createHttpSupplierClient({
    baseUrl: sandbox.url,
    profile: testProfile,
    tokens,
  });
  const taskQueue = 'record-histories';
  // Recorded encrypted, as production stores them: the histories on disk hold no personal data in clear.
  const dataConverter = testDataConverter();
  const client = new Client({ connection: env.connection, dataConverter });
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    supplier,
    profile: testProfile,
    dataConverter,
    // The scenarios scale the recovery schedule down to seconds (`recovery.testing`).
    recoveryTesting: true,
  });

  mkdirSync(OUT, { recursive: true });
  for (const f of readdirSync(OUT)) if (f.endsWith('.json')) unlinkSync(path.join(OUT, f));

  const record = async (scenario: ReplayScenario) => {
    const request = bookingRequest({ ...scenario.request, test: scenario.test });
    const handle = await startBooking(client, request, { taskQueue });
    if (scenario.steer === 'approve-price' || scenario.steer === 'refuse-price') {
      const state = await waitFor(async () => {
        const s = await handle.query(bookingStateQuery);
        return s.stage === 'awaiting-price-approval' ? s : undefined;
      });
      await handle.executeUpdate(approvePriceChangeUpdate, {
        args: [{ approved: scenario.steer === 'approve-price', price: state.currentPrice! }],
      });
    }
    if (scenario.steer === 'cancel-in-recovery') {
      await waitFor(async () => ((await handle.query(bookingStateQuery)).stage === 'recovering' ? true : undefined));
      await handle.cancel();
    }
    if (scenario.steer === 'hint-after-first-poll') {
      await waitFor(async () => ((await handle.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));
      await handle.signal(supplierOrderUpdateSignal, { customerReferenceNo: request.customerReferenceNo, status: 2 });
    }
    const outcome = await handle.result();
    if (outcome.kind !== scenario.expected) {
      throw new Error(
        `${scenario.name}: expected outcome ${scenario.expected}, got ${outcome.kind}; nothing written for it`,
      );
    }
    // The latest run: a handle without a run id follows continue-as-new.
    const history = await client.workflow.getHandle(handle.workflowId).fetchHistory();
    const file = path.join(OUT, `${scenario.name}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          scenario: scenario.name,
          workflowId: handle.workflowId,
          outcome: outcome.kind,
          history: JSON.parse(historyToJSON(history)),
        },
        null,
        1,
      ) + '\n',
    );
    console.log(`${scenario.name.padEnd(32)} ${outcome.kind.padEnd(16)} ${history.events?.length ?? 0} events`);
  };

  try {
    // One at a time, so each history holds only its own scenario's timing.
    await worker.runUntil(async () => {
      for (const scenario of replayScenarios) await record(scenario);
    });
  } finally {
    await supplier.close();
    await tokens.close?.();
    await sandbox.close();
    await env.teardown();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
