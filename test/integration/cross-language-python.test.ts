/**
 * A Python service calling the orchestrator with encryption on, as partners will: the Python client
 * (clients/python, installed from PyPI into a cached venv by scripts/install-clients.sh) and the workers'
 * TypeScript codec read each other's payloads; Python programs start bookings by name on the dev server
 * against the project's encrypting worker and read the decrypted outcome; and the raw history shows that
 * Python really encrypted what it sent. The package's own unit tests run here too, so `npm test` runs them.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  bookingWorkflowId,
  CustomerReferenceNoKey,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
} from '../../src/api/contract/index';
import { createEncryptionCodec, ENCRYPTED_ENCODING } from '../../src/api/codec/encryption';
import { scanHistory } from '../../dev/codec/scan';
import { connectDevServer } from '../harness/temporal';
import { createBookingRig, type BookingRig } from '../harness/booking';
import { expectExit, pathOnly, runProgram, type ProgramRun } from '../harness/program';
import { TEST_ENCRYPTION, testCodec, testDataConverter } from '../fixtures/encryption';
import {
  ASK_AGAIN_ANSWERS,
  EXECUTE_MULTI_OPERATION,
  START_WORKFLOW_EXECUTION,
  startAnswerProxy,
  type AnswerProxy,
} from '../fixtures/grpc-answer-proxy';

const ROOT = path.resolve(__dirname, '../..');
const [OLD_KEY_ID, ACTIVE_KEY_ID] = [...TEST_ENCRYPTION.keys.keys()] as [string, string];
const keysEnv = (ids: string[]) =>
  ids.map((id) => `${id}:${TEST_ENCRYPTION.keys.get(id)!.toString('base64')}`).join(',');
/** The workers' keys, as the variables the Python client reads (the active one last, as the default). */
const KEYS_ENV = { PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID, ACTIVE_KEY_ID]) };
/** The demo traveller of hotel_booking_client.book: what must never be readable in history. */
const DEMO_PERSONAL = ['Traveller', 'demo@example.com', '5550100'];

let python: string;
let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  // Cached after the first run (a venv outside the clone, keyed on clients/python's files).
  const { stdout } = await promisify(execFile)('bash', ['scripts/install-clients.sh', 'python'], {
    cwd: ROOT,
    timeout: 600_000,
  });
  python = stdout.trim().split('\n').pop()!;
  env = await connectDevServer();
  rig = await createBookingRig(env, 'cross-language-python', { dataConverter: testDataConverter() });
}, 660_000);

afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** Runs the venv's python with only the variables given (nothing inherited that could change its keys). */
const runPython = (args: string[], vars: Record<string, string>, stdin = ''): Promise<ProgramRun> =>
  runProgram(python, args, { env: { ...pathOnly(), ...vars }, cwd: ROOT, stdin });

/** The variables a Python caller of this rig's worker needs. */
const callerEnv = (keys: Record<string, string> = KEYS_ENV) => ({
  TEMPORAL_ADDRESS: env.address,
  BOOKING_TASK_QUEUE: rig.taskQueue,
  ...keys,
});

/** The last stdout line as JSON: the programs print their outcome last. */
const lastJson = (run: ProgramRun) => JSON.parse(run.stdout.trim().split('\n').pop()!);

// Payloads cross the process boundary as JSON: metadata values and data in base64.
type JsonPayload = { metadata: Record<string, string>; data: string };
const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
  data: b64(p.data),
});
const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});
const jsonPayload = (value: unknown): Payload => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});
const metadataText = (p: Payload, key: string) => Buffer.from(p.metadata![key]!).toString();

/** Decodes `decode` and encodes `encode` with EncryptionCodec.from_env(); answers on stdout. */
const PYTHON_CODEC = `
import asyncio, base64, json, sys
from temporalio.api.common.v1 import Payload
from hotel_booking_client import EncryptionCodec

def load(p):
    return Payload(metadata={k: base64.b64decode(v) for k, v in p["metadata"].items()}, data=base64.b64decode(p["data"]))

def dump(p):
    return {"metadata": {k: base64.b64encode(v).decode() for k, v in p.metadata.items()}, "data": base64.b64encode(p.data).decode()}

async def main():
    codec = EncryptionCodec.from_env()
    job = json.load(sys.stdin)
    decoded = await codec.decode([load(p) for p in job["decode"]])
    encoded = await codec.encode([load(p) for p in job["encode"]])
    json.dump({"decoded": [dump(p) for p in decoded], "encoded": [dump(p) for p in encoded]}, sys.stdout)

asyncio.run(main())
`;

