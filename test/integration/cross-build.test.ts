/**
 * The previous release's code running beside today's on one dev server, every workflow type pinned: the payloads
 * that cross builds (src/api/contract/cross-build.ts, docs/compatibility.md) are read by the other build's code.
 * The release's tree is taken from git (schema/messages/previous-release.json names its commit); its worker runs as
 * `npm run worker` ran it then, build "old", with this checkout's node_modules; today's worker is build "new".
 *  - The release's own zod schemas of each payload and today's read each other's values (no servers).
 *  - A booking pinned to old, cancelled while Book was unknown, confirms while new is current: old's activity sends
 *    autoCancel by signal-with-start with old's order input, and the order run new starts cancels it, once.
 *  - The same from a booking pinned to new while old is current: old's order run cancels it, once.
 *  - old's callback receiver starts a check on new, and today's on old: each ends `checked`.
 *  - old's client asks a cancellation's fee (cancelBooking, update-with-start) of a run new starts, and today's of
 *    one old starts; each answers a quote and ends `quoted`.
 *  - today's client reads (bookingState) and answers (approvePriceChange) a price question of a booking on old, and
 *    old's client one on new, each parsing the answer with its own schema.
 * 25-40 s alone (about 70 s two files at a time), most of it the old worker's start: it bundles its workflows.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import {
  bookingWorkflowId,
  orderWorkflowId,
  type BookingOutcome,
  type OrderOutcome,
} from '../../src/api/contract/index';
import { bookingStateQuery } from '../../src/api/contract/messages';
import * as contractSchemas from '../../src/api/contract/schemas';
import * as crossBuild from '../../src/api/contract/cross-build';
import { CROSS_BUILD_PAYLOADS, crossBuildJsonSchema } from '../../src/api/contract/cross-build';
import { compatibilityIssues } from '../../src/api/contract/payload-compat';
import { setCurrentBuild } from '../../src/operators/deploy/routing';
import { runBuildOf } from '../../src/operators/shared/run-build';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import { approvePriceChange, cancelBooking, getBookingState } from '../../src/api/client/index';
import { BookingState } from '../../src/api/contract/schemas';
import type { Money } from '../../src/api/values/index';
import { basePriceFor } from '../../dev/sandbox/server';
import {
  bookingRequest,
  eventually,
  expectAtMostOneOrderPerReference,
  startBooking,
  testProfile,
} from '../harness/booking';
import { useDeployTest } from '../harness/deploy';

const ROOT = path.resolve(__dirname, '../..');
const execFileAsync = promisify(execFile);
const previous = JSON.parse(readFileSync(path.join(ROOT, 'schema/messages/previous-release.json'), 'utf8')) as {
  release: string;
  commit: string;
  /** The release's contract module (its zod schemas), under its tree. */
  contract: string;
};
const deploymentName = `cross-build-${Date.now().toString(36)}`;
const oldBuild: WorkerBuild = { deploymentName, buildId: `${previous.release}+${previous.commit.slice(0, 7)}` };
const newBuild: WorkerBuild = { deploymentName, buildId: 'today+head' };
const d = useDeployTest({ name: 'cross-build', deployment: newBuild });
const { confirmed, cancelled } = testProfile.orderStatus;

let oldTree: string;
let oldWorker: ChildProcess | undefined;
let oldWorkerExited: Promise<unknown> = Promise.resolve();

