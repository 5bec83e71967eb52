/**
 * Secrets and personal data stay out of what operators, exports and backups see: bookings run with Ticket
 * credentials and payload encryption on the dev server; then every raw history (read without the key) and
 * every worker log line is scanned. The codec server decodes for the Web UI only, with CORS and a token.
 */
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { awaitOutcome, bookingWorkflowId, startBooking } from '../../src/api/client/index';
import { createEncryptionCodec } from '../../src/api/codec/encryption';
import { startCodecServer, type CodecServer } from '../../src/servers/codec/server';
import { scanHistory, scanLogLines } from '../../dev/codec/scan';
import { TEST_ENCRYPTION, testCodec, testDataConverter } from '../fixtures/encryption';
import { expectWorkerWarnings, workerLogLines } from '../harness/quiet-worker-logs';
import { connectDevServer, workflowBundle } from '../harness/temporal';
import { bookingRequest, createBookingRig, personalValues, type BookingRig } from '../harness/booking';

const APP_SECRET = 'sandbox-secret';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let client: Client;
let codecServer: CodecServer;
const UI_ORIGIN = 'http://127.0.0.1:8233';
const CODEC_TOKEN = 'codec-test-token-of-128-bits-or-more';

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'privacy', { dataConverter: testDataConverter() });
  client = new Client({ connection: env.connection, dataConverter: testDataConverter() });
  codecServer = await startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: UI_ORIGIN, token: CODEC_TOKEN });
});
afterAll(async () => {
  await codecServer?.close();
  await rig?.close();
  await env?.teardown();
});

/** Scenarios that put the most into history: errors with supplier messages, retries, recovery, rejection. */
const scenarios = [
  'confirmAfterMs=0',
  'book=504AfterCreate&confirmAfterQueries=2',
  'book=400',
  'checkAvail=503&checkAvailTimes=1&confirmAfterMs=0',
  'outcome=failed&confirmAfterQueries=1',
];
/** A supplier whose error text echoes a guest's name: it lands in the retried activity's last failure. */
const echoing = (lastName: string) => `checkAvail=500&checkAvailTimes=1&confirmAfterMs=0&faultMsg=${lastName}`;

test('raw histories and worker logs hold no secret and no personal data in clear', async () => {
  // The CheckAvail faults above fail one attempt each, which the SDK logs; hidden, they are still scanned.
  expectWorkerWarnings(/^WARN Activity failed .*"activityType":"check(RequestAnd)?Avail".*"httpStatus":50[03]/);
  const requests = [...scenarios, echoing(bookingRequest().holder.lastName)].map((test) =>
    bookingRequest({ test, recovery: { testing: true, delaysSeconds: [1] } }),
  );
  for (const request of requests) {
    await startBooking(client, request, { taskQueue: rig.taskQueue });
    await awaitOutcome(client, request.customerReferenceNo);
  }
  const needles = { secrets: [APP_SECRET], personal: personalValues(requests[0]!) };

  const hits = [];
  for (const request of requests) {
    // env.client has no codec: it reads what the server stores, as an export or a backup would.
    const workflowId = bookingWorkflowId(request.customerReferenceNo);
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    hits.push(...scanHistory(workflowId, historyToJSON(history), needles));
  }
  const logs = workerLogLines();
  expect(logs.length).toBeGreaterThan(0); // the scan read something: failed activities are logged
  hits.push(
    ...scanLogLines(
      logs.map((line, i) => ({ where: `worker log line ${i + 1}`, line })),
      needles,
    ),
  );
  expect(hits).toEqual([]);
});

test('the scan has teeth: a history or log line holding a secret, a ticket or a guest is caught', () => {
  const request = bookingRequest();
  const needles = { secrets: [APP_SECRET], personal: personalValues(request) };
  const leaked = JSON.stringify({ data: Buffer.from(JSON.stringify(request.holder)).toString('base64') });
  expect(scanHistory('planted', leaked, needles).length).toBeGreaterThan(0);
  const lines = [
    `Bearer eyJhbGciOiJI.eyJzdWIiOiJ4In0.c2lnbmF0dXJl`,
    `secret ${APP_SECRET}`,
    `guest ${request.holder.email}`,
  ];
  expect(
    scanLogLines(
      lines.map((line) => ({ where: 'planted', line })),
      needles,
    ),
  ).toHaveLength(3);
});

describe('codec server', () => {
  async function encryptedInputOf(): Promise<{ metadata: Record<string, string>; data: string }> {
    const request = bookingRequest({ test: 'confirmAfterMs=0' });
    await startBooking(client, request, { taskQueue: rig.taskQueue });
    await awaitOutcome(client, request.customerReferenceNo);
    const history = await env.client.workflow.getHandle(bookingWorkflowId(request.customerReferenceNo)).fetchHistory();
    const started = JSON.parse(historyToJSON(history)).events[0].workflowExecutionStartedEventAttributes;
    return started.input.payloads[0];
  }

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${codecServer.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${CODEC_TOKEN}`,
        origin: UI_ORIGIN,
        ...headers,
      },
      body: JSON.stringify(body),
    });

  test('decodes a stored payload for the Web UI origin with the token', async () => {
    const payload = await encryptedInputOf();
    const res = await post('/decode', { payloads: [payload] });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const { payloads } = (await res.json()) as { payloads: Array<{ data: string }> };
    const clear = Buffer.from(payloads[0]!.data, 'base64').toString('utf8');
    expect(JSON.parse(clear).holder.email).toBe(bookingRequest().holder.email);
  });

  test('refuses another origin, a missing token, and a bad body', async () => {
    const payload = await encryptedInputOf();
    expect((await post('/decode', { payloads: [payload] }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post('/decode', { payloads: [payload] }, { authorization: '' })).status).toBe(401);
    expect((await post('/decode', { nope: true })).status).toBe(400);
    const preflight = await fetch(`${codecServer.url}/decode`, { method: 'OPTIONS', headers: { origin: UI_ORIGIN } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
  });
});

test('keys rotate: a payload written with the old key still decrypts; an unknown key id is named', async () => {
  const oldOnly = createEncryptionCodec({ keys: TEST_ENCRYPTION.keys, activeKeyId: 'test-2026-01' });
  const [sealed] = await oldOnly.encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"a":1}') },
  ]);
  const [opened] = await testCodec().decode([sealed!]);
  expect(Buffer.from(opened!.data!).toString()).toBe('{"a":1}');

  const other = createEncryptionCodec({
    keys: new Map([['elsewhere', Buffer.alloc(32, 7)]]),
    activeKeyId: 'elsewhere',
  });
  await expect(other.decode([sealed!])).rejects.toThrow(/key "test-2026-01", which is not configured/);
});

test('an encrypted history replays with the key', async () => {
  const request = bookingRequest({
    test: 'book=504AfterCreate&confirmAfterQueries=2',
    recovery: { testing: true, delaysSeconds: [1] },
  });
  await startBooking(client, request, { taskQueue: rig.taskQueue });
  await awaitOutcome(client, request.customerReferenceNo);
  const workflowId = bookingWorkflowId(request.customerReferenceNo);
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      history,
      workflowId,
    ),
  ).resolves.toBeUndefined();
});
