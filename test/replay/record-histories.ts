/**
 * Records the replay histories of one workflow type: runs every scenario of that type (booking: ./scenarios.ts;
 * order, sweep and note: ./order-scenarios.ts) on a real dev server against the sandbox supplier, and writes the
 * full history of each scenario's last run (for a continue-as-new chain, the run that resumed) to
 * test/replay/histories/<type>/<version>, with recorded.json (the code's fingerprint, see ./fingerprint.ts).
 *
 *   npm run record-histories -- <booking|order|sweep|note> [<version>] [--new-build]
 *   (default version: the type's newest folder)
 *
 * The rule (docs/testing.md, "Changing the workflow safely"): from 1.0.0 on, recording again into an existing folder
 * is refused when the current code cannot replay the histories there (a change that breaks running workflows) or when
 * the new histories carry a patch marker the old ones lack (a new shape). A change of commands then goes one of two
 * ways. As a new build (every type is pinned on a versioned fleet, so runs finish on the build they started on):
 * no patch, a new folder recorded with `--new-build`, whose recorded.json lists the older folders the new code does
 * not replay as left to their build; the replay tier stops replaying those, and the deploy keeps the old build until
 * it has drained. As a patch (a fix that must reach running workflows): `patched()`, a new folder, and every older
 * folder still replays.
 */
import { writeFileSync, mkdirSync, readdirSync, readFileSync, unlinkSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { createBookingWorker } from '../../src/worker';
import { startLocalBookingStack } from '../../dev/stack/local';
import { approvePriceChangeUpdate, bookingStateQuery, supplierOrderUpdateSignal } from '../../src/api/contract/index';
import { Client } from '@temporalio/client';
import { startBooking } from '../../src/api/client/index';
import { testDataConverter } from '../fixtures/encryption';
import { bookingRequest, testProfile } from '../harness/booking';
import { replayScenarios, type ReplayScenario } from './scenarios';
import {
  noteScenarios,
  orderScenarios,
  sweepScenarios,
  type RecordingContext,
  type WorkflowScenario,
} from './order-scenarios';
import { byVersion, WORKFLOW_TYPES, workflowFingerprint, type WorkflowFolder } from './fingerprint';

const HISTORIES = path.resolve(__dirname, 'histories');

/** The build the gate's histories are recorded on (the deploy starts it pinned to its target build). */
const GATE_BUILD = { deploymentName: 'record-histories', buildId: 'recorded' };

/** The deploy gate's one run, as `deploy gate` starts it: pinned to the build by a versioning override. */
const gateScenarios: WorkflowScenario[] = [
  {
    name: 'passed',
    expected: 'gate',
    async run(ctx) {
      const nonce = `recorded-${Date.now()}`;
      const workflowId = `deploy-gate:${GATE_BUILD.deploymentName}:${GATE_BUILD.buildId}:${nonce}`;
      // The worker registers its build at its first poll; a pinned start before that is refused.
      const handle = await ctx.waitFor(() =>
        ctx.client.workflow
          .start('deployGateWorkflow', {
            workflowId,
            taskQueue: ctx.taskQueue,
            args: [{ ...GATE_BUILD, nonce }],
            versioningOverride: { pinnedTo: GATE_BUILD },
          })
          .catch(() => undefined),
      );
      await handle.result();
      return handle.workflowId;
    },
  },
];

function target(): { folder: WorkflowFolder; out: string; newBuild: boolean; older: string[] } {
  const folder = process.argv[2] as WorkflowFolder;
  if (!(folder in WORKFLOW_TYPES)) {
    throw new Error(
      `usage: npm run record-histories -- <${Object.keys(WORKFLOW_TYPES).join('|')}> [<version>] [--new-build]`,
    );
  }
  const existing = existsSync(path.join(HISTORIES, folder))
    ? readdirSync(path.join(HISTORIES, folder))
        .filter((d) => !d.startsWith('.'))
        .sort(byVersion)
    : [];
  const named = process.argv.slice(3).find((a) => !a.startsWith('--'));
  const version = named ?? existing.at(-1);
  if (!version) throw new Error(`no ${folder} histories yet: name the first version folder`);
  const newBuild = process.argv.includes('--new-build');
  if (newBuild && existing.includes(version)) {
    throw new Error(`--new-build records a new folder: ${folder}/${version} exists; name the next version`);
  }
  return { folder, out: path.join(HISTORIES, folder, version), newBuild, older: existing.filter((v) => v !== version) };
}

/**
 * A new build's folder: the older folders of the type whose histories the current code does not replay. Runs of
 * those shapes are pinned to the builds that made them and never reach this code; the replay tier leaves them out.
 */
function keptLeftToTheirBuild(out: string): string[] {
  const recorded = path.join(out, 'recorded.json');
  if (!existsSync(recorded)) return [];
  return (JSON.parse(readFileSync(recorded, 'utf8')) as { leftToTheirBuild?: string[] }).leftToTheirBuild ?? [];
}

async function leftToTheirBuild(folder: WorkflowFolder, older: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const version of older) {
    const dir = path.join(HISTORIES, folder, version);
    for (const file of historyFiles(dir)) {
      const { workflowId, history } = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      const replays = await Worker.runReplayHistory(
        { workflowsPath: require.resolve('../../src/workflows'), dataConverter: testDataConverter() },
        historyFromJSON(history),
        workflowId,
      ).then(
        () => true,
        () => false,
      );
      if (!replays) {
        console.log(`${folder}/${version} does not replay on this build: left to the build that recorded it`);
        left.push(version);
        break;
      }
    }
  }
  return left;
}

const historyFiles = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'recorded.json') : [];