/** The release's own tree: fails loudly when this clone lacks the commit (a shallow clone): never skipped. */
function checkOutPrevious(): string {
  try {
    execFileSync('git', ['cat-file', '-e', `${previous.commit}^{commit}`], { cwd: ROOT, stdio: 'pipe' });
  } catch {
    throw new Error(
      `commit ${previous.commit} (release ${previous.release}) is not in this clone: the cross-build test needs ` +
        "the previous release's code (fetch the whole history: git fetch --unshallow)",
    );
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cross-build-old-'));
  const archive = execFileSync('git', ['archive', previous.commit, 'src', 'tsconfig.json', 'package.json'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  writeFileSync(path.join(dir, 'tree.tar'), archive);
  execFileSync('tar', ['-xf', 'tree.tar'], { cwd: dir });
  // Its dependencies are this checkout's (the release's lockfile had the same SDK); reached as its own node_modules.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The release's worker, configured by environment only, as its `npm run worker` was. */
async function startOldWorker(taskQueue: string, supplierUrl: string): Promise<void> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'], {
    cwd: oldTree,
    env: {
      PATH: process.env.PATH ?? '',
      TZ: process.env.TZ ?? 'UTC',
      TEMPORAL_ADDRESS: process.env.TEST_DEV_SERVER_ADDRESS!,
      BOOKING_TASK_QUEUE: taskQueue,
      WORKER_DEPLOYMENT_NAME: oldBuild.deploymentName,
      WORKER_BUILD_ID: oldBuild.buildId,
      SUPPLIER_BASE_URL: supplierUrl,
      SUPPLIER_APP_KEY: 'sandbox-app',
      SUPPLIER_APP_SECRET: 'sandbox-secret',
      SUPPLIER_PROFILE: JSON.stringify({ timeoutsMs: testProfile.timeoutsMs }),
      RECOVERY_TESTING: 'on',
      RECONCILIATION_SCHEDULE: 'off',
      LOG_LEVEL: 'WARN',
    },
  });
  oldWorker = child;
  oldWorkerExited = new Promise((resolve) => child.once('exit', resolve));
  let out = '';
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Worker polling task queue')) resolve();
    });
    void oldWorkerExited.then((code) => reject(new Error(`the ${previous.release} worker exited (${code}):\n${out}`)));
  });
}

/**
 * One call by the release's own caller code, in a process of its own: its callback receiver's Temporal side
 * (`signal`: one order-status callback), or its client helper (`quote`: cancelBooking asking the fee; `approve`:
 * approvePriceChange at `price`; `state`: the bookingState query, parsed with its own schema). Answers what the call
 * answered, as JSON.
 */
