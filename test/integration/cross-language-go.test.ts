/**
 * A Go service calling the orchestrator with encryption on: the Go client (clients/go, built by
 * scripts/install-clients.sh from the Go module proxy into a cache outside the clone) and the workers'
 * TypeScript codec read each other's payloads; Go programs start bookings by name on the dev server against
 * the project's encrypting worker and read the decrypted outcome; and the raw history shows that Go really
 * encrypted what it sent. The module's own tests (`go test ./...`) run here too, so `npm test` runs them.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import * as program from '../harness/program';
import { expectExit, inheritedEnv, pathOnly, type ProgramRun } from '../harness/program';
import { TEST_ENCRYPTION, testCodec, testDataConverter } from '../fixtures/encryption';
import {
  ASK_AGAIN_ANSWERS,
  EXECUTE_MULTI_OPERATION,
  START_WORKFLOW_EXECUTION,
  startAnswerProxy,
  type AnswerProxy,
} from '../fixtures/grpc-answer-proxy';

const ROOT = path.resolve(__dirname, '../..');
const MODULE = path.join(ROOT, 'clients/go');
const [OLD_KEY_ID, ACTIVE_KEY_ID] = [...TEST_ENCRYPTION.keys.keys()] as [string, string];
const keysEnv = (ids: string[]) =>
  ids.map((id) => `${id}:${TEST_ENCRYPTION.keys.get(id)!.toString('base64')}`).join(',');
/** The workers' keys, as the variables the Go client reads (the active one last, as the default). */
const KEYS_ENV = { PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID, ACTIVE_KEY_ID]) };
const KEY_MATERIAL = [...TEST_ENCRYPTION.keys.values()].map((key) => key.toString('base64'));
/** The demo traveller of cmd/book: what must never be readable in history. */
const DEMO_PERSONAL = ['Traveller', 'demo@example.com', '5550100'];

let book: string;
let codecRoundTrip: string;
let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  // Cached after the first run (keyed on clients/go's sources and the Go version); a cold build takes minutes.
  const { stdout } = await promisify(execFile)('bash', ['scripts/install-clients.sh', 'go'], {
    cwd: ROOT,
    timeout: 900_000,
  });
  book = stdout.trim().split('\n').pop()!;
  codecRoundTrip = path.join(path.dirname(book), 'codec-roundtrip');
  env = await connectDevServer();
  rig = await createBookingRig(env, 'cross-language-go', { dataConverter: testDataConverter() });
}, 960_000);

afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** Runs a program with the variables given; `inherit` adds this process's (go itself needs HOME and its own). */
function runProgram(
  command: string,
  args: string[],
  vars: Record<string, string>,
  { stdin = '', cwd = ROOT, inherit = false, timeoutMs = 90_000 } = {},
): Promise<ProgramRun> {
  const env = { ...(inherit ? inheritedEnv() : pathOnly()), ...vars };
  return program.runProgram(command, args, { env, cwd, stdin, timeoutMs });
}

/** The variables a Go caller of this rig's worker needs. */
const callerEnv = (keys: Record<string, string> = KEYS_ENV) => ({
  TEMPORAL_ADDRESS: env.address,
  BOOKING_TASK_QUEUE: rig.taskQueue,
  ...keys,
});

/** The last stdout line as JSON: the programs print their outcome last. */
const lastJson = (run: ProgramRun) => JSON.parse(run.stdout.trim().split('\n').pop()!);

const expectNoKeyMaterial = (run: ProgramRun) => {
  for (const key of KEY_MATERIAL) expect(run.stdout + run.stderr).not.toContain(key);
};

// Payloads cross the process boundary as JSON: metadata values and data in base64.
type JsonPayload = { metadata: Record<string, string>; data: string };
const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
  data: b64(p.data),
});
const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const jsonPayload = (value: unknown): Payload => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});
const metadataText = (p: Payload, key: string) => Buffer.from(p.metadata![key]!).toString();