async function pythonCodec(
  job: { decode: Payload[]; encode: Payload[] },
  keys: Record<string, string> = KEYS_ENV,
): Promise<{ decoded: Payload[]; encoded: Payload[] }> {
  const input = JSON.stringify({ decode: job.decode.map(toJson), encode: job.encode.map(toJson) });
  const run = await runPython(['-c', PYTHON_CODEC], keys, input);
  expectExit(run, 0, 'python');
  const answer = JSON.parse(run.stdout) as { decoded: JsonPayload[]; encoded: JsonPayload[] };
  return { decoded: answer.decoded.map(fromJson), encoded: answer.encoded.map(fromJson) };
}

/** The history as the server stores it: env.client has no codec. */
async function rawHistory(ref: string) {
  const history = await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  const completed = history.events!.find(
    (e) => e.workflowExecutionCompletedEventAttributes,
  )!.workflowExecutionCompletedEventAttributes!;
  return { json: historyToJSON(history), input: started.input!.payloads![0]!, result: completed.result!.payloads![0]! };
}

const ordersFor = (ref: string) => rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref);

describe('payloads between the TypeScript and Python codecs', () => {
  const guest = { holder: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } };

  test('Python opens what TypeScript sealed, with either key; TypeScript opens what Python sealed', async () => {
    const oldCodec = createEncryptionCodec({ keys: TEST_ENCRYPTION.keys, activeKeyId: OLD_KEY_ID });
    const [fromTs] = await testCodec().encode([jsonPayload(guest)]);
    const [fromTsOldKey] = await oldCodec.encode([jsonPayload('written before the rotation')]);
    const plain = jsonPayload('written before encryption was on');

    const { decoded, encoded } = await pythonCodec({
      decode: [fromTs!, fromTsOldKey!, plain],
      encode: [jsonPayload(guest)],
    });

    // Each decoded payload is the original, metadata included: the inner payload travels whole.
    expect(decoded).toEqual([jsonPayload(guest), jsonPayload('written before the rotation'), plain]);
    const [sealed] = encoded;
    expect(metadataText(sealed!, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(metadataText(sealed!, 'encryption-key-id')).toBe(ACTIVE_KEY_ID);
    expect(Buffer.from(sealed!.data!).toString('latin1')).not.toContain('Lovelace');
    // 12-byte nonce, the inner payload's protobuf, 16-byte tag.
    expect(sealed!.data!.length).toBe(
      12 + temporal.api.common.v1.Payload.encode(jsonPayload(guest)).finish().length + 16,
    );
    expect((await testCodec().decode([sealed!])).map(toJson)).toEqual([toJson(jsonPayload(guest))]);
  });

  test('a key id Python lacks is named in its error, and no key material is printed', async () => {
    const [fromTs] = await testCodec().encode([jsonPayload(guest)]);
    const run = await runPython(
      ['-c', PYTHON_CODEC],
      { PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID]) },
      JSON.stringify({ decode: [toJson(fromTs!)], encode: [] }),
    );
    expectExit(run, 1, 'python');
    expect(run.stderr).toContain(`UnknownEncryptionKeyError: Payload encrypted with key "${ACTIVE_KEY_ID}"`);
    for (const key of TEST_ENCRYPTION.keys.values()) expect(run.stderr).not.toContain(key.toString('base64'));
  });
});

test('the Python package’s own tests pass: codec rules, the format’s test vector, types against schema/', async () => {
  const run = await runPython(['-m', 'unittest', 'discover', '-s', 'clients/python/tests'], {});
  expectExit(run, 0, 'python');
  const ran = Number(/Ran (\d+) tests?/.exec(run.stderr)?.[1]);
  expect(ran).toBeGreaterThanOrEqual(20);
  expect(run.stderr).toMatch(/\nOK\n/);
  expect(run.stderr).not.toMatch(/skipped/);
});

