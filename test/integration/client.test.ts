/**
 * How backend services use the orchestrator, on the real dev server against the sandbox supplier:
 * the client helper (idempotent start, state, outcome), the booking CLI, and a start by name from
 * the `temporal` CLI with the documented JSON, as a service in another language would.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  awaitOutcome,
  bookingWorkflowId,
  getBookingState,
  InvalidBookingRequestError,
  startBooking,
  type BookingOutcome,
} from '../../src/client';
import { resolveServerExecutable } from '../../dev/temporal/binaries';
import { connectDevServer } from '../harness/temporal';
import {
  bookingRequest,
  createBookingRig,
  expectAtMostOneOrderPerReference,
  type BookingRig,
} from '../harness/booking';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'client');
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

const ordersFor = (ref: string) => rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref);

describe('client helper', () => {
  test('starting the same booking twice yields one workflow and one supplier order', async () => {
    const request = bookingRequest({ test: 'confirmAfterMs=0' });
    const [first, second] = await Promise.all([
      startBooking(env.client, request, { taskQueue: rig.taskQueue }),
      startBooking(env.client, request, { taskQueue: rig.taskQueue }),
    ]);
    expect(first.workflowId).toBe(bookingWorkflowId(request.customerReferenceNo));
    expect(second.workflowId).toBe(first.workflowId);
    const outcome = await awaitOutcome(env.client, request.customerReferenceNo);
    expect(outcome.kind).toBe('confirmed');

    // A third start after the booking ended returns the finished workflow, not a new booking.
    const third = await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    expect((await third.result()).kind).toBe('confirmed');
    const runs = [];
    for await (const w of env.client.workflow.list({ query: `WorkflowId = '${first.workflowId}'` })) runs.push(w.runId);
    expect(runs).toHaveLength(1);
    expect(ordersFor(request.customerReferenceNo)).toHaveLength(1);
  });

  test('state is readable while the booking runs and carries no personal data', async () => {
    const request = bookingRequest({
      test: 'book=504AfterCreate&confirmAfterQueries=2',
      recovery: { testing: true, delaysSeconds: [1] },
    });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    const outcome = await awaitOutcome(env.client, request.customerReferenceNo);
    expect(outcome.kind).toBe('confirmed');
    const state = await getBookingState(env.client, request.customerReferenceNo);
    expect(state.stage).toBe('completed');
    expect(state.bookAttempts.map((a) => a.result)).toEqual(['ambiguous']);
    expect(state.polls.map((p) => p.result)).toEqual(['found', 'found']);
    expect(JSON.stringify(state)).not.toContain(request.holder.email);
  });

  test('search attributes let operators find a booking by reference and by stage', async () => {
    const request = bookingRequest({ test: 'confirmAfterMs=0' });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    await awaitOutcome(env.client, request.customerReferenceNo);
    const described = await env.client.workflow.getHandle(bookingWorkflowId(request.customerReferenceNo)).describe();
    const attrs = described.searchAttributes as Record<string, unknown[]>;
    expect(attrs.CustomerReferenceNo).toEqual([request.customerReferenceNo]);
    expect(attrs.BookingStage).toEqual(['confirmed']);
  });

  test('invalid input is refused before anything starts, naming each field', async () => {
    const request = bookingRequest();
    const bad = { ...request, customerReferenceNo: 'not-a-uuid', guests: [] };
    const error = await startBooking(env.client, bad, { taskQueue: rig.taskQueue }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidBookingRequestError);
    expect((error as InvalidBookingRequestError).issues.join('\n')).toMatch(/customerReferenceNo[\s\S]*guests/);
  });
});

describe('from outside TypeScript', () => {
  const cli = () => {
    const exe = resolveServerExecutable('cli');
    if (exe.type !== 'existing-path') throw new Error('no Temporal CLI executable');
    return exe.path;
  };

  test('the temporal CLI starts bookingWorkflow by name with the documented JSON and gets confirmed', async () => {
    const request = bookingRequest({ test: 'confirmAfterMs=0' });
    const { stdout } = await run(
      cli(),
      [
        'workflow',
        'execute',
        '--address',
        env.address,
        '--type',
        'bookingWorkflow',
        '--task-queue',
        rig.taskQueue,
        '--workflow-id',
        `booking:${request.customerReferenceNo}`,
        '--input',
        JSON.stringify(request),
        '--output',
        'json',
      ],
      { timeout: 60_000 },
    );
    const printed = JSON.parse(stdout) as { result: BookingOutcome };
    expect(printed.result.kind).toBe('confirmed');
    expect(ordersFor(request.customerReferenceNo)).toHaveLength(1);
  });

  test('npm run book -- --json prints the outcome and exits 0 only when confirmed', async () => {
    // Encryption off explicitly: this rig's worker has none, whatever key a local `npm start` left in .data/.
    const env0 = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      PAYLOAD_ENCRYPTION_KEYS: '',
    };
    const book = (scenario: string) =>
      run(
        process.execPath,
        [
          require.resolve('ts-node/dist/bin'),
          '--transpile-only',
          'src/cli/book.ts',
          '--json',
          '--task-queue',
          rig.taskQueue,
          '--scenario',
          scenario,
        ],
        { cwd: ROOT, env: env0, timeout: 90_000 },
      );
    const ok = await book('confirmAfterMs=0');
    expect((JSON.parse(ok.stdout.trim().split('\n').pop()!) as BookingOutcome).kind).toBe('confirmed');

    const soldOut = await book('scenario=soldOut').catch((e: { code: number; stdout: string }) => e);
    expect((soldOut as { code: number }).code).toBe(2);
    expect(JSON.parse((soldOut as { stdout: string }).stdout.trim().split('\n').pop()!)).toEqual({
      kind: 'unavailable',
    });
  });
});