/** Decodes `decode` and encodes `encode` with Go's codec.NewFromEnv() (cmd/codec-roundtrip). */
async function goCodec(
  job: { decode: Payload[]; encode: Payload[] },
  keys: Record<string, string> = KEYS_ENV,
): Promise<{ decoded: Payload[]; encoded: Payload[] }> {
  const input = JSON.stringify({ decode: job.decode.map(toJson), encode: job.encode.map(toJson) });
  const run = await runProgram(codecRoundTrip, [], keys, { stdin: input });
  expectExit(run, 0, 'codec-roundtrip');
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

describe('payloads between the TypeScript and Go codecs', () => {
  const guest = { holder: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } };

  test('Go opens what TypeScript sealed, with either key; TypeScript opens what Go sealed', async () => {
    const oldCodec = createEncryptionCodec({ keys: TEST_ENCRYPTION.keys, activeKeyId: OLD_KEY_ID });
    const [fromTs] = await testCodec().encode([jsonPayload(guest)]);
    const [fromTsOldKey] = await oldCodec.encode([jsonPayload('written before the rotation')]);
    const plain = jsonPayload('written before encryption was on');

    const { decoded, encoded } = await goCodec({
      decode: [fromTs!, fromTsOldKey!, plain],
      encode: [jsonPayload(guest)],
    });

    // Each decoded payload is the original, metadata included: the inner payload travels whole.
    expect(decoded.map(toJson)).toEqual(
      [jsonPayload(guest), jsonPayload('written before the rotation'), plain].map(toJson),
    );
    const [sealed] = encoded;
    expect(Object.keys(sealed!.metadata!).sort()).toEqual(['encoding', 'encryption-key-id']);
    expect(metadataText(sealed!, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(metadataText(sealed!, 'encryption-key-id')).toBe(ACTIVE_KEY_ID);
    expect(Buffer.from(sealed!.data!).toString('latin1')).not.toContain('Lovelace');
    // 12-byte nonce, the inner payload's protobuf, 16-byte tag.
    expect(sealed!.data!.length).toBe(
      12 + temporal.api.common.v1.Payload.encode(jsonPayload(guest)).finish().length + 16,
    );
    expect((await testCodec().decode([sealed!])).map(toJson)).toEqual([toJson(jsonPayload(guest))]);
  });

  test('Go seals with PAYLOAD_ENCRYPTION_KEY_ID when it is set, and TypeScript reads that key id', async () => {
    const { encoded } = await goCodec(
      { decode: [], encode: [jsonPayload('sealed with the old key')] },
      { ...KEYS_ENV, PAYLOAD_ENCRYPTION_KEY_ID: OLD_KEY_ID },
    );
    expect(metadataText(encoded[0]!, 'encryption-key-id')).toBe(OLD_KEY_ID);
    const [opened] = await testCodec().decode(encoded);
    expect(JSON.parse(Buffer.from(opened!.data!).toString())).toBe('sealed with the old key');
  });

  test('a key id Go lacks is named in its error, and no key material is printed', async () => {
    const [fromTs] = await testCodec().encode([jsonPayload(guest)]);
    const run = await runProgram(
      codecRoundTrip,
      [],
      { PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID]) },
      { stdin: JSON.stringify({ decode: [toJson(fromTs!)], encode: [] }) },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`payload encrypted with key "${ACTIVE_KEY_ID}", which is not configured`);
    expectNoKeyMaterial(run);
  });

  test('a payload changed after TypeScript sealed it is refused by Go, not opened to something else', async () => {
    const [fromTs] = await testCodec().encode([jsonPayload(guest)]);
    const data = Buffer.from(fromTs!.data!);
    data[20]! ^= 1;
    const run = await runProgram(codecRoundTrip, [], KEYS_ENV, {
      stdin: JSON.stringify({ decode: [toJson({ ...fromTs!, data })], encode: [] }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`payload encrypted with key "${ACTIVE_KEY_ID}" does not authenticate`);
  });
});

test('the Go module’s own tests pass: codec rules, the format’s test vector, types against schema/', async () => {
  const run = await runProgram('go', ['test', '-v', './...'], {}, { cwd: MODULE, inherit: true, timeoutMs: 600_000 });
  expect(run.stderr).not.toMatch(/FAIL/);
  expect(run).toMatchObject({ code: 0 });
  expect(run.stdout).toMatch(/^ok\s+\S+\/clients\/go\/codec\b/m);
  expect(run.stdout).toMatch(/^ok\s+\S+\/clients\/go\/booking\b/m);
  expect(run.stdout).not.toMatch(/--- (FAIL|SKIP)/);
  expect(run.stdout.match(/^--- PASS/gm)?.length).toBeGreaterThanOrEqual(18);
}, 600_000);

describe('a Go program books by name on the dev server, with the encrypting worker', () => {
  test('cmd/book: confirmed, one order, everything it stored encrypted', async () => {
    const ref = randomUUID();
    const run = await runProgram(book, ['-ref', ref, '-scenario', 'confirmAfterMs=0'], callerEnv());
    expect(run).toMatchObject({ code: 0 });
    expect(lastJson(run)).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: 2 } });
    expect(ordersFor(ref)).toHaveLength(1);
    expectNoKeyMaterial(run);

    const raw = await rawHistory(ref);
    for (const payload of [raw.input, raw.result]) {
      expect(metadataText(payload, 'encoding')).toBe(ENCRYPTED_ENCODING);
      expect(metadataText(payload, 'encryption-key-id')).toBe(ACTIVE_KEY_ID);
    }
    expect(scanHistory(ref, raw.json, { secrets: KEY_MATERIAL, personal: DEMO_PERSONAL })).toEqual([]);
    // What Go sealed is the request it meant: the worker's codec opens it to the demo traveller.
    const [input] = await testCodec().decode([raw.input]);
    expect(JSON.parse(Buffer.from(input!.data!).toString())).toEqual({
      customerReferenceNo: ref,
      ratePkgId: 'pkg-demo-deluxe',
      holder: {
        firstName: 'Demo',
        lastName: 'Traveller',
        email: 'demo@example.com',
        phone: { countryCode: 'US', countryNumber: 1, number: '5550100' },
      },
      guests: [
        { roomIndex: 0, firstName: 'Demo', lastName: 'Traveller', nationalityCode: 'US', age: 30, isChild: false },
      ],
      context: { test: 'confirmAfterMs=0' },
    });
    // The start helper's search attribute and summary, for finding the booking in the Web UI.
    const described = await env.client.workflow.getHandle(bookingWorkflowId(ref)).describe();
    expect(described.typedSearchAttributes.get(CustomerReferenceNoKey)).toBe(ref);
    // The Web UI's summary line is a payload too: sealed like the input, as the TypeScript client's is.
    const summary = described.raw.executionConfig!.userMetadata!.summary!;
    expect(metadataText(summary, 'encoding')).toBe(ENCRYPTED_ENCODING);
    const [summaryText] = await testCodec().decode([summary]);
    expect(JSON.parse(Buffer.from(summaryText!.data!).toString())).toBe(`Booking pkg-demo-deluxe · ref ${ref}`);
  });

  test('starting again with the reference, during the booking and after it, never books twice', async () => {
    const ref = randomUUID();
    // Book answers after 1 s, so the second start lands while the first booking runs.
    const args = ['-ref', ref, '-scenario', 'bookDelayMs=1000&confirmAfterMs=0'];
    const [first, second] = await Promise.all([
      runProgram(book, args, callerEnv()),
      runProgram(book, args, callerEnv()),
    ]);
    const after = await runProgram(book, args, callerEnv());

    for (const run of [first!, second!, after]) expect(run).toMatchObject({ code: 0 });
    expect(lastJson(first!)).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref } });
    expect(lastJson(second!)).toEqual(lastJson(first!));
    expect(lastJson(after)).toEqual(lastJson(first!));
    expect(ordersFor(ref)).toHaveLength(1);
    const runs = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = "${bookingWorkflowId(ref)}"` }))
      runs.push(execution.runId);
    expect(runs).toHaveLength(1);
  });

  test('a caller without the workers’ active key is told which key id it lacks', async () => {
    // Before a rotation reaches the caller: it still seals with the old key, which the worker reads,
    // but the outcome comes back under the new one.
    const ref = randomUUID();
    const run = await runProgram(
      book,
      ['-ref', ref, '-scenario', 'confirmAfterMs=0'],
      callerEnv({ PAYLOAD_ENCRYPTION_KEYS: keysEnv([OLD_KEY_ID]) }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`payload encrypted with key "${ACTIVE_KEY_ID}", which is not configured`);
    expectNoKeyMaterial(run);
    expect(ordersFor(ref)).toHaveLength(1);
    const raw = await rawHistory(ref);
    expect(metadataText(raw.input, 'encryption-key-id')).toBe(OLD_KEY_ID);
  });

  test('a bad PAYLOAD_ENCRYPTION_KEYS stops cmd/book before it starts anything, naming the variable', async () => {
    const ref = randomUUID();
    const run = await runProgram(
      book,
      ['-ref', ref],
      callerEnv({ PAYLOAD_ENCRYPTION_KEYS: `${ACTIVE_KEY_ID}:${KEY_MATERIAL[1]!.slice(0, 20)}` }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`PAYLOAD_ENCRYPTION_KEYS: key "${ACTIVE_KEY_ID}" must be 32 bytes (base64)`);
    await expect(env.client.workflow.getHandle(bookingWorkflowId(ref)).describe()).rejects.toThrow(/not found/i);
  });

  test('cmd/book -cancel: a Go program cancels a confirmed booking no order workflow follows, at the quoted fee', async () => {
    const ref = randomUUID();
    // Past free cancellation (freeCancel=0): the policy's fee applies; the Cancel settles at once.
    const booked = await runProgram(book, ['-ref', ref, '-scenario', 'confirmAfterMs=0&freeCancel=0'], callerEnv());
    expect(booked).toMatchObject({ code: 0 });
    const confirmed = lastJson(booked);
    expect(confirmed).toMatchObject({ kind: 'confirmed', order: { customerReferenceNo: ref, status: 2 } });
    // On demand: a confirmed booking starts no order workflow; CancelBooking's Update-With-Start does.
    await expect(env.client.workflow.getHandle(orderWorkflowId(ref)).describe()).rejects.toThrow(/not found/i);

    // Again with the reference: it attaches to the finished booking, then cancels. The task queue as a flag.
    const { BOOKING_TASK_QUEUE: queue, ...noQueue } = callerEnv();
    const run = await runProgram(book, ['-ref', ref, '-task-queue', queue, '-cancel', 'guest changed plans'], noQueue);
    expect(run).toMatchObject({ code: 0 });
    const lines = run.stdout.trim().split('\n');
    expect(JSON.parse(lines[lines.length - 2]!)).toEqual(confirmed);
    const { quote, answer, outcome } = lastJson(run);
    expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'policy', fee: { currency: 'USD' } } });
    const fee = quote.quote.fee as { currency: string; amount: number };
    // The sandbox's policy past free cancellation: half the price.
    expect(fee.amount).toBeCloseTo(confirmed.order.price.amount / 2, 1);
    expect(answer).toEqual({ kind: 'cancel-requested', quote: quote.quote, serviceFee: fee });
    expect(outcome).toMatchObject({
      kind: 'cancelled',
      order: { customerReferenceNo: ref, status: 3 },
      cancellation: { origin: 'caller', reason: 'guest changed plans', serviceFee: fee },
    });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);
    expectNoKeyMaterial(run);

    // Cancelled now: CancelBooking's update fails, and the error carries the order run's reason.
    const again = await runProgram(book, ['-ref', ref, '-cancel', 'once more'], callerEnv());
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('The order cannot be cancelled now: the order is cancelled');

    // Each order run was started as documented: type, the booking task queue, the search attribute, the summary.
    const runs = [];
    for await (const w of env.client.workflow.list({ query: `WorkflowId = '${orderWorkflowId(ref)}'` })) runs.push(w);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const r of runs) {
      expect(r.type).toBe(ORDER_WORKFLOW_TYPE);
      expect(r.taskQueue).toBe(rig.taskQueue);
      expect(r.typedSearchAttributes.get(CustomerReferenceNoKey)).toBe(ref);
    }
    // The summary is a payload like any other: the caller's codec sealed it, the workers' opens it.
    const decoding = new Client({ connection: env.client.connection, dataConverter: testDataConverter() });
    const described = await decoding.workflow.getHandle(orderWorkflowId(ref)).describe();
    expect(await described.staticSummary()).toBe(`Order · ref ${ref}`);
  });

  test('the example in clients/go/README.md works as written', async () => {
    // A module of its own, as a service's would be, using clients/go through a replace directive.
    const readme = readFileSync(path.join(MODULE, 'README.md'), 'utf8');
    const example = /```go\n(package main\n[\s\S]*?)```/.exec(readme)![1]!;
    const dir = mkdtempSync(path.join(tmpdir(), 'go-readme-example-'));
    try {
      writeFileSync(path.join(dir, 'main.go'), example);
      writeFileSync(
        path.join(dir, 'go.mod'),
        [
          'module example.com/booking-caller',
          'go 1.26.0',
          'require github.com/hotel-booking-orchestrator/clients/go v0.0.0',
          `replace github.com/hotel-booking-orchestrator/clients/go => ${MODULE}`,
        ].join('\n\n'),
      );
      copyFileSync(path.join(MODULE, 'go.sum'), path.join(dir, 'go.sum'));
      // -mod=mod: the example imports the SDK directly, so go adds its require (at clients/go's version).
      const run = await runProgram('go', ['run', '-mod=mod', '.'], callerEnv(), {
        cwd: dir,
        inherit: true,
        timeoutMs: 300_000,
      });
      expect(run).toMatchObject({ code: 0 });
      const outcome = lastJson(run);
      expect(outcome).toMatchObject({ kind: 'confirmed', order: { status: 2 } });
      const ref = outcome.order.customerReferenceNo as string;
      expect(ordersFor(ref)).toHaveLength(1);
      const raw = await rawHistory(ref);
      expect(metadataText(raw.input, 'encoding')).toBe(ENCRYPTED_ENCODING);
      expect(scanHistory(ref, raw.json, { secrets: KEY_MATERIAL, personal: ['Lovelace', 'ada@example.com'] })).toEqual(
        [],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

/**
 * The server's answers the TypeScript helper asks again for (client-retry.test.ts), given to Go through a gRPC proxy
 * that lets the real server do the work and puts the error in place of its answer: Go asks again, a cancellation
 * with the same update id, a booking's start attaching to the booking the first start made.
 */
describe('a Go caller the server asks to retry', () => {
  let proxy: AnswerProxy;
  beforeAll(async () => {
    proxy = await startAnswerProxy(env.address);
  });
  afterAll(() => proxy?.close());

  const throughProxy = (method: string, answer: { status: string; text: string }, args: string[]) =>
    proxy.masking({ ...answer, methods: [method] }, () =>
      runProgram(book, args, { ...callerEnv(), TEMPORAL_ADDRESS: proxy.address }),
    );

  test.each(ASK_AGAIN_ANSWERS)(
    '$answer to a quote: asked again with the same update id, then cancelled once',
    async (answer) => {
      const ref = randomUUID();
      const before = proxy.updateIds().length;
      const run = await throughProxy(EXECUTE_MULTI_OPERATION, answer, [
        ...['-ref', ref, '-scenario', 'confirmAfterMs=0&freeCancel=0', '-cancel', 'asked again'],
      ]);
      expect(run).toMatchObject({ code: 0 });
      const { quote, outcome } = lastJson(run);
      expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'policy' } });
      expect(outcome).toMatchObject({ kind: 'cancelled', order: { customerReferenceNo: ref, status: 3 } });
      // The quote's update id twice (the first answer thrown away), then the cancellation's own.
      const [first, second, cancel, ...more] = proxy.updateIds().slice(before);
      expect(first).toBeTruthy();
      expect(second).toBe(first);
      expect(cancel).not.toBe(first);
      expect(more).toEqual([]);
      expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);
    },
  );

  test.each(ASK_AGAIN_ANSWERS)(
    "$answer to a booking's start: started again, one booking, one order",
    async (answer) => {
      const ref = randomUUID();
      const before = proxy.starts().length;
      const run = await throughProxy(START_WORKFLOW_EXECUTION, answer, ['-ref', ref, '-scenario', 'confirmAfterMs=0']);
      expect(run).toMatchObject({ code: 0 });
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