describe('a Python program books by name on the dev server, with the encrypting worker', () => {
  test('python -m hotel_booking_client.book: confirmed, one order, everything it stored encrypted', async () => {
    const ref = randomUUID();
    const run = await runPython(
      ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'confirmAfterMs=0'],
      callerEnv(),
    );
    expectExit(run, 0, 'python');
    expect(lastJson(run)).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: 2 } });
    expect(ordersFor(ref)).toHaveLength(1);

    const raw = await rawHistory(ref);
    for (const payload of [raw.input, raw.result]) {
      expect(metadataText(payload, 'encoding')).toBe(ENCRYPTED_ENCODING);
      expect(metadataText(payload, 'encryption-key-id')).toBe(ACTIVE_KEY_ID);
    }
    expect(scanHistory(ref, raw.json, { secrets: [], personal: DEMO_PERSONAL })).toEqual([]);
    // What Python sealed is the request it meant: the worker's codec opens it to the demo traveller.
    const [input] = await testCodec().decode([raw.input]);
    expect(JSON.parse(Buffer.from(input!.data!).toString())).toMatchObject({
      customerReferenceNo: ref,
      holder: { lastName: 'Traveller', email: 'demo@example.com' },
      context: { test: 'confirmAfterMs=0' },
    });
    // The start helper's search attribute, for finding the booking in the Web UI.
    const described = await env.client.workflow.getHandle(bookingWorkflowId(ref)).describe();
    expect(described.typedSearchAttributes.get(CustomerReferenceNoKey)).toBe(ref);
  });

  test('starting again with the reference, during the booking and after it, never books twice', async () => {
    const ref = randomUUID();
    // Book answers after 1 s, so the second start lands while the first booking runs.
    const args = ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'bookDelayMs=1000&confirmAfterMs=0'];
    const [first, second] = await Promise.all([runPython(args, callerEnv()), runPython(args, callerEnv())]);
    const after = await runPython(args, callerEnv());

    for (const run of [first!, second!, after]) expectExit(run, 0, 'python');
    expect(lastJson(first!)).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref } });
    expect(lastJson(second!)).toEqual(lastJson(first!));
    expect(lastJson(after)).toEqual(lastJson(first!));
    expect(ordersFor(ref)).toHaveLength(1);
    const runs = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = "${bookingWorkflowId(ref)}"` }))
      runs.push(execution.runId);
    expect(runs).toHaveLength(1);
  });

  test('the example in clients/python/README.md works as written', async () => {
    const readme = readFileSync(path.join(ROOT, 'clients/python/README.md'), 'utf8');
    const example = /```python\n([\s\S]*?)```/.exec(readme)![1]!;
    const run = await runPython(['-'], callerEnv(), example);
    expectExit(run, 0, 'python');
    expect(run.stderr).toBe('');
    const outcome = lastJson(run);
    expect(outcome).toMatchObject({ kind: 'confirmed', order: { status: 2 } });
    const ref = outcome.order.customerReferenceNo as string;
    expect(ordersFor(ref)).toHaveLength(1);
    const raw = await rawHistory(ref);
    expect(metadataText(raw.input, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(scanHistory(ref, raw.json, { secrets: [], personal: ['Lovelace', 'ada@example.com'] })).toEqual([]);
  });

  test('a caller without the workers’ active key is told which key id it lacks', async () => {
    // Before a rotation reaches the caller: it still seals with the old key, which the worker reads,
    // but the outcome comes back under the new one.
    const ref = randomUUID();
    const run = await runPython(
      ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'confirmAfterMs=0'],
      callerEnv({ PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID]) }),
    );
    expectExit(run, 1, 'python');
    // One line saying what to fix, not a traceback.
    expect(run.stderr).toContain(`Payload encrypted with key "${ACTIVE_KEY_ID}", which is not configured`);
    expect(run.stderr).not.toContain('Traceback');
    for (const key of TEST_ENCRYPTION.keys.values()) expect(run.stderr).not.toContain(key.toString('base64'));
    expect(ordersFor(ref)).toHaveLength(1);
    const raw = await rawHistory(ref);
    expect(metadataText(raw.input, 'encryption-key-id')).toBe(OLD_KEY_ID);
  });

  test('a caller without keys is told to set them; what it sent is the one thing stored in clear', async () => {
    const ref = randomUUID();
    const run = await runPython(
      ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'confirmAfterMs=0'],
      callerEnv({}),
    );
    expectExit(run, 1, 'python');
    expect(run.stderr).toContain("PAYLOAD_ENCRYPTION_KEYS is not set: the booking's input is stored unencrypted");
    expect(run.stderr).toContain('The outcome is encrypted (binary/encrypted): set PAYLOAD_ENCRYPTION_KEYS');
    expect(run.stderr).not.toContain('Traceback');
    const raw = await rawHistory(ref);
    expect(metadataText(raw.input, 'encoding')).toBe('json/plain');
    expect(metadataText(raw.result, 'encoding')).toBe(ENCRYPTED_ENCODING);
  });
});

/** Quotes, cancels at the quoted fee and waits for the order's end, with the package's helpers; prints all three. */
const PYTHON_CANCEL = `
import json, sys
from hotel_booking_client import await_order_outcome, cancel_booking, connect, quote_cancellation, run_and_exit

