/**
 * Mutual TLS on the production topology as `npm run stack:prod` runs it (PostgreSQL, two Temporal nodes with
 * `global.tls` from dev/prod/cluster.ts, certificates from dev/prod/certs.ts): a client without a
 * certificate, or with one from another CA, is refused before it can list or start anything, over both client
 * stacks (the TS client's grpc-js and the Rust core under workers and the Python and Go clients); the caller
 * certificate, given through Temporal's own TEMPORAL_TLS_* variables, books end to end with `npm run book`,
 * the client helper, the Python and Go clients and the `temporal` CLI; the Web UI server lists bookings with the
 * operator certificate.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  awaitOutcome,
  BookingStageKey,
  cancelBooking,
  connectClient,
  CustomerReferenceNoKey,
  startBooking,
  type BookingOutcome,
} from '../../src/api/client/index';
import { loadConfig } from '../../src/runtime/config/index';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { sandboxWorkerEnv, startWorkerFromEnv, type RunningWorker } from '../harness/prod-worker';
import { ensureCertificates, temporalTlsEnv, type StackCertificates } from '../../dev/prod/certs';
import { startProdCluster, waitForSearchAttributes, type ProdCluster } from '../../dev/prod/cluster';
import { startWebUi, webUiTlsFromEnv, type WebUi } from '../../dev/prod/ui';
import { freePort } from '../../dev/temporal/dev-server';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { bookingRequest } from '../harness/booking';
import { ClusterConnections } from '../harness/prod-connections';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

let dataDir: string;
let certs: StackCertificates;
let stranger: StackCertificates;
let cluster: ProdCluster;
let sandbox: Sandbox;
let ui: WebUi;
let worker: RunningWorker | undefined;
let callerEnv: Record<string, string>;
const taskQueue = `mtls-${randomUUID().slice(0, 8)}`;
/** The operator's connections (setup, counts), with the client's retries, each closed after its use. */
const connections = new ClusterConnections(() => ({ address: cluster.address, certs }));

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'booking-prod-mtls-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the folder (mkdtemp makes it 0700).
  chmodSync(dataDir, 0o755);
  certs = ensureCertificates(path.join(dataDir, 'certs'), { caDir: path.join(dataDir, 'ca') });
  stranger = ensureCertificates(path.join(dataDir, 'stranger'), { caName: 'Someone else' });
  cluster = await startProdCluster({ dataDir, frontendPort: 0, basePort: 0, postgresPort: 0, tls: certs, log() {} });
  const setup = await connections.connectAs('operator', { retry: true });
  try {
    await ensureTemporalReady({ services: setup, namespace: cluster.namespace, register: true });
  } finally {
    await setup.close();
  }
  await waitForSearchAttributes(cluster, [CustomerReferenceNoKey.name, BookingStageKey.name]);
  sandbox = await startSandbox({ port: 0 });
  callerEnv = {
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: cluster.namespace,
    ...temporalTlsEnv(certs, 'caller'),
    BOOKING_TASK_QUEUE: taskQueue,
    PAYLOAD_ENCRYPTION_KEYS: '',
  };
  // The worker as `npm run worker` builds it: its connection comes from the TEMPORAL_TLS_* variables alone, with the
  // workers' certificate (only a worker takes tasks).
  worker = await startWorkerFromEnv({
    ...callerEnv,
    ...temporalTlsEnv(certs, 'worker'),
    ...sandboxWorkerEnv(sandbox.url),
  });
  ui = await startWebUi({
    dataDir,
    port: await freePort(),
    temporalAddress: cluster.address,
    namespace: cluster.namespace,
    tls: webUiTlsFromEnv(temporalTlsEnv(certs, 'operator')),
  });
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  await connections.closeAll();
  await ui?.stop();
  await sandbox?.close();
  await cluster?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** TLS that trusts the stack's CA, with the client certificate `pair` or none. */
