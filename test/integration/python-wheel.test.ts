/**
 * The Python client as a partner installs it: the wheel of clients/python (built by scripts/install-clients.sh
 * python-wheel, cached per source digest), installed into a fresh venv outside the repository with its dependencies
 * from PyPI (pip's cache keeps it quick), and a booking made with it, run from outside the repository, against the
 * dev server and an encrypting worker. cross-language-python.test.ts covers the client's behaviour; this file covers
 * what the wheel carries.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bookingWorkflowId } from '../../src/api/contract/index';
import { ENCRYPTED_ENCODING } from '../../src/api/codec/encryption';
import { connectDevServer } from '../harness/temporal';
import { createBookingRig, type BookingRig } from '../harness/booking';
import { expectExit, pathOnly, runProgram } from '../harness/program';
import { TEST_ENCRYPTION, testDataConverter } from '../fixtures/encryption';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);
const pyproject = readFileSync(path.join(ROOT, 'clients/python/pyproject.toml'), 'utf8');
const VERSION = /^version = "([^"]+)"/m.exec(pyproject)![1]!;

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let wheel: string;
/** Outside the repository: the venv, and the working directory of every program, so nothing imports clients/python. */
let scratch: string;
let python: string;

beforeAll(async () => {
  const built = await run('bash', ['scripts/install-clients.sh', 'python-wheel'], { cwd: ROOT, timeout: 600_000 });
  wheel = built.stdout.trim().split('\n').pop()!;
  scratch = mkdtempSync(path.join(os.tmpdir(), 'python-wheel-'));
  const venv = path.join(scratch, 'venv');
  await run('python3', ['-m', 'venv', venv], { timeout: 120_000 });
  python = path.join(venv, 'bin/python');
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', wheel], {
    cwd: scratch,
    timeout: 300_000,
  });
  env = await connectDevServer();
  rig = await createBookingRig(env, 'python-wheel', { dataConverter: testDataConverter() });
}, 900_000);

afterAll(async () => {
  await rig?.close();
  await env?.teardown();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs the venv's python in the scratch folder with only the variables given. */
const runPython = (args: string[], vars: Record<string, string> = {}) =>
  runProgram(python, args, { cwd: scratch, env: { ...pathOnly(), ...vars } });

test('the wheel holds every file of the package’s source, its type marker included, and nothing else', async () => {
  expect(path.basename(wheel)).toBe(`hotel_booking_client-${VERSION}-py3-none-any.whl`);
  const listed = await runPython(['-m', 'zipfile', '-l', wheel]);
  const files = listed.stdout
    .split('\n')
    .slice(1)
    .map((line) => line.split(/\s+/)[0]!)
    .filter((name) => name && !name.includes('.dist-info/'));
  const source = readdirSync(path.join(ROOT, 'clients/python/src/hotel_booking_client')).filter(
    (f) => f.endsWith('.py') || f === 'py.typed',
  );
  expect(source).toContain('py.typed');
  expect(files.sort()).toEqual(source.map((f) => `hotel_booking_client/${f}`).sort());
});

test('the venv imports the installed wheel, not the repository’s source', async () => {
  const shown = await runPython([
    '-c',
    'import hotel_booking_client, importlib.metadata as m; print(hotel_booking_client.__file__); print(m.version("hotel-booking-client"))',
  ]);
  const [file, version] = shown.stdout.trim().split('\n');
  expect(file).toMatch(
    new RegExp(`^${scratch}/venv/lib/python[\\d.]+/site-packages/hotel_booking_client/__init__\\.py$`),
  );
  expect(version).toBe(VERSION);
});

test('python -m hotel_booking_client.book from the wheel: confirmed, one order, its input encrypted', async () => {
  const keys = [...TEST_ENCRYPTION.keys].map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
  const booked = await runPython(['-m', 'hotel_booking_client.book', '--scenario', 'confirmAfterMs=0'], {
    TEMPORAL_ADDRESS: env.address,
    BOOKING_TASK_QUEUE: rig.taskQueue,
    PAYLOAD_ENCRYPTION_KEYS: keys,
  });
  expectExit(booked, 0, 'python');
  const outcome = JSON.parse(booked.stdout.trim().split('\n').pop()!);
  expect(outcome).toMatchObject({ kind: 'confirmed', order: { status: 2 } });
  const ref = outcome.order.customerReferenceNo as string;
  expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
  const history = await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
  const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  expect(Buffer.from(input.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
});