async def main():
    client = await connect()
    ref = sys.argv[1]
    quote = await quote_cancellation(client, ref)
    answer = await cancel_booking(client, ref, {"confirm": True, "acceptedFee": quote["quote"]["fee"], "reason": "guest changed plans"})
    outcome = await await_order_outcome(client, ref)
    print(json.dumps({"quote": quote, "answer": answer, "outcome": outcome}))

run_and_exit(main())
`;

/** The order runs of a reference (one per piece of work), oldest first. */
async function orderRuns(ref: string) {
  const runs = [];
  for await (const w of env.client.workflow.list({ query: `WorkflowId = '${orderWorkflowId(ref)}'` })) runs.push(w);
  return runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
}

/** Each order run was started by the client's Update-With-Start as documented: type, queue, search attribute. */
async function expectStartedByTheClient(ref: string): Promise<void> {
  const runs = await orderRuns(ref);
  expect(runs.length).toBeGreaterThanOrEqual(1);
  for (const run of runs) {
    expect(run.type).toBe(ORDER_WORKFLOW_TYPE);
    expect(run.taskQueue).toBe(rig.taskQueue);
    expect(run.typedSearchAttributes.get(CustomerReferenceNoKey)).toBe(ref);
  }
  // The summary is a payload like any other: the caller's codec sealed it, the workers' opens it.
  const decoding = new Client({ connection: env.client.connection, dataConverter: testDataConverter() });
  const described = await decoding.workflow.getHandle(orderWorkflowId(ref), runs[0]!.runId).describe();
  expect(await described.staticSummary()).toBe(`Order · ref ${ref}`);
}

/** Books with the package's book program (past free cancellation); no order workflow follows the booking. */
async function confirmedByPython(ref: string, scenario = 'confirmAfterMs=0&freeCancel=0') {
  const booked = await runPython(
    ['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', scenario],
    callerEnv(),
  );
  expectExit(booked, 0, 'python');
  const confirmed = lastJson(booked);
  expect(confirmed).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: 2 } });
  // On demand: a confirmed booking starts no order workflow; the cancel helpers start one.
  await expect(env.client.workflow.getHandle(orderWorkflowId(ref)).describe()).rejects.toThrow(/not found/i);
  return confirmed;
}

test('a Python program cancels a confirmed booking no order workflow follows: the fee quoted, accepted, charged, and the order Cancelled', async () => {
  const ref = randomUUID();
  // Past free cancellation (freeCancel=0): the policy's fee applies; the Cancel settles at once.
  const confirmed = await confirmedByPython(ref);

  const run = await runPython(['-', ref], callerEnv(), PYTHON_CANCEL);
  expectExit(run, 0, 'python');
  const { quote, answer, outcome } = lastJson(run);
  expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'policy', fee: { currency: 'USD' } } });
  const fee = quote.quote.fee as { currency: string; amount: number };
  // The sandbox's policy past free cancellation: half the price.
  expect(fee.amount).toBeCloseTo(confirmed.order.price.amount / 2, 1);
  expect(answer).toEqual({ kind: 'cancel-requested', quote: quote.quote, serviceFee: fee, ambiguous: false });
  expect(outcome).toMatchObject({
    kind: 'cancelled',
    order: { customerReferenceNo: ref, status: 3 },
    cancellation: { origin: 'caller', reason: 'guest changed plans', serviceFee: fee },
  });
  expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);
  await expectStartedByTheClient(ref);
});

/**
 * cancel_at_quoted_fee over its limit, a fee that is not the fee now, a reference with no order: the task queue
 * as an argument (no BOOKING_TASK_QUEUE); a failed update prints its error type and the workflow's reason.
 */
const PYTHON_REFUSALS = `
import json, sys
from temporalio.client import WorkflowUpdateFailedError
from hotel_booking_client import cancel_at_quoted_fee, cancel_booking, connect, run_and_exit

async def failure(call):
    try:
        return {"answer": await call}
    except WorkflowUpdateFailedError as error:
        return {"error": type(error).__name__, "reason": str(error.cause)}