function tlsWith(pair?: { cert: string; key: string }): ConnectionOptions['tls'] {
  const { TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME } = temporalTlsEnv(certs, 'caller');
  const env = {
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH,
    TEMPORAL_TLS_SERVER_NAME,
    ...(pair ? { TEMPORAL_TLS_CLIENT_CERT_PATH: pair.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: pair.key } : {}),
    SUPPLIER_TOKEN: 'unused',
  };
  return loadConfig(env).temporal.connection.tls;
}

/** The error's message and its cause's: the handshake's reason sits in the cause of a failed start. */
function reason(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return `${e.message ?? String(err)} ${e.cause?.message ?? ''}`;
}

/**
 * What a TS client (grpc-js) with these TLS settings gets for listing and for starting a booking: 'accepted'
 * or the reason it was refused.
 */
async function tsClientAttempts(
  tls: ConnectionOptions['tls'],
): Promise<{ list: string; start: string; cancel: string }> {
  // No retry interceptor: the refusal itself is the answer, not a deadline after retries.
  const connection = Connection.lazy({
    address: cluster.address,
    interceptors: [],
    ...(tls !== undefined ? { tls } : {}),
  });
  const client = new Client({ connection, namespace: cluster.namespace });
  const attempt = (call: () => Promise<unknown>) =>
    connection.withDeadline(Date.now() + 10_000, call).then(() => 'accepted', reason);
  try {
    return {
      list: await attempt(() =>
        connection.workflowService.listWorkflowExecutions({ namespace: cluster.namespace, pageSize: 1 }),
      ),
      start: await attempt(() => startBooking(client, bookingRequest({ test: 'confirmAfterMs=0' }), { taskQueue })),
      // An update-with-start of an order run: what a stranger would send to cancel someone's booking.
      cancel: await attempt(() => cancelBooking(client, randomUUID(), { confirm: false }, { taskQueue })),
    };
  } finally {
    await connection.close();
  }
}

/** The same through the Rust core (workers; the Python and Go clients' stack is alike): 'accepted' or the reason. */
async function nativeAttempt(tls: ConnectionOptions['tls']): Promise<string> {
  return NativeConnection.connect({ address: cluster.address, ...(tls !== undefined ? { tls } : {}) }).then(
    async (connection) => {
      const listed = await connection.workflowService
        .listWorkflowExecutions({ namespace: cluster.namespace, pageSize: 1 })
        .then(() => 'accepted', reason);
      await connection.close();
      return listed;
    },
    reason,
  );
}

async function workflowCount(): Promise<number> {
  const connection = await connections.connectAs('operator', { retry: true });
  try {
    const { count } = await connection.workflowService.countWorkflowExecutions({ namespace: cluster.namespace });
    return Number(count);
  } finally {
    await connection.close();
  }
}

