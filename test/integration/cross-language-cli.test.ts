/**
 * The `temporal` CLI as a caller, with encryption on: through the codec server it starts a booking by name
 * (the README's example) and prints the outcome in clear, while the server stores the input encrypted. The
 * format's test vector also opens with the workers' own codec. Python and Go callers have their own files
 * (cross-language-python.test.ts, cross-language-go.test.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bookingWorkflowId } from '../../src/api/contract/index';
import { ENCRYPTED_ENCODING } from '../../src/api/codec/encryption';
import { startCodecServer } from '../../src/servers/codec/server';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { connectDevServer } from '../harness/temporal';
import { bookingRequest, createBookingRig, type BookingRig } from '../harness/booking';
import { testCodec, testDataConverter } from '../fixtures/encryption';
import { expectExit, inheritedEnv, runProgram } from '../harness/program';

const ROOT = path.resolve(__dirname, '../..');
const VECTOR = JSON.parse(readFileSync(path.join(ROOT, 'clients/testdata/payload-encryption-vector.json'), 'utf8'));

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'cross-language-cli', { dataConverter: testDataConverter() });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

test('the workers’ codec opens the format’s test vector', async () => {
  const metadata = Object.fromEntries(
    Object.entries(VECTOR.outer.metadata as Record<string, string>).map(([k, v]) => [k, Buffer.from(v)]),
  );
  const [inner] = await testCodec().decode([{ metadata, data: Buffer.from(VECTOR.outer.dataHex, 'hex') }]);
  expect(Buffer.from(inner!.data!).toString()).toBe(VECTOR.inner.data);
});

test('the temporal CLI with --codec-endpoint starts a booking and prints its outcome in clear', async () => {
  const exe = resolveServerExecutable('cli');
  if (exe.type !== 'existing-path') throw new Error('the Temporal CLI is needed (npm run temporal:install)');
  const codecServer = await startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: 'http://127.0.0.1:1' });
  try {
    const ref = crypto.randomUUID();
    const request = bookingRequest({ customerReferenceNo: ref, test: 'confirmAfterMs=0' });
    const run = await runProgram(
      exe.path,
      [
        ...['workflow', 'execute', '--address', env.address, '--codec-endpoint', codecServer.url],
        ...['--type', 'bookingWorkflow', '--task-queue', rig.taskQueue, '--workflow-id', `booking:${ref}`],
        ...['--input', JSON.stringify(request), '--output', 'json'],
      ],
      { env: inheritedEnv(), cwd: ROOT, timeoutMs: 60_000 },
    );
    expectExit(run, 0, 'temporal workflow execute');
    const { stdout } = run;
    expect((JSON.parse(stdout) as { result: { kind: string } }).result.kind).toBe('confirmed');
    const raw = historyToJSON(await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory());
    const input = JSON.parse(raw).events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
    expect(Buffer.from(input.metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
  } finally {
    await codecServer.close();
  }
});
