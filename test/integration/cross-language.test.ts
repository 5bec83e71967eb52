/**
 * Callers in other languages, with encryption on, as backend services use the orchestrator: payloads
 * encrypted by the TypeScript codec decrypt in Python and the reverse, the format's test vector holds, a
 * Python program starts a booking by name against the dev server and the project's worker and reads its
 * decrypted outcome, and so does the temporal CLI through the codec server. The Go client has its own file,
 * cross-language-go.test.ts. The clients are installed from the registries by scripts/install-clients.sh
 * (cached outside the clone).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bookingWorkflowId } from '../../src/contract';
import { ENCRYPTED_ENCODING } from '../../src/codec/encryption';
import { scanHistory } from '../../src/codec/scan';
import { startCodecServer } from '../../src/codec/server';
import { resolveServerExecutable } from '../../src/temporal/binaries';
import { connectDevServer } from '../harness/temporal';
import {
  bookingRequest,
  createBookingRig,
  expectAtMostOneOrderPerReference,
  type BookingRig,
} from '../harness/booking';
import { TEST_ENCRYPTION, testCodec, testDataConverter } from '../fixtures/encryption';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const VECTOR = JSON.parse(readFileSync(path.join(ROOT, 'clients/testdata/payload-encryption-vector.json'), 'utf8'));

/** The same keys the worker uses, as the variables every client reads. */
const KEYS_ENV = {
  PAYLOAD_ENCRYPTION_KEYS: [...TEST_ENCRYPTION.keys].map(([id, key]) => `${id}:${key.toString('base64')}`).join(','),
  PAYLOAD_ENCRYPTION_KEY_ID: TEST_ENCRYPTION.activeKeyId,
};

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let python: string;

beforeAll(async () => {
  const install = async (which: string) =>
    (await run('bash', ['scripts/install-clients.sh', which], { cwd: ROOT, timeout: 600_000 })).stdout
      .trim()
      .split('\n')
      .pop()!;
  python = await install('python');
  env = await connectDevServer();
  rig = await createBookingRig(env, 'cross-language', { dataConverter: testDataConverter() });
}, 900_000);
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** Payloads as JSON: metadata values and data in base64. */
type JsonPayload = { metadata: Record<string, string>; data: string };
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});
const plain = (text: string): Payload => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(text)),
});
const textOf = (p: Payload) => JSON.parse(Buffer.from(p.data!).toString()) as string;

/** Runs a round-trip program with `input` on stdin; returns its JSON answer. */
function roundTrip(
  command: string,
  args: string[],
  input: unknown,
): Promise<{ decoded: JsonPayload[]; encoded: JsonPayload[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...KEYS_ENV } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${command} exited ${code}: ${err}`)),
    );
    child.stdin.end(JSON.stringify(input));
  });
}

const implementations = () => [
  { language: 'Python', command: python, args: ['test/cross-language/python_codec_roundtrip.py'] },
];

test.each(['Python'])(
  '%s: decrypts what TypeScript encrypted, and TypeScript decrypts what it encrypted',
  async (language) => {
    const impl = implementations().find((i) => i.language === language)!;
    const codec = testCodec();
    const fromTs = await codec.encode([plain(`from TypeScript to ${language}`)]);
    const vectorOuter = {
      metadata: Object.fromEntries(
        Object.entries(VECTOR.outer.metadata as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v).toString('base64'),
        ]),
      ),
      data: Buffer.from(VECTOR.outer.dataHex, 'hex').toString('base64'),
    };
    const answer = await roundTrip(impl.command, impl.args, {
      decode: [...fromTs.map(toJson), vectorOuter],
      encode: [toJson(plain(`from ${language} to TypeScript`))],
    });
    const [mine, vector] = answer.decoded.map(fromJson);
    expect(textOf(mine!)).toBe(`from TypeScript to ${language}`);
    expect(Buffer.from(vector!.data!).toString()).toBe(VECTOR.inner.data);

    const theirs = answer.encoded.map(fromJson);
    expect(Buffer.from(theirs[0]!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(theirs[0]!.metadata!['encryption-key-id']!).toString()).toBe(TEST_ENCRYPTION.activeKeyId);
    const [back] = await codec.decode(theirs);
    expect(textOf(back!)).toBe(`from ${language} to TypeScript`);
  },
);

test('the TypeScript codec opens the format’s test vector', async () => {
  const [inner] = await testCodec().decode([
    {
      metadata: Object.fromEntries(
        Object.entries(VECTOR.outer.metadata as Record<string, string>).map(([k, v]) => [k, Buffer.from(v)]),
      ),
      data: Buffer.from(VECTOR.outer.dataHex, 'hex'),
    },
  ]);
  expect(Buffer.from(inner!.data!).toString()).toBe(VECTOR.inner.data);
});

test('the Python client’s own tests pass (codec rules and the test vector)', async () => {
  const { stderr } = await run(python, ['-m', 'unittest', 'discover', '-s', 'clients/python/tests'], { cwd: ROOT });
  expect(stderr).toMatch(/Ran \d+ tests[\s\S]*OK/);
});

describe('a Python program starts a booking by name and reads its decrypted outcome', () => {
  test('confirmed, one order, the input stored encrypted', async () => {
    const ref = crypto.randomUUID();
    const args = ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'confirmAfterMs=0'];
    const { stdout } = await run(python, args, {
      cwd: ROOT,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        TEMPORAL_ADDRESS: env.address,
        BOOKING_TASK_QUEUE: rig.taskQueue,
        ...KEYS_ENV,
      },
    });
    const outcome = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(outcome).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: 2 } });
    expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
    expectAtMostOneOrderPerReference(rig.sandbox);

    // What the server stored: the caller really encrypted its input (env.client has no codec).
    const raw = historyToJSON(await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory());
    const input = JSON.parse(raw).events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
    expect(Buffer.from(input.metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    expect(scanHistory(ref, raw, { secrets: [], personal: ['Traveller', 'demo@example.com'] })).toEqual([]);
  });
});

test('the temporal CLI with --codec-endpoint starts a booking and prints its outcome in clear', async () => {
  const exe = resolveServerExecutable('cli');
  if (exe.type !== 'existing-path') throw new Error('the Temporal CLI is needed (npm run temporal:install)');
  const codecServer = await startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: 'http://127.0.0.1:1' });
  try {
    const ref = crypto.randomUUID();
    const request = bookingRequest({ customerReferenceNo: ref, test: 'confirmAfterMs=0' });
    const { stdout } = await run(
      exe.path,
      [
        'workflow',
        'execute',
        '--address',
        env.address,
        '--codec-endpoint',
        codecServer.url,
        '--type',
        'bookingWorkflow',
        '--task-queue',
        rig.taskQueue,
        '--workflow-id',
        `booking:${ref}`,
        '--input',
        JSON.stringify(request),
        '--output',
        'json',
      ],
      { timeout: 60_000 },
    );
    expect((JSON.parse(stdout) as { result: { kind: string } }).result.kind).toBe('confirmed');
    const raw = historyToJSON(await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory());
    const input = JSON.parse(raw).events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
    expect(Buffer.from(input.metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
  } finally {
    await codecServer.close();
  }
});
