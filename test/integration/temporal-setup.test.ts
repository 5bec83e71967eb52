/**
 * A Temporal service this project did not set up: a plain dev server started without the search
 * attributes the workflow writes, as an operator's own cluster would be. The worker either prepares it
 * and books, or stops at once naming what is missing; it never polls while bookings hang.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../src/contract';
import { resolveServerExecutable } from '../../src/temporal/binaries';
import { freePort, startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { ensureTemporalReady, TemporalSetupError } from '../../src/temporal/setup';
import { book, bookingRequest, createBookingRig } from '../harness/booking';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const NAMES = SEARCH_ATTRIBUTES.map((sa) => sa.name);

let dir: string;
let server: DevServer;
let env: TestWorkflowEnvironment;

/** A fresh bare server for each test: what one test registers must not help the next. */
beforeEach(async () => {
  const exe = resolveServerExecutable('cli');
  if (exe.type !== 'existing-path') throw new Error('the Temporal CLI is needed (npm run temporal:install)');
  dir = mkdtempSync(path.join(os.tmpdir(), 'bare-temporal-'));
  server = await startDevServer({
    cliPath: exe.path,
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.db'),
    searchAttributes: false,
    logLevel: 'error',
  });
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
});
afterEach(async () => {
  await env?.teardown();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function customAttributes(): Promise<string[]> {
  const { customAttributes } = await env.connection.operatorService.listSearchAttributes({ namespace: 'default' });
  return Object.keys(customAttributes ?? {});
}

/** The worker as `npm run worker` runs it, against the bare server. */
function runWorker(extraEnv: Record<string, string>) {
  return run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'], {
    cwd: ROOT,
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '',
      TEMPORAL_ADDRESS: server.address,
      SUPPLIER_TOKEN: 'not-used',
      BOOKING_TASK_QUEUE: 'bare-server-check',
      ...extraEnv,
    },
  });
}

test('registering allowed: the check registers both attributes, and a booking then confirms', async () => {
  expect(await customAttributes()).not.toEqual(expect.arrayContaining(NAMES));
  const ready = await ensureTemporalReady({ services: env.connection, namespace: 'default', register: true });
  expect(ready.registered.sort()).toEqual([...NAMES].sort());
  expect(await customAttributes()).toEqual(expect.arrayContaining(NAMES));

  const rig = await createBookingRig(env, 'bare');
  try {
    expect((await book(env, rig, bookingRequest({ test: 'confirmAfterMs=0' }))).kind).toBe('confirmed');
  } finally {
    await rig.close();
  }
});

test('registering off: the worker exits non-zero at once, naming each attribute and its command, and never polls', async () => {
  const failed = await runWorker({ WORKER_REGISTER_SEARCH_ATTRIBUTES: 'off' }).then(
    () => undefined,
    (err: { code?: number; stderr?: string; stdout?: string }) => err,
  );
  expect(failed?.code).toBe(1);
  for (const name of NAMES) {
    expect(failed?.stderr).toContain(
      `temporal operator search-attribute create --namespace default --name ${name} --type Keyword`,
    );
  }
  expect(failed?.stdout).not.toMatch(/Worker polling/);
  const queue = await env.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: 'bare-server-check' },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  expect(queue.pollers ?? []).toEqual([]);
  expect(await customAttributes()).not.toEqual(expect.arrayContaining(NAMES));
});

test('npm run temporal:setup prepares the namespace, and a second run changes nothing', async () => {
  const setup = () =>
    run('npm', ['run', '--silent', 'temporal:setup'], {
      cwd: ROOT,
      timeout: 60_000,
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' },
    });
  const first = await setup();
  expect(first.stdout).toMatch(/registered (BookingStage|CustomerReferenceNo), (BookingStage|CustomerReferenceNo)/);
  const second = await setup();
  expect(second.stdout).toMatch(/already there; nothing to do/);
  expect(await customAttributes()).toEqual(expect.arrayContaining(NAMES));
  // And the check-only mode agrees.
  await expect(
    run('npm', ['run', '--silent', 'temporal:setup', '--', '--check'], {
      cwd: ROOT,
      timeout: 60_000,
      env: { ...process.env, TEMPORAL_ADDRESS: server.address },
    }),
  ).resolves.toMatchObject({ stdout: expect.stringMatching(/nothing to do/) });
});

test('a namespace that does not exist is named, with the command that creates it', async () => {
  const error = await ensureTemporalReady({ services: env.connection, namespace: 'bookings-eu', register: true }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TemporalSetupError);
  expect(error).toMatchObject({ type: 'NamespaceNotFound' });
  expect((error as Error).message).toContain('temporal operator namespace create --namespace bookings-eu');
});
