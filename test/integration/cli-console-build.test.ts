/**
 * Which build a run is on, as the operators' tools show it (src/operators/shared/run-build.ts): the CLI's `status` and `list`
 * and the console's list and booking page, against the dev server with a versioned worker (Worker Deployment
 * Versioning, its build made current as a deploy does) beside an unversioned one.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitOutcome, startBooking } from '../../src/api/client/index';
import { startConsole, type ConsoleServer } from '../../src/operators/console/server';
import { describeDeployment, setCurrentBuild } from '../../src/operators/deploy/routing';
import type { WorkerBuild } from '../../src/runtime/config/build';
import { connectDevServer } from '../harness/temporal';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { bookingRequest, createBookingRig, eventually, unresolvedBooking, type BookingRig } from '../harness/booking';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

const build: WorkerBuild = {
  deploymentName: `build-view-${randomUUID().slice(0, 8)}`,
  buildId: `1.0.0+t${randomUUID().slice(0, 7)}`,
};
const pinned = { ...build, behavior: 'pinned' };

let env: TestWorkflowEnvironment;
let versioned: BookingRig;
let plain: BookingRig;
let server: ConsoleServer;

/** New runs of the rig's queue go to `build` once the server knows its worker: retried until it does. */
async function makeCurrent(b: WorkerBuild): Promise<void> {
  await eventually(async () => {
    const routing = await describeDeployment(env.client, b.deploymentName).catch(() => undefined);
    if (!routing) return undefined;
    return setCurrentBuild(env.client, b, { identity: 'test' }, routing.conflictToken).then(
      () => true,
      () => undefined,
    );
  }, 30_000);
}

beforeAll(async () => {
  env = await connectDevServer();
  [versioned, plain] = await Promise.all([
    createBookingRig(env, 'build-view', { deployment: build }),
    createBookingRig(env, 'build-view-plain'),
  ]);
  await makeCurrent(build);
  server = await startConsole({ client: env.client, taskQueue: plain.taskQueue });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await versioned?.close();
  await plain?.close();
  await env?.teardown();
});

type Ran = { code: number; stdout: string; stderr: string };

/** `npm run book -- <args>` as a child process, encryption off (the rigs' workers have no key). */
function cli(...args: string[]): Promise<Ran> {
  const childEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    PAYLOAD_ENCRYPTION_KEYS: '',
  };
  return run(
    process.execPath,
    [require.resolve('ts-node/dist/bin'), '--transpile-only', 'src/operators/cli/main.ts', ...args],
    {
      cwd: ROOT,
      env: childEnv,
      timeout: 25_000,
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: Ran) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

function json<T = Record<string, unknown>>(ran: Ran): T {
  const lines = ran.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

async function confirmedOn(rig: BookingRig): Promise<string> {
  const request = bookingRequest({ test: 'confirmAfterMs=0' });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  expect((await awaitOutcome(env.client, request.customerReferenceNo)).kind).toBe('confirmed');
  return request.customerReferenceNo;
}

describe('the CLI', () => {
  test('status and list name the build of a run on a versioned worker', async () => {
    const ref = await confirmedOn(versioned);
    // Each CLI run starts a process (a few seconds): side by side.
    const [text, printed, listed] = await Promise.all([
      cli('status', '--ref', ref),
      cli('status', '--ref', ref, '--json'),
      eventually(async () => {
        const report = json<{ workflows: Array<{ reference: string; build: unknown }> }>(
          await cli('list', '--stage', 'confirmed', '--limit', '1000', '--json'),
        );
        return report.workflows.find((w) => w.reference === ref && w.build !== null);
      }, 20_000),
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  build: ${build.buildId} (pinned, deployment ${build.deploymentName})`);
    expect(json(printed)).toMatchObject({ reference: ref, booking: { stage: 'confirmed', build: pinned } });
    expect(listed.build).toEqual(pinned);
  }, 30_000);

  test('a run on an unversioned worker says unversioned: null in JSON, a word in text and in the BUILD column', async () => {
    const ref = await confirmedOn(plain);
    const [text, printed, row] = await Promise.all([
      cli('status', '--ref', ref),
      cli('status', '--ref', ref, '--json'),
      eventually(async () => {
        const list = await cli('list', '--stage', 'confirmed', '--limit', '1000');
        expect(list.stdout).toMatch(/^REFERENCE\tSTAGE\tWORKFLOW ID\tSTARTED\tBUILD$/m);
        return list.stdout.split('\n').find((l) => l.startsWith(`${ref}\t`));
      }, 20_000),
    ]);
    expect(text.stdout).toContain('  build: unversioned');
    expect(json(printed)).toMatchObject({ reference: ref, booking: { stage: 'confirmed', build: null } });
    expect(row).toMatch(new RegExp(`^${ref}\\tconfirmed\\tbooking:${ref}\\t\\S+\\tunversioned$`));
  }, 30_000);
});

describe('the console', () => {
  test('each item and a booking page show the build of the run, or unversioned', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const [onBuild, unversioned] = await Promise.all([
      unresolvedBooking(env, versioned),
      unresolvedBooking(env, plain),
    ]);

    const rows = await eventually(async () => {
      const page = await (await fetch(`${server.url}/`)).text();
      const row = (ref: string) => new RegExp(`<tr class="item" data-ref="${ref}"[\\s\\S]*?</tr>`).exec(page)?.[0];
      const [pinnedRow, plainRow] = [row(onBuild), row(unversioned)];
      return pinnedRow && plainRow ? { pinnedRow, plainRow } : undefined;
    }, 20_000);
    expect(rows.pinnedRow).toContain(`<code>${build.buildId}</code> <small>pinned</small>`);
    expect(rows.pinnedRow).toContain(`title="${build.buildId} (pinned, deployment ${build.deploymentName})"`);
    expect(rows.pinnedRow).toContain(`href="/booking?ref=${onBuild}"`);
    expect(rows.plainRow).toContain('<span class="build">unversioned</span>');

    const detail = await fetch(`${server.url}/booking?ref=${onBuild}`);
    expect(detail.status).toBe(200);
    const html = await detail.text();
    expect(html).toContain(`data-workflow-id="booking:${onBuild}"`);
    expect(html).toContain(`<code>${build.buildId}</code> <small>pinned</small>`);
    expect(html).toContain('unresolved');

    const plainPage = await (await fetch(`${server.url}/booking?ref=${unversioned}`)).text();
    expect(plainPage).toContain('<span class="build">unversioned</span>');
    expect(plainPage).not.toContain(build.buildId);

    const missing = await fetch(`${server.url}/booking?ref=${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('No booking (and no order run) for this reference.');
    expect((await fetch(`${server.url}/booking`)).status).toBe(400);
  }, 30_000);
});
