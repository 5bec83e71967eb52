/**
 * `npm run book` when the Temporal service goes away mid-booking: it says so once, keeps trying for
 * --reconnect-seconds, and either follows the booking again once the service is back, or exits 3 saying
 * how to re-attach (and re-attaching with --ref works). On a dev server of this file's own, killed with
 * SIGKILL (a crash) and restarted on the same port and SQLite file, as `npm start` keeps its data.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startBooking, type BookingOutcome } from '../../src/api/client/index';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { freePort, startDevServer, type DevServer } from '../../dev/temporal/dev-server';
import {
  bookingRequest,
  createBookingRig,
  eventually,
  expectAtMostOneOrderPerReference,
  type BookingRig,
} from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

let dir: string;
let ports: { port: number; uiPort: number };
let server: DevServer;
let env: TestWorkflowEnvironment;
let rig: BookingRig;
const clis: ChildProcessWithoutNullStreams[] = [];

expectWorkerWarnings(
  // The worker's polls and completions fail while the server is down, and the SDK retries them: the point here.
  /^WARN gRPC call \w+ retried \d+ times/,
  // A QueryOrders poll that finished while the server was down is reported to a server that, back, retried it.
  /^WARN Activity not found on completion/,
);

async function startServer(): Promise<DevServer> {
  const exe = resolveServerExecutable('cli');
  if (exe.type !== 'existing-path') throw new Error('no Temporal CLI executable');
  return startDevServer({ cliPath: exe.path, ...ports, dbFile: path.join(dir, 'temporal.db'), logLevel: 'error' });
}

/** A crash, not a shutdown: nothing is flushed or said goodbye to. */
async function killServer(): Promise<void> {
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cli-reconnect-'));
  ports = { port: await freePort(), uiPort: await freePort() };
  server = await startServer();
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
  rig = await createBookingRig(env, 'cli-reconnect');
});
afterAll(async () => {
  for (const cli of clis) if (cli.exitCode === null) cli.kill('SIGKILL');
  await rig?.close();
  await env?.teardown();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

/** Encryption off explicitly: this rig's worker has none, whatever key a local `npm start` left in .data/. */
const cliEnv = () => ({ ...process.env, TEMPORAL_ADDRESS: server.address, PAYLOAD_ENCRYPTION_KEYS: '' });
const cliArgs = (args: string[]) => [
  require.resolve('ts-node/dist/bin'),
  '--transpile-only',
  'src/operators/cli/main.ts',
  ...args,
];

/** The CLI as a user runs it, its output read as it comes. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, cliArgs(args), { cwd: ROOT, env: cliEnv() });
  clis.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    /** Waits (boundedly) until the stream shows the pattern. */
    until: (stream: () => string, pattern: RegExp, timeoutMs = 30_000) =>
      eventually(async () => (pattern.test(stream()) ? true : undefined), timeoutMs),
    /** The exit code, waited for boundedly (the timer cleared after, or it would hold Jest open). */
    async exitCode(timeoutMs: number) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the CLI did not exit in ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A booking whose order stays pending (Confirming) until the test settles it, polled every 2 s. */
async function startRecoveringBooking() {
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { testing: true, delaysSeconds: [2], repeatEverySeconds: 2 },
  });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  return request.customerReferenceNo;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

test('the service does not come back in time: it says so once, exits 3, and --ref re-attaches later', async () => {
  const ref = await startRecoveringBooking();
  const cli = startCli(['--ref', ref, '--task-queue', rig.taskQueue, '--reconnect-seconds', '4']);
  await cli.until(cli.stdout, /stage=recovering/);

  await killServer();
  // With its output, so a failure says why.
  expect(`exit ${await cli.exitCode(60_000)}\n${cli.stderr()}`).toMatch(/^exit 3\n/);
  const lost = `lost the connection to Temporal at ${server.address}; retrying for up to 4 s`;
  expect(count(cli.stderr(), lost)).toBe(1);
  expect(cli.stderr()).toContain(`npm run book -- --ref ${ref}`);
  expect(cli.stderr()).toMatch(/gave up: Temporal at .* has not answered for 4 s/);
  expect(cli.stdout()).not.toContain('Outcome');

  // The booking lived on in the server's database: once it is back, --ref follows the same workflow.
  server = await startServer();
  rig.sandbox.setOrderStatus(ref, 2);
  const { stdout } = await run(
    process.execPath,
    cliArgs(['--ref', ref, '--task-queue', rig.taskQueue, '--json', '--scenario', 'confirmAfterMs=0']),
    { cwd: ROOT, env: cliEnv(), timeout: 90_000 },
  );
  expect((JSON.parse(stdout.trim().split('\n').pop()!) as BookingOutcome).kind).toBe('confirmed');
  expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
});

test('the service comes back within the window: it says so and the CLI ends with the outcome', async () => {
  const ref = await startRecoveringBooking();
  const cli = startCli(['--ref', ref, '--task-queue', rig.taskQueue, '--reconnect-seconds', '60']);
  await cli.until(cli.stdout, /stage=recovering/);

  await killServer();
  await cli.until(cli.stderr, /lost the connection to Temporal/);
  server = await startServer();
  await cli.until(cli.stderr, /connection to Temporal at .* is back after \d+ s/);
  rig.sandbox.setOrderStatus(ref, 2);

  expect(`exit ${await cli.exitCode(90_000)}\n${cli.stderr()}`).toMatch(/^exit 0\n/);
  expect(count(cli.stderr(), 'lost the connection to Temporal')).toBe(1);
  expect(cli.stdout()).toMatch(/Outcome: \{\s+"kind": "confirmed"/);
  expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
});