// Each refusal is at the handshake: the server's alert (certificate required, unknown CA) is usually in the
// message, but under TLS 1.3 a client may see the closed connection first, so the tests hold to what is certain:
// the call fails as unavailable, nothing was started, and the control below gets through on the same settings
// with the stack's certificate.
describe('refused', () => {
  test('a plaintext client cannot list, start or cancel a booking', async () => {
    const before = await workflowCount();
    const { list, start, cancel } = await tsClientAttempts(undefined);
    expect(list).toMatch(/UNAVAILABLE/);
    expect(start).toMatch(/UNAVAILABLE/);
    expect(cancel).toMatch(/UNAVAILABLE/);
    expect(await nativeAttempt(undefined)).toMatch(/tonic::transport::Error/);
    expect(await workflowCount()).toBe(before);
  });

  test('a TLS client without a certificate cannot list, start or cancel a booking', async () => {
    const before = await workflowCount();
    const { list, start, cancel } = await tsClientAttempts(tlsWith(undefined));
    expect(list).toMatch(/UNAVAILABLE/);
    expect(start).toMatch(/UNAVAILABLE/);
    expect(cancel).toMatch(/UNAVAILABLE/);
    expect(await nativeAttempt(tlsWith(undefined))).toMatch(/tonic::transport::Error/);
    expect(await workflowCount()).toBe(before);
  });

  test('a client with a certificate from another CA cannot list, start or cancel a booking', async () => {
    const before = await workflowCount();
    const { list, start, cancel } = await tsClientAttempts(tlsWith(stranger.clients.caller));
    expect(list).toMatch(/UNAVAILABLE/);
    expect(start).toMatch(/UNAVAILABLE/);
    expect(cancel).toMatch(/UNAVAILABLE/);
    expect(await nativeAttempt(tlsWith(stranger.clients.caller))).toMatch(/tonic::transport::Error/);
    expect(await workflowCount()).toBe(before);
  });

  test('the caller certificate over the same two client stacks is accepted (the control for the three above)', async () => {
    expect(await tsClientAttempts(tlsWith(certs.clients.caller))).toEqual({
      list: 'accepted',
      start: 'accepted',
      // Through to the order run, which answers for a reference no booking of its namespace made.
      cancel: expect.stringMatching(/The order cannot be cancelled: no booking of this namespace has this reference/),
    });
    expect(await nativeAttempt(tlsWith(certs.clients.caller))).toBe('accepted');
  });

  test('the temporal CLI without the certificate variables cannot list', async () => {
    const refused = await run(temporalCli(), ['workflow', 'list', '--limit', '1'], {
      env: { ...process.env, TEMPORAL_ADDRESS: cluster.address, TEMPORAL_NAMESPACE: cluster.namespace },
      timeout: 30_000,
    }).then(
      () => false,
      () => true,
    );
    expect(refused).toBe(true);
  });
});

describe('the caller certificate, through TEMPORAL_TLS_* variables', () => {
  test('the client helper starts a booking and it is confirmed (worker on the same variables)', async () => {
    const client = await connectClient(callerEnv);
    try {
      const request = bookingRequest({ test: 'confirmAfterMs=0' });
      await startBooking(client, request, { taskQueue });
      expect((await awaitOutcome(client, request.customerReferenceNo)).kind).toBe('confirmed');
    } finally {
      await client.connection.close();
    }
  });

  test('npm run book -- --json books and prints confirmed', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        require.resolve('ts-node/dist/bin'),
        '--transpile-only',
        'src/operators/cli/main.ts',
        '--json',
        '--task-queue',
        taskQueue,
        '--scenario',
        'confirmAfterMs=0',
      ],
      { cwd: ROOT, env: { ...process.env, ...callerEnv }, timeout: 90_000 },
    );
    expect((JSON.parse(stdout.trim().split('\n').pop()!) as BookingOutcome).kind).toBe('confirmed');
  });

  test('the temporal CLI lists the bookings', async () => {
    const { stdout } = await run(temporalCli(), ['workflow', 'list', '--output', 'json'], {
      env: { ...process.env, ...callerEnv },
      timeout: 30_000,
    });
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ taskQueue })]));
  });
});

describe('the Python and Go clients, with the same variables', () => {
  /** Builds (or finds cached) a client program: scripts/install-clients.sh prints its path last. */
  const installed = async (which: 'python' | 'go') => {
    const { stdout } = await run('bash', ['scripts/install-clients.sh', which], { cwd: ROOT, timeout: 900_000 });
    return stdout.trim().split('\n').pop()!;
  };
  /** Runs a client with PATH and the caller's variables only; its last stdout line is the outcome as JSON. */
  const book = async (file: string, args: string[]) => {
    const { stdout } = await run(file, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...callerEnv },
      timeout: 90_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as BookingOutcome;
  };

  test('python -m hotel_booking_client.book books and prints confirmed', async () => {
    const python = await installed('python');
    const ref = randomUUID();
    const outcome = await book(python, [
      '-m',
      'hotel_booking_client.book',
      '--ref',
      ref,
      '--scenario',
      'confirmAfterMs=0',
    ]);
    expect(outcome.kind).toBe('confirmed');
  }, 900_000);

  test('the Go client (cmd/book) books and prints confirmed', async () => {
    const goBook = await installed('go');
    const ref = randomUUID();
    const outcome = await book(goBook, ['-ref', ref, '-scenario', 'confirmAfterMs=0']);
    expect(outcome.kind).toBe('confirmed');
  }, 900_000);
});