async function oldCaller(op: 'signal' | 'quote' | 'approve' | 'state', ref: string, arg: unknown): Promise<unknown> {
  const script = `
    const { Client, Connection } = require('@temporalio/client');
    const { temporalCallbackTarget } = require('./src/callbacks/temporal-target');
    const helper = require('./src/client/index');
    const { OP, REF, ARG, QUEUE } = process.env;
    (async () => {
      const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
      const client = new Client({ connection });
      const arg = JSON.parse(ARG);
      const answer =
        OP === 'signal' ? await temporalCallbackTarget(client, { taskQueue: QUEUE }).signal({ customerReferenceNo: REF, status: arg })
        : OP === 'quote' ? await helper.cancelBooking(client, REF, { confirm: false }, { taskQueue: QUEUE })
        : OP === 'state' ? helper.BookingState.parse(await helper.getBookingState(client, REF))
        : await helper.approvePriceChange(client, REF, { approved: true, price: arg });
      console.log(JSON.stringify(answer));
      await connection.close();
    })().catch((err) => { console.error(err); process.exit(1); });`;
  // Not execFileSync: today's worker runs in this process, and must go on while the call waits for it.
  const { stdout } = await execFileAsync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: oldTree,
    env: {
      PATH: process.env.PATH ?? '',
      TZ: process.env.TZ ?? 'UTC',
      TEMPORAL_ADDRESS: process.env.TEST_DEV_SERVER_ADDRESS!,
      QUEUE: d.rig.taskQueue,
      OP: op,
      REF: ref,
      ARG: JSON.stringify(arg ?? null),
    },
    encoding: 'utf8',
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

beforeAll(async () => {
  oldTree = checkOutPrevious();
  await Promise.all([startOldWorker(d.rig.taskQueue, d.rig.sandbox.url), d.waitServed(newBuild)]);
  await d.waitServed(oldBuild);
}, 120_000);

afterAll(async () => {
  oldWorker?.kill('SIGTERM');
  await oldWorkerExited;
  if (oldTree) rmSync(oldTree, { recursive: true, force: true });
});

const calls = (op: 'book' | 'cancel', ref: string) =>
  d.rig.sandbox.calls(op).filter((c) => c.customerReferenceNos?.includes(ref));
const buildOf = async (workflowId: string) =>
  runBuildOf(await d.env.client.workflow.getHandle(workflowId).describe())?.buildId;
const result = <T>(workflowId: string) => d.env.client.workflow.getHandle(workflowId).result() as Promise<T>;

/** The release's own zod schemas of these names (its contract's exports), as its zod writes them in JSON Schema. */
async function releaseJsonSchemas(names: string[]): Promise<Record<string, { input: unknown; output: unknown }>> {
  const script = `
    const { z } = require('zod');
    const contract = require(process.env.CONTRACT);
    const out = {};
    for (const name of JSON.parse(process.env.NAMES)) {
      const schema = contract[name];
      if (!schema || typeof schema.safeParse !== 'function') continue;
      const json = (io) => z.toJSONSchema(schema, { io, target: 'draft-2020-12' });
      out[name] = { input: json('input'), output: json('output') };
    }
    console.log(JSON.stringify(out));`;
  const { stdout } = await execFileAsync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: oldTree,
    env: { PATH: process.env.PATH ?? '', CONTRACT: `./${previous.contract}`, NAMES: JSON.stringify(names) },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Record<string, { input: unknown; output: unknown }>;
}

test(`${previous.release}'s contract and today's read each other's cross-build payloads`, async () => {
  // Each payload's schema by its export name today; the release's schema of that name is what its builds send.
  const names = new Map<unknown, string>(
    Object.entries({ ...contractSchemas, ...crossBuild }).map(([name, value]) => [value, name]),
  );
  const release = await releaseJsonSchemas([...new Set(names.values())]);
  const compared: string[] = [];
  const issues: string[] = [];
  for (const payload of CROSS_BUILD_PAYLOADS) {
    for (const part of ['payload', 'answer'] as const) {
      const schema = part === 'payload' ? payload.schema : payload.answer;
      const then = schema && release[names.get(schema) ?? ''];
      // A schema the release did not have (a field of today's registry only) has nothing to be compared with.
      if (!schema || !then) continue;
      // An update's answer is read as a result is: what the run gives back.
      const alone = {
        ...payload,
        schema,
        answer: undefined,
        kind: part === 'answer' ? ('result' as const) : payload.kind,
      };
      const doc = (toJson?: crossBuild.ToJsonSchema) =>
        (crossBuildJsonSchema(alone, toJson) as { payload: unknown }).payload;
      compared.push(`${payload.name} ${part}`);
      issues.push(
        ...compatibilityIssues(
          doc((_s, io) => then[io]),
          doc(),
        ).map((i) => `${payload.name} ${part}: ${i}`),
      );
    }
  }
  expect(issues).toEqual([]);
  expect(compared).toEqual(
    expect.arrayContaining(['autoCancel payload', 'orderWorkflow.input payload', 'cancelBooking answer']),
  );
});

/**
 * A booking whose Book answered 504 after making the order (which the sandbox holds in Confirming), cancelled while
 * it follows the order with QueryOrders: once the order confirms it sends onCancelAfterBook's autoCancel.
 */
async function cancelledWhileUnknown(): Promise<string> {
  const request = bookingRequest({
    onCancelAfterBook: 'cancel',
    test: 'book=504AfterCreate&confirmAfterMs=3600000',
    recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1, deadlineSeconds: 600 },
  });
  const handle = await startBooking(d.env, d.rig, request);
  d.handles.push(handle as unknown as WorkflowHandle);
  await eventually(async () => ((await handle.query(bookingStateQuery)).stage === 'recovering' ? true : undefined));
  await handle.cancel();
  return request.customerReferenceNo;
}