/** The patch markers a history recorded. */
function markers(history: temporal.api.history.v1.IHistory): Set<string> {
  const ids = new Set<string>();
  for (const event of history.events ?? []) {
    const details = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    if (details) ids.add((JSON.parse(Buffer.from(details).toString()) as { id: string }).id);
  }
  return ids;
}

/** Whether a release (1.0.0 or later, not a pre-release of 1.0.0) may have workflows running from these histories. */
function released(): boolean {
  const { version } = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
    version: string;
  };
  const [major] = version.split('.').map(Number);
  return major! >= 1 && !version.startsWith('1.0.0-');
}

/**
 * After a release, refuses to overwrite histories the current code cannot replay: they stand for workflows running
 * now. Before it, says which ones the change re-records.
 */
async function replayExisting(out: string): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const file of historyFiles(out)) {
    const { workflowId, history } = JSON.parse(readFileSync(path.join(out, file), 'utf8'));
    const parsed = historyFromJSON(history);
    for (const id of markers(parsed)) seen.add(id);
    await Worker.runReplayHistory(
      { workflowsPath: require.resolve('../../src/workflows'), dataConverter: testDataConverter() },
      parsed,
      workflowId,
    ).catch((err: unknown) => {
      const where = `${path.relative(HISTORIES, out)}/${file}`;
      if (!released()) {
        console.log(`${where} no longer replays: its commands changed before 1.0.0, so it is recorded again`);
        return;
      }
      throw new Error(
        `${where} no longer replays (${String(err)}): the change breaks running workflows. Either ship it as a new ` +
          `build (record a new folder with --new-build; the old build runs until drained) or guard it with ` +
          'patched() and record a new folder; never re-record to silence this.',
      );
    });
  }
  return seen;
}

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
  const { env, sandbox, supplier, close } = await startLocalBookingStack(testProfile);
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
    // The deploy gate runs only on the build it is pinned to: its worker is a versioned one.
    ...(process.argv[2] === 'gate' ? { deployment: GATE_BUILD } : {}),
  });

  const { folder, out, newBuild, older } = target();
  const previousMarkers = await replayExisting(out);
  // Recorded again (same shape), a folder keeps the older folders it already left to their build.
  const left = newBuild ? await leftToTheirBuild(folder, older) : keptLeftToTheirBuild(out);
  const recorded: Array<{ name: string; body: string; markers: Set<string> }> = [];

  /** Keeps the latest run's history under `workflowId`, after checking it ended as the scenario expects. */
  const keep = async (name: string, expected: string, workflowId: string) => {
    // The latest run: a handle without a run id follows continue-as-new.
    const handle = client.workflow.getHandle(workflowId);
    const result = (await handle.result()) as { kind?: string } | undefined;
    const outcome = result?.kind ?? ({ note: 'note', gate: 'gate' } as Record<string, string>)[folder] ?? 'sweep';
    if (outcome !== expected) {
      throw new Error(`${name}: expected outcome ${expected}, got ${outcome}; nothing written`);
    }
    const history = await handle.fetchHistory();
    const body = JSON.stringify(
      { scenario: name, workflowId, outcome, history: JSON.parse(historyToJSON(history)) },
      null,
      1,
    );
    recorded.push({ name, body: `${body}\n`, markers: markers(history) });
    console.log(`${name.padEnd(40)} ${outcome.padEnd(20)} ${history.events?.length ?? 0} events`);
  };

  const recordBooking = async (scenario: ReplayScenario) => {
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
    if (scenario.steer === 'hints-flood') {
      const hint = { customerReferenceNo: request.customerReferenceNo, status: 2 };
      await waitFor(async () => ((await handle.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));
      await handle.signal(supplierOrderUpdateSignal, hint);
      await waitFor(async () => ((await handle.query(bookingStateQuery)).polls.length >= 2 ? true : undefined));
      await handle.signal(supplierOrderUpdateSignal, hint);
    }
    await keep(scenario.name, scenario.expected, handle.workflowId);
  };

  const ctx: RecordingContext = { client, taskQueue, sandbox, supplier, waitFor };
  try {
    // One at a time, so each history holds only its own scenario's timing.
    await worker.runUntil(async () => {
      if (folder === 'booking') for (const scenario of replayScenarios) await recordBooking(scenario);
      const others = {
        booking: [],
        order: orderScenarios,
        sweep: sweepScenarios,
        note: noteScenarios,
        gate: gateScenarios,
      }[folder];
      for (const scenario of others) await keep(scenario.name, scenario.expected, await scenario.run(ctx));
    });
  } finally {
    await close();
  }

  // A patch marker the folder's histories lack is a new shape: it needs a folder of its own, beside the old.
  const added = [...new Set(recorded.flatMap((r) => [...r.markers]))].filter((id) => !previousMarkers.has(id));
  if (released() && historyFiles(out).length > 0 && added.length > 0) {
    throw new Error(
      `the new histories carry patch markers ${added.join(', ')} that ${path.relative(HISTORIES, out)} lacks: ` +
        `record them in a new folder (npm run record-histories -- ${folder} <next-version>) and keep this one`,
    );
  }
  mkdirSync(out, { recursive: true });
  for (const f of historyFiles(out)) unlinkSync(path.join(out, f));
  for (const { name, body } of recorded) writeFileSync(path.join(out, `${name}.json`), body);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(out, 'recorded.json'),
    JSON.stringify(
      {
        workflowType: WORKFLOW_TYPES[folder].type,
        fingerprint: workflowFingerprint(folder),
        commit,
        ...(left.length > 0 ? { leftToTheirBuild: left } : {}),
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${recorded.length} histories to ${path.relative(process.cwd(), out)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
