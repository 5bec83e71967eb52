/**
 * How backend services use the orchestrator, on the real dev server against the sandbox supplier:
 * the client helper (idempotent start, state, outcome; cancelBooking as an Update-With-Start on order runs
 * started on demand), the booking CLI (book, quote, cancel), and a start by name from the `temporal` CLI with
 * the documented JSON, as a service in another language would.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  awaitOrderOutcome,
  awaitOutcome,
  bookingWorkflowId,
  cancelBooking,
  CustomerReferenceNoKey,
  getBookingState,
  getOrderState,
  InvalidBookingRequestError,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  startBooking,
  supplierOrderUpdateSignal,
  type BookingOutcome,
  type BookingRequest,
  type CancelBookingAnswer,
  type OrderOutcome,
} from '../../src/api/client/index';
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

/** A confirmed booking, made through the client helper; no order workflow follows it (on demand). */
async function confirmedBooking(test: string): Promise<{ request: BookingRequest; price: number }> {
  const request = bookingRequest({ test });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  const outcome = await awaitOutcome(env.client, request.customerReferenceNo);
  if (outcome.kind !== 'confirmed') throw new Error(`booking ended ${outcome.kind}`);
  return { request, price: outcome.order.price?.amount ?? Number.NaN };
}

/** The order runs of a reference, oldest first, as the server lists them. */
async function orderRuns(ref: string) {
  const runs = [];
  for await (const w of env.client.workflow.list({ query: `WorkflowId = '${orderWorkflowId(ref)}'` })) runs.push(w);
  return runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
}