/** A plain booking, confirmed. */
async function confirmedBooking(): Promise<string> {
  const request = bookingRequest({ test: 'confirmAfterMs=0', recovery: { testing: true, delaysSeconds: [1] } });
  const handle = await startBooking(d.env, d.rig, request);
  d.handles.push(handle as unknown as WorkflowHandle);
  expect(await handle.result()).toMatchObject({ kind: 'confirmed' });
  return request.customerReferenceNo;
}

/** A booking whose price went up 20%, waiting for the caller's answer. */
async function awaitingApproval(): Promise<{ ref: string; price: Money }> {
  const request = bookingRequest({
    test: 'scenario=priceChanged&priceDeltaPercent=20&confirmAfterMs=0',
    ratePkgId: 'PKG-CROSS-BUILD',
    expectedPrice: basePriceFor('PKG-CROSS-BUILD'),
    priceChangePolicy: { onExceeded: 'ask' },
    recovery: { testing: true, delaysSeconds: [1] },
  });
  const handle = await startBooking(d.env, d.rig, request);
  d.handles.push(handle as unknown as WorkflowHandle);
  const state = await eventually(async () => {
    const s = await handle.query(bookingStateQuery);
    return s.stage === 'awaiting-price-approval' ? s : undefined;
  });
  return { ref: request.customerReferenceNo, price: state.currentPrice! };
}

/** The order confirms; its booking's autoCancel starts an order run, whose one Cancel the supplier then settles. */
async function confirmAndCancel(ref: string): Promise<OrderOutcome> {
  expect(d.rig.sandbox.setOrderStatus(ref, confirmed)).toBe(true);
  expect(await result<BookingOutcome>(bookingWorkflowId(ref))).toMatchObject({
    kind: 'confirmed',
    cancelRequested: true,
  });
  // Until its Cancel went out, or the run ended without one (its failure, read below, says why).
  const order = d.env.client.workflow.getHandle(orderWorkflowId(ref));
  const closed = async () => {
    const status = (await order.describe().catch(() => undefined))?.status.name;
    return status !== undefined && status !== 'RUNNING';
  };
  await eventually(async () => (calls('cancel', ref).length > 0 || (await closed()) ? true : undefined), 30_000);
  d.rig.sandbox.setOrderStatus(ref, cancelled);
  return orderOutcome(ref);
}

async function orderOutcome(ref: string): Promise<OrderOutcome> {
  d.handles.push(d.env.client.workflow.getHandle(orderWorkflowId(ref)));
  return result<OrderOutcome>(orderWorkflowId(ref));
}

