/**
 * A Temporal service this project did not set up: a plain dev server started without the search
 * attributes the workflow writes, as an operator's own cluster would be. The worker either prepares it
 * and books, or stops at once naming what is missing; it never polls while bookings hang.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import {
  bookingWorkflowId,
  orderWorkflowId,
  queryOrdersTaskQueue,
  SEARCH_ATTRIBUTES,
  type BookingOutcome,
} from '../../src/api/contract/index';
import { awaitOrderOutcome, cancelBooking } from '../../src/api/client/index';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { freePort, startDevServer, type DevServer } from '../../dev/temporal/dev-server';
import { ensureTemporalReady, TemporalSetupError } from '../../src/runtime/namespace/setup';
import { bookingRequest, eventually } from '../harness/booking';
import { workflowBundle } from '../harness/temporal';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const NAMES = SEARCH_ATTRIBUTES.map((sa) => sa.name);
const { IndexedValueType, TaskQueueType } = temporal.api.enums.v1;

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

async function customAttributes(): Promise<Record<string, number>> {
  const { customAttributes } = await env.connection.operatorService.listSearchAttributes({ namespace: 'default' });
  return (customAttributes ?? {}) as Record<string, number>;
}

/** The environment `npm run worker` gets here: the bare server, the prebuilt bundle (no webpack per run). */
function workerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    TEMPORAL_ADDRESS: server.address,
    SUPPLIER_APP_KEY: 'sandbox-app',
    SUPPLIER_APP_SECRET: 'sandbox-secret',
    WORKER_WORKFLOW_BUNDLE: workflowBundle().codePath,
    LOG_LEVEL: 'WARN',
    ...extra,
  };
}

const WORKER_ARGS = ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'];

/** Starts the worker as `npm run worker` does; resolves once it says it polls, rejects if it exits first. */
async function startWorker(
  extra: Record<string, string>,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, WORKER_ARGS, { cwd: ROOT, env: workerEnv(extra) });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Worker polling')) resolve();
    });
    void exited.then((code) => reject(new Error(`worker exited with ${code} before polling:\n${output}`)));
  });
  return { child, output: () => output, exited };
}

async function pollers(taskQueue: string, type: temporal.api.enums.v1.TaskQueueType): Promise<unknown[]> {
  const queue = await env.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue },
    taskQueueType: type,
  });
  return queue.pollers ?? [];
}

describe('the worker on a namespace without the search attributes', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterEach(() => sandbox.close());

  test('registering on (the default): it registers both before polling; a booking confirms, is cancelled by an order run on demand, and both are found by them', async () => {
    for (const name of NAMES) expect(await customAttributes()).not.toHaveProperty(name);
    const taskQueue = `bare-on-${randomUUID().slice(0, 8)}`;
    const worker = await startWorker({ BOOKING_TASK_QUEUE: taskQueue, SUPPLIER_BASE_URL: sandbox.url });
    try {
      // Registered by the time it polls, each as Keyword.
      const registered = await customAttributes();
      for (const name of NAMES) expect(registered[name]).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      expect(worker.output()).toMatch(/Registered search attributes (BookingStage|CustomerReferenceNo), /);

      const request = bookingRequest({ test: 'confirmAfterMs=0&cancelAfterQueries=1' });
      const handle = await env.client.workflow.start('bookingWorkflow', {
        taskQueue,
        workflowId: bookingWorkflowId(request.customerReferenceNo),
        args: [request],
      });
      const outcome = (await handle.result()) as BookingOutcome;
      expect(outcome.kind).toBe('confirmed');
      // The upserts the bare server used to refuse are what an operator filters on.
      const found = await eventually(async () => {
        for await (const wf of env.client.workflow.list({
          query: `CustomerReferenceNo = "${request.customerReferenceNo}" AND BookingStage = "confirmed"`,
        }))
          return wf.workflowId;
        return undefined;
      });
      expect(found).toBe(handle.workflowId);

      // An order run started on demand on the same bare server: the client helper's Update-With-Start sets
      // CustomerReferenceNo, the run upserts its stage; quoted, then cancelled at the quoted fee.
      const ref = request.customerReferenceNo;
      const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue });
      if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
      expect((await awaitOrderOutcome(env.client, ref)).kind).toBe('quoted');
      const answer = await cancelBooking(
        env.client,
        ref,
        { confirm: true, acceptedFee: quote.quote.fee },
        { taskQueue },
      );
      expect(answer.kind).toBe('cancel-requested');
      expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
      const order = await eventually(async () => {
        for await (const wf of env.client.workflow.list({
          query: `CustomerReferenceNo = "${ref}" AND BookingStage = "order-cancelled"`,
        }))
          return wf.workflowId;
        return undefined;
      });
      expect(order).toBe(orderWorkflowId(ref));
      expect(worker.output()).not.toMatch(/BadSearchAttributes/);
    } finally {
      worker.child.kill('SIGTERM');
    }
    // SIGTERM is a graceful stop: the worker drains and exits 0.
    expect(await worker.exited).toBe(0);
  });

  test('registering off: it exits 1 at once naming each attribute and its command, and never polls', async () => {
    const taskQueue = `bare-off-${randomUUID().slice(0, 8)}`;
    const failed = await run(process.execPath, WORKER_ARGS, {
      cwd: ROOT,
      timeout: 60_000,
      env: workerEnv({
        WORKER_REGISTER_SEARCH_ATTRIBUTES: 'off',
        BOOKING_TASK_QUEUE: taskQueue,
        SUPPLIER_BASE_URL: sandbox.url,
      }),
    }).then(
      () => undefined,
      (err: { code?: number; signal?: string; stderr?: string; stdout?: string }) => err,
    );
    expect(failed).toMatchObject({ code: 1, signal: null });
    expect(failed?.stderr).toContain('lacks the search attributes the booking workflow writes');
    expect(failed?.stderr).toContain('WORKER_REGISTER_SEARCH_ATTRIBUTES=off');
    for (const name of NAMES) {
      expect(failed?.stderr).toContain(
        `temporal operator search-attribute create --namespace default --name ${name} --type Keyword`,
      );
    }
    expect(failed?.stdout).not.toMatch(/Worker polling/);
    // The server remembers pollers for minutes after their last poll: none ever polled any of its queues.
    expect(await pollers(taskQueue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)).toEqual([]);
    expect(await pollers(taskQueue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)).toEqual([]);
    expect(await pollers(queryOrdersTaskQueue(taskQueue), TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)).toEqual([]);
    for (const name of NAMES) expect(await customAttributes()).not.toHaveProperty(name);
  });
});

