/**
 * `npm run worker` against the Java time-skipping test server, which teams use to test their callers against a
 * real worker. Its operator API does not implement ListSearchAttributes: the worker cannot verify the search
 * attributes there, so it says so once, with the commands that create them, and polls; with them created as it
 * advises, a booking confirms through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bookingWorkflowId, SEARCH_ATTRIBUTES, type BookingOutcome } from '../../src/api/contract/index';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { freePort } from '../../dev/temporal/dev-server';
import { bookingRequest } from '../harness/booking';
import { workflowBundle } from '../harness/temporal';

const ROOT = path.resolve(__dirname, '../..');
const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

let server: ChildProcess;
let address: string;
let connection: Connection;
let sandbox: Sandbox;

/** The Java test server on a port of its own, started as its cached launcher starts it (no 5 s start limit). */
beforeAll(async () => {
  const exe = resolveServerExecutable('test-server');
  if (exe.type !== 'existing-path') throw new Error('the Java test server is needed (npm run temporal:install)');
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  server = spawn(exe.path, [String(port)], { stdio: 'ignore' });
  connection = await connectWithin(address, 90_000);
  sandbox = await startSandbox({ port: 0 });
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await sandbox?.close();
  server?.kill('SIGTERM');
});

async function connectWithin(target: string, ms: number): Promise<Connection> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const c = await Connection.connect({ address: target, connectTimeout: 2_000 });
      await c.workflowService.getSystemInfo({});
      return c;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** `npm run worker` in a process group of its own, so stopping it stops npm, its shell and the worker. */
function startWorker(taskQueue: string): {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn('npm', ['run', '--silent', 'worker'], {
    cwd: ROOT,
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TZ: process.env.TZ ?? '',
      TEMPORAL_ADDRESS: address,
      BOOKING_TASK_QUEUE: taskQueue,
      SUPPLIER_BASE_URL: sandbox.url,
      SUPPLIER_APP_KEY: 'sandbox-app',
      SUPPLIER_APP_SECRET: 'sandbox-secret',
      WORKER_WORKFLOW_BUNDLE: workflowBundle().codePath,
      LOG_LEVEL: 'WARN',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function until(check: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('the worker warns once that it cannot verify the search attributes, names the commands, and polls', async () => {
  const taskQueue = `test-server-${randomUUID().slice(0, 8)}`;
  const worker = startWorker(taskQueue);
  let exitCode: number | null | undefined;
  void worker.exited.then((code) => (exitCode = code));
  try {
    await until(
      () => worker.stdout().includes('Worker polling') || exitCode !== undefined,
      90_000,
      () => `${worker.stdout()}\n${worker.stderr()}`,
    );
    expect({ exitCode, stderr: worker.stderr() }).toEqual({ exitCode: undefined, stderr: expect.any(String) });

    const warnings = worker.stderr().match(/\[WARN\] Could not verify[^\n]*/g) ?? [];
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'Could not verify that Temporal namespace "default" has the search attributes the booking workflow writes',
    );
    expect(warnings[0]).toContain('the service does not implement ListSearchAttributes (UNIMPLEMENTED)');
    for (const sa of SEARCH_ATTRIBUTES) {
      expect(worker.stderr()).toContain(
        `temporal operator search-attribute create --namespace default --name ${sa.name} --type ${sa.type}`,
      );
    }
    // The raw gRPC text the worker used to exit with is gone; the schedule it cannot create is one line, too.
    expect(worker.stderr()).not.toMatch(/OperatorService\/ListSearchAttributes is unimplemented/);
    expect(worker.stderr().match(/Reconciliation sweep schedule not set up/g) ?? []).toHaveLength(1);

    // Created as the warning advises (the call `temporal operator search-attribute create` makes), a booking
    // confirms through the worker: it was polling, not merely alive.
    await connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((sa) => [sa.name, KEYWORD])),
    });
    const request = bookingRequest({ test: 'confirmAfterMs=0' });
    const outcome = (await new Client({ connection }).workflow.execute('bookingWorkflow', {
      taskQueue,
      workflowId: bookingWorkflowId(request.customerReferenceNo),
      args: [request],
    })) as BookingOutcome;
    expect(outcome.kind).toBe('confirmed');
    expect(exitCode).toBeUndefined();
  } finally {
    if (exitCode === undefined) process.kill(-worker.child.pid!, 'SIGTERM');
    await worker.exited;
  }
}, 180_000);