/** The reason the cancelBooking update failed with, or the test fails. */
async function refusal(answer: Promise<CancelBookingAnswer>): Promise<string> {
  const error = await answer.then(
    (a) => new Error(`expected the update to fail, it answered ${JSON.stringify(a)}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return (error as WorkflowUpdateFailedError).cause?.message ?? '';
}

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

describe('cancelBooking: an Update-With-Start on order:<reference>, a run per piece of work', () => {
  const options = () => ({ taskQueue: rig.taskQueue });

  test('a confirmed booking no order workflow follows is quoted, then cancelled at the quoted fee', async () => {
    const { request, price } = await confirmedBooking('confirmAfterMs=0&freeCancel=0');
    const ref = request.customerReferenceNo;
    await expect(env.client.workflow.getHandle(orderWorkflowId(ref)).describe()).rejects.toThrow(/not found/i);

    const quote = await cancelBooking(env.client, ref, { confirm: false }, options());
    expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'policy', fee: { currency: 'USD' } } });
    const fee = (quote as Extract<CancelBookingAnswer, { kind: 'quote' }>).quote.fee!;
    expect(fee.amount).toBeCloseTo(price / 2, 1);
    // The quote's run ends once it answered: nothing waits for weeks.
    expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'quoted', quote: { fee } });

    // After a closed run the same id starts a new one (ALLOW_DUPLICATE).
    const answer = await cancelBooking(
      env.client,
      ref,
      { confirm: true, acceptedFee: fee, reason: 'guest changed plans' },
      options(),
    );
    expect(answer).toMatchObject({ kind: 'cancel-requested', serviceFee: fee, ambiguous: false });
    expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({
      kind: 'cancelled',
      order: { customerReferenceNo: ref, status: 3 },
      cancellation: { origin: 'caller', reason: 'guest changed plans', accepted: { kind: 'fee', fee } },
    });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);

    const runs = await orderRuns(ref);
    // The list comes from visibility, which may lag a run's close by a moment (seen on the production topology):
    // each run's status is read from the run itself.
    const statuses = await Promise.all(
      runs.map(
        async (r) => (await env.client.workflow.getHandle(orderWorkflowId(ref), r.runId).describe()).status.name,
      ),
    );
    expect(statuses).toEqual(['COMPLETED', 'COMPLETED']);
    for (const run of runs) {
      expect(run.type).toBe(ORDER_WORKFLOW_TYPE);
      expect(run.taskQueue).toBe(rig.taskQueue);
      expect(run.typedSearchAttributes.get(CustomerReferenceNoKey)).toBe(ref);
    }
    const described = await env.client.workflow.getHandle(orderWorkflowId(ref), runs[0]!.runId).describe();
    expect(await described.staticSummary()).toBe(`Order · ref ${ref}`);
  });

  test('a request while a run is busy joins that run (USE_EXISTING) and is answered there', async () => {
    // The Cancel is taken at once and settles 2 s later: the run follows the order meanwhile.
    const { request } = await confirmedBooking('confirmAfterMs=0&cancelAfterMs=2000');
    const ref = request.customerReferenceNo;
    const quote = await cancelBooking(env.client, ref, { confirm: false }, options());
    await awaitOrderOutcome(env.client, ref);
    const fee = (quote as Extract<CancelBookingAnswer, { kind: 'quote' }>).quote.fee;
    const answer = await cancelBooking(env.client, ref, { confirm: true, acceptedFee: fee }, options());
    expect(answer.kind).toBe('cancel-requested');
    const following = (await orderRuns(ref)).at(-1)!;
    expect(following.status.name).toBe('RUNNING');

    // The run following the cancellation refuses a second request; no other run was started for it.
    expect(await refusal(cancelBooking(env.client, ref, { confirm: false }, options()))).toMatch(
      /already asked for in this run/,
    );
    expect((await orderRuns(ref)).map((r) => r.runId)).toHaveLength(2);
    expect((await getOrderState(env.client, ref)).stage).toBe('cancelling');

    // A supplier hint makes the run read the order now instead of at its next scheduled poll.
    await new Promise((r) => setTimeout(r, 2_500));
    await env.client.workflow.getHandle(orderWorkflowId(ref)).signal(supplierOrderUpdateSignal, {
      customerReferenceNo: ref,
      status: 3,
    });
    const outcome = await awaitOrderOutcome(env.client, ref);
    expect(outcome).toMatchObject({ kind: 'cancelled', order: { status: 3 } });
    expect((await orderRuns(ref)).map((r) => r.runId)).toEqual([expect.any(String), following.runId]);
  });

  test('the update fails, naming the problem, for a reference no booking of this namespace made', async () => {
    const ref = randomUUID();
    expect(await refusal(cancelBooking(env.client, ref, { confirm: false }, options()))).toMatch(
      /cannot be cancelled: no booking of this namespace has this reference/,
    );
    expect(await awaitOrderOutcome(env.client, ref)).toMatchObject<Partial<OrderOutcome>>({
      kind: 'not-cancellable',
    });
  });

  test('the update fails when the fee accepted is not the fee now; nothing is sent', async () => {
    const { request } = await confirmedBooking('confirmAfterMs=0');
    const ref = request.customerReferenceNo;
    const reason = await refusal(
      cancelBooking(env.client, ref, { confirm: true, acceptedFee: { amount: 1, currency: 'USD' } }, options()),
    );
    expect(reason).toMatch(/The cancellation fee now is .*, not 1(\.00)? USD: quote again/);
    expect(await awaitOrderOutcome(env.client, ref)).toMatchObject({ kind: 'quoted' });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 2 })]);
  });

  test('the update fails once the order is cancelled: not confirmed', async () => {
    const { request } = await confirmedBooking('confirmAfterMs=0');
    const ref = request.customerReferenceNo;
    const quote = await cancelBooking(env.client, ref, { confirm: false }, options());
    await awaitOrderOutcome(env.client, ref);
    const fee = (quote as Extract<CancelBookingAnswer, { kind: 'quote' }>).quote.fee;
    await cancelBooking(env.client, ref, { confirm: true, acceptedFee: fee }, options());
    expect((await awaitOrderOutcome(env.client, ref)).kind).toBe('cancelled');
    expect(await refusal(cancelBooking(env.client, ref, { confirm: false }, options()))).toMatch(
      /cannot be cancelled now: the order is cancelled/,
    );
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
          'src/operators/cli/main.ts',
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
    expect(JSON.parse((soldOut as { stdout: string }).stdout.trim().split('\n').pop()!)).toMatchObject({
      kind: 'unavailable',
      candidates: [expect.objectContaining({ ratePkgId: expect.stringMatching(/-r2-a$/) }), expect.anything()],
    });
  });

  test('npm run book -- quote / cancel: the fee, then a cancellation at it only when confirmed', async () => {
    const { request, price } = await confirmedBooking('confirmAfterMs=0&freeCancel=0');
    const ref = request.customerReferenceNo;
    const env0 = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      PAYLOAD_ENCRYPTION_KEYS: '',
    };
    type Ran = { code: number; stdout: string; stderr: string };
    const cli = (...args: string[]): Promise<Ran> =>
      run(
        process.execPath,
        [
          require.resolve('ts-node/dist/bin'),
          '--transpile-only',
          'src/operators/cli/main.ts',
          ...args,
          '--task-queue',
          rig.taskQueue,
        ],
        { cwd: ROOT, env: env0, timeout: 90_000 },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: Ran) => e,
      );
    const last = (r: Ran) => JSON.parse(r.stdout.trim().split('\n').pop()!);

    const quoted = await cli('quote', '--ref', ref, '--json');
    expect(quoted.code).toBe(0);
    const fee = last(quoted).quote.quote.fee as { amount: number; currency: string };
    expect(fee).toEqual({ amount: expect.closeTo(price / 2, 1), currency: 'USD' });

    // No --yes and no terminal to ask on: nothing is cancelled.
    const unconfirmed = await cli('cancel', '--ref', ref, '--json');
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain('confirm with --yes');
    const overLimit = await cli('cancel', '--ref', ref, '--yes', '--max-fee', '1USD', '--json');
    expect(overLimit.code).toBe(2);
    expect(last(overLimit)).toEqual({ quote: last(quoted).quote });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 2 })]);

    const cancelled = await cli('cancel', '--ref', ref, '--yes', '--reason', 'trip called off', '--json');
    expect(cancelled.code).toBe(0);
    expect(last(cancelled)).toMatchObject({
      quote: { kind: 'quote', quote: { fee } },
      answer: { kind: 'cancel-requested', serviceFee: fee },
      outcome: { kind: 'cancelled', order: { status: 3 }, cancellation: { reason: 'trip called off' } },
    });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);

    // The order is cancelled now: the request is refused with the reason (exit 2, docs/cli.md).
    const again = await cli('cancel', '--ref', ref, '--yes');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/Refused: .*cannot be cancelled now: the order is cancelled/);
  }, 120_000);
});