test(`${previous.release} and today's build: signals, updates and order starts cross both ways`, async () => {
  // old is current: a booking to cancel, two confirmed (for checks) and two (for quotes), one asking a price: on old.
  await setCurrentBuild(d.env.client, oldBuild, d.io);
  const [fromOld, checkedOnNew, checkedOnOld, quotedOnNew, quotedOnOld, askedOnOld] = await Promise.all([
    cancelledWhileUnknown(),
    confirmedBooking(),
    confirmedBooking(),
    confirmedBooking(),
    confirmedBooking(),
    awaitingApproval(),
  ]);
  // new is current: a booking to cancel and one asking a price, on new.
  await setCurrentBuild(d.env.client, newBuild, d.io);
  const [fromNew, askedOnNew] = await Promise.all([cancelledWhileUnknown(), awaitingApproval()]);
  expect(await buildOf(bookingWorkflowId(fromOld))).toBe(oldBuild.buildId);
  expect(await buildOf(bookingWorkflowId(askedOnOld.ref))).toBe(oldBuild.buildId);
  expect(await buildOf(bookingWorkflowId(fromNew))).toBe(newBuild.buildId);
  expect(await buildOf(bookingWorkflowId(askedOnNew.ref))).toBe(newBuild.buildId);

  // bookingState: each build's reader parses the other's answer with its own schema.
  expect(BookingState.parse(await getBookingState(d.env.client, askedOnOld.ref))).toMatchObject({
    stage: 'awaiting-price-approval',
    currentPrice: askedOnOld.price,
  });
  expect(await oldCaller('state', askedOnNew.ref, null)).toMatchObject({
    stage: 'awaiting-price-approval',
    currentPrice: askedOnNew.price,
  });
  // approvePriceChange: today's client to a booking on old, old's client to one on new; both read the answer.
  expect(await approvePriceChange(d.env.client, askedOnOld.ref, { approved: true, price: askedOnOld.price })).toEqual({
    accepted: true,
    stage: 'awaiting-price-approval',
  });
  expect(await oldCaller('approve', askedOnNew.ref, askedOnNew.price)).toEqual({
    accepted: true,
    stage: 'awaiting-price-approval',
  });
  for (const { ref } of [askedOnOld, askedOnNew]) {
    expect(await result<BookingOutcome>(bookingWorkflowId(ref))).toMatchObject({ kind: 'confirmed' });
  }

  // old's activity sends autoCancel with old's order input; today's code runs the order.
  expect(await confirmAndCancel(fromOld)).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'auto' } });
  expect(await buildOf(orderWorkflowId(fromOld))).toBe(newBuild.buildId);
  // old's callback receiver and old's client start order runs that today's code runs.
  expect(await oldCaller('signal', checkedOnNew, confirmed)).toBe('order');
  expect(await oldCaller('quote', quotedOnNew, null)).toMatchObject({ kind: 'quote', quote: { basis: 'free' } });
  expect(await orderOutcome(checkedOnNew)).toMatchObject({ kind: 'checked' });
  expect(await orderOutcome(quotedOnNew)).toMatchObject({ kind: 'quoted' });
  for (const ref of [checkedOnNew, quotedOnNew]) expect(await buildOf(orderWorkflowId(ref))).toBe(newBuild.buildId);

  // old is current again (a rollback): today's activity, receiver and client reach runs of the old code.
  await setCurrentBuild(d.env.client, oldBuild, d.io);
  expect(await confirmAndCancel(fromNew)).toMatchObject({ kind: 'cancelled', cancellation: { origin: 'auto' } });
  expect(await buildOf(orderWorkflowId(fromNew))).toBe(oldBuild.buildId);
  const receiver = temporalCallbackTarget(d.env.client, { taskQueue: d.rig.taskQueue });
  expect(await receiver.signal({ customerReferenceNo: checkedOnOld, status: confirmed })).toBe('order');
  expect(
    await cancelBooking(d.env.client, quotedOnOld, { confirm: false }, { taskQueue: d.rig.taskQueue }),
  ).toMatchObject({ kind: 'quote', quote: { basis: 'free' } });
  expect(await orderOutcome(checkedOnOld)).toMatchObject({ kind: 'checked' });
  expect(await orderOutcome(quotedOnOld)).toMatchObject({ kind: 'quoted' });
  for (const ref of [checkedOnOld, quotedOnOld]) expect(await buildOf(orderWorkflowId(ref))).toBe(oldBuild.buildId);

  // Nothing sent twice: one Book per reference, one Cancel per order cancelled, none for the others.
  const refs = [fromOld, fromNew, checkedOnNew, checkedOnOld, quotedOnNew, quotedOnOld, askedOnOld.ref, askedOnNew.ref];
  for (const ref of refs) expect(calls('book', ref)).toHaveLength(1);
  for (const ref of refs) expect(calls('cancel', ref)).toHaveLength([fromOld, fromNew].includes(ref) ? 1 : 0);
  expectAtMostOneOrderPerReference(d.rig.sandbox);
}, 120_000);