async def main():
    client = await connect()
    booked, unknown, queue = sys.argv[1:4]
    usd1 = {"amount": 1, "currency": "USD"}
    over = await cancel_at_quoted_fee(client, booked, max_fee=usd1, task_queue=queue)
    changed = await failure(cancel_booking(client, booked, {"confirm": True, "acceptedFee": usd1}, task_queue=queue))
    none = await failure(cancel_booking(client, unknown, {"confirm": False}, task_queue=queue))
    print(json.dumps({"over": over, "changed": changed, "none": none}))

run_and_exit(main())
`;

test('Python cancel helpers that must not cancel: over max_fee, a changed fee, no order (the update fails with the reason)', async () => {
  const [ref, unknown] = [randomUUID(), randomUUID()];
  await confirmedByPython(ref);
  const { BOOKING_TASK_QUEUE: queue, ...noQueue } = callerEnv();
  const run = await runPython(['-', ref, unknown, queue], noQueue, PYTHON_REFUSALS);
  expectExit(run, 0, 'python');
  const { over, changed, none } = lastJson(run);
  // Over the limit: the quote comes back and nothing is sent.
  expect(over).toMatchObject({ kind: 'quote', quote: { basis: 'policy' } });
  expect(changed).toEqual({
    error: 'WorkflowUpdateFailedError',
    reason: expect.stringMatching(/The cancellation fee now is .*, not 1 USD: quote again/),
  });
  expect(none).toEqual({
    error: 'WorkflowUpdateFailedError',
    reason: expect.stringContaining('cannot be cancelled: no booking of this namespace has this reference'),
  });
  expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 2 })]);
  await expectStartedByTheClient(ref);
  await expectStartedByTheClient(unknown);
});

/** Quotes a cancellation with the package's helper and prints the answer. */
const PYTHON_QUOTE = `
import json, sys
from hotel_booking_client import connect, quote_cancellation, run_and_exit

async def main():
    client = await connect()
    print(json.dumps(await quote_cancellation(client, sys.argv[1])))

run_and_exit(main())
`;

/**
 * The server's answers the TypeScript helper asks again for (client-retry.test.ts), given to Python through a gRPC
 * proxy that lets the real server do the work and puts the error in place of its answer: Python asks again, a
 * cancellation with the same update id, a booking's start attaching to the booking the first start made.
 */
describe('a Python caller the server asks to retry', () => {
  let proxy: AnswerProxy;
  beforeAll(async () => {
    proxy = await startAnswerProxy(env.address);
  });
  afterAll(() => proxy?.close());

  const throughProxy = (method: string, answer: { status: string; text: string }, args: string[], stdin = '') =>
    proxy.masking({ ...answer, methods: [method] }, () =>
      runPython(args, { ...callerEnv(), TEMPORAL_ADDRESS: proxy.address }, stdin),
    );

  test.each(ASK_AGAIN_ANSWERS)(
    '$answer to a quote: asked again with the same update id, one update',
    async (answer) => {
      const ref = randomUUID();
      await confirmedByPython(ref);
      const before = proxy.updateIds().length;
      const run = await throughProxy(EXECUTE_MULTI_OPERATION, answer, ['-', ref], PYTHON_QUOTE);
      expectExit(run, 0, 'python');
      expect(lastJson(run)).toMatchObject({ kind: 'quote', quote: { basis: 'policy', fee: { currency: 'USD' } } });
      const [first, second, ...more] = proxy.updateIds().slice(before);
      expect(first).toBeTruthy();
      expect(second).toBe(first);
      expect(more).toEqual([]);
      const runs = await orderRuns(ref);
      expect(runs).toHaveLength(1);
      const history = await env.client.workflow.getHandle(orderWorkflowId(ref)).fetchHistory();
      expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
    },
  );

  test.each(ASK_AGAIN_ANSWERS)(
    "$answer to a booking's start: started again, one booking, one order",
    async (answer) => {
      const ref = randomUUID();
      const before = proxy.starts().length;
      const run = await throughProxy(START_WORKFLOW_EXECUTION, answer, [
        ...['-m', 'hotel_booking_client.book', '--ref', ref, '--scenario', 'confirmAfterMs=0'],
      ]);
      expectExit(run, 0, 'python');
      expect(lastJson(run)).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref } });
      const starts = proxy.starts().slice(before);
      expect(starts.map((s) => s.workflowId)).toEqual([bookingWorkflowId(ref), bookingWorkflowId(ref)]);
      expect(ordersFor(ref)).toHaveLength(1);
      const runs = [];
      for await (const w of env.client.workflow.list({ query: `WorkflowId = "${bookingWorkflowId(ref)}"` }))
        runs.push(w);
      expect(runs).toHaveLength(1);
    },
  );
});