test('the Web UI server reaches Temporal with the operator certificate and lists the bookings', async () => {
  const response = await fetch(`${ui.url}/api/v1/namespaces/${cluster.namespace}/workflows?query=`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { executions?: Array<{ taskQueue?: string }> };
  expect(body.executions).toEqual(expect.arrayContaining([expect.objectContaining({ taskQueue })]));
});

test('a second start keeps the CA and every certificate (the exported paths stay valid)', () => {
  const files = [certs.ca, certs.server, ...Object.values(certs.clients)].flatMap((p) => [p.cert, p.key]);
  const before = files.map((f) => readFileSync(f, 'utf8'));
  const again = ensureCertificates(certs.dir, { caDir: certs.caDir });
  expect(again).toEqual(certs);
  expect(files.map((f) => readFileSync(f, 'utf8'))).toEqual(before);
});

/** Refused by the server's authorizer: PERMISSION_DENIED (gRPC code 7), in the error or its cause. */
async function expectDenied(attempt: Promise<unknown>): Promise<void> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeDefined();
  const chain = [err, (err as { cause?: unknown }).cause] as Array<{ code?: number; message?: string } | undefined>;
  expect(
    chain.some(
      (e) => e?.code === 7 || /needs an operator certificate|PermissionDenied|unauthorized/i.test(e?.message ?? ''),
    ),
  ).toBe(true);
}

/** A client with the stack's `role` certificate, through the same TEMPORAL_TLS_* variables the README exports. */
function clientAs(role: 'caller' | 'operator'): Promise<Client> {
  return connectClient({ ...callerEnv, ...temporalTlsEnv(certs, role) });
}

// The nodes run dev/temporal/authz-server: roles from the certificate's OU, terminate/reset/delete for operators.
test('a caller certificate cannot terminate, reset or delete a booking; an operator certificate can', async () => {
  const caller = await clientAs('caller');
  const operator = await clientAs('operator');
  try {
    // A booking parked in recovery (Book answered 504, the order stays pending): open, and worth protecting.
    const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500' });
    const handle = await startBooking(caller, request, { taskQueue });
    const byCaller = caller.workflow.getHandle(handle.workflowId);
    await expectDenied(byCaller.terminate('a caller tries'));
    const { runId } = await byCaller.describe();
    await expectDenied(
      caller.workflowService.resetWorkflowExecution({
        namespace: cluster.namespace,
        workflowExecution: { workflowId: handle.workflowId, runId },
        workflowTaskFinishEventId: Long.fromNumber(3),
        requestId: randomUUID(),
        reason: 'a caller tries',
      }),
    );
    await expectDenied(
      caller.workflowService.deleteWorkflowExecution({
        namespace: cluster.namespace,
        workflowExecution: { workflowId: handle.workflowId, runId },
      }),
    );
    // Still running: nothing the caller tried took effect.
    expect((await byCaller.describe()).status.name).toBe('RUNNING');

    // What a caller does is allowed: query, signal-free reads and the booking's own update-with-start (cancel).
    expect((await byCaller.query('bookingState')) as { customerReferenceNo: string }).toMatchObject({
      customerReferenceNo: request.customerReferenceNo,
    });

    await operator.workflow.getHandle(handle.workflowId).terminate('an operator ends the test booking');
    expect((await operator.workflow.getHandle(handle.workflowId).describe()).status.name).toBe('TERMINATED');
  } finally {
    await caller.connection.close();
    await operator.connection.close();
  }
}, 60_000);

function temporalCli(): string {
  const exe = resolveServerExecutable('cli');
  if (exe.type !== 'existing-path') throw new Error('no Temporal CLI executable');
  return exe.path;
}