describe('npm run temporal:setup', () => {
  const setup = (args: string[] = [], extraEnv: Record<string, string> = {}) =>
    run('npm', ['run', '--silent', 'temporal:setup', ...(args.length > 0 ? ['--', ...args] : [])], {
      cwd: ROOT,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: server.address,
        ...extraEnv,
      },
    });

  test('prepares the namespace, a second run changes nothing, and --check then agrees', async () => {
    const check = await setup(['--check']).catch((e: { code?: number; stderr?: string }) => e);
    expect(check).toMatchObject({ code: 1 });
    expect((check as { stderr: string }).stderr).toContain('--check registers nothing');

    const first = await setup();
    expect(first.stdout).toMatch(/registered (BookingStage|CustomerReferenceNo), (BookingStage|CustomerReferenceNo)\n/);
    const registered = await customAttributes();
    for (const name of NAMES) expect(registered[name]).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);

    const second = await setup();
    expect(second.stdout).toMatch(
      /: (BookingStage|CustomerReferenceNo), (BookingStage|CustomerReferenceNo) already there; nothing to do/,
    );
    expect(second.stdout).not.toMatch(/registered/);
    await expect(setup(['--check'])).resolves.toMatchObject({ stdout: expect.stringMatching(/nothing to do/) });
  });

  test('a namespace that does not exist: exit 1, named, with the command that creates it', async () => {
    const failed = await setup([], { TEMPORAL_NAMESPACE: 'bookings-eu' }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('Temporal namespace "bookings-eu" does not exist');
    expect(failed?.stderr).toContain('temporal operator namespace create --namespace bookings-eu');
    // Nor was anything registered in the namespace that does exist.
    for (const name of NAMES) expect(await customAttributes()).not.toHaveProperty(name);
  });
});

describe('ensureTemporalReady over the worker connection', () => {
  test('a namespace that does not exist is a NamespaceNotFound naming it', async () => {
    const error = await ensureTemporalReady({
      services: env.nativeConnection,
      namespace: 'bookings-eu',
      register: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalSetupError);
    expect(error).toMatchObject({
      type: 'NamespaceNotFound',
      commands: ['temporal operator namespace create --namespace bookings-eu'],
    });
  });

  test('an attribute registered with another type is an error naming it, and nothing is registered', async () => {
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: { BookingStage: IndexedValueType.INDEXED_VALUE_TYPE_TEXT },
    });
    const error = await ensureTemporalReady({
      services: env.nativeConnection,
      namespace: 'default',
      register: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalSetupError);
    expect(error).toMatchObject({ type: 'SearchAttributeWrongType' });
    expect((error as Error).message).toContain(
      'has BookingStage as Text; the booking workflow writes BookingStage as Keyword',
    );
    expect((error as TemporalSetupError).commands).toContain(
      'temporal operator search-attribute remove --namespace default --name BookingStage',
    );
    expect(await customAttributes()).not.toHaveProperty('CustomerReferenceNo');
  });

  test('two workers starting together on a bare namespace both get ready', async () => {
    const both = await Promise.all(
      [1, 2].map(() => ensureTemporalReady({ services: env.nativeConnection, namespace: 'default', register: true })),
    );
    const registered = await customAttributes();
    for (const name of NAMES) expect(registered[name]).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    for (const ready of both) expect([...ready.present, ...ready.registered].sort()).toEqual([...NAMES].sort());
  });
});
