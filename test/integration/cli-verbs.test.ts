/**
 * The booking CLI's verbs for a booking that exists (`npm run book -- status|approve|reject|cancel|list`), run as
 * a child process against the dev server and the sandbox supplier, as an operator or a script runs them: the
 * text and the one JSON object each prints, and the documented exit codes (docs/cli.md).
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitOutcome, getBookingState, startBooking, type BookingRequest } from '../../src/api/client/index';
import { basePriceFor } from '../../dev/sandbox/store';
import { connectDevServer } from '../harness/temporal';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import {
  bookingRequest,
  createBookingRig,
  eventually,
  expectAtMostOneOrderPerReference,
  unresolvedBooking,
  type BookingRig,
} from '../harness/booking';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'cli-verbs');
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});
afterEach(() => expectAtMostOneOrderPerReference(rig.sandbox));

const ordersFor = (ref: string) => rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref);

type Ran = { code: number; stdout: string; stderr: string };

/** `npm run book -- <args>` as a child process (no terminal), on this rig's task queue, encryption off. */
function cli(...args: string[]): Promise<Ran> {
  const childEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    // This rig's worker has no key, whatever a local `npm start` left in .data/.
    PAYLOAD_ENCRYPTION_KEYS: '',
  };
  return run(
    process.execPath,
    [require.resolve('ts-node/dist/bin'), '--transpile-only', 'src/operators/cli/main.ts', ...args],
    {
      cwd: ROOT,
      env: childEnv,
      timeout: 90_000,
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: Ran) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/**
 * The CLI on a terminal (a pseudo-terminal from util-linux `script`), answering `answer` once it asks `[y/N]`.
 * Its stdout and stderr arrive together, as a person sees them.
 */
function cliOnTerminal(answer: string, ...args: string[]): Promise<{ code: number | null; output: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [
    process.execPath,
    require.resolve('ts-node/dist/bin'),
    '--transpile-only',
    'src/operators/cli/main.ts',
    ...args,
  ]
    .map(quote)
    .join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default', PAYLOAD_ENCRYPTION_KEYS: '' },
  });
  let output = '';
  let answered = false;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (!answered && output.includes('[y/N]')) {
      answered = true;
      child.stdin.write(`${answer}\n`);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

/** The one JSON object a --json run printed (stdout holds nothing else). */
function json<T = Record<string, unknown>>(ran: Ran): T {
  const lines = ran.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

async function confirmedBooking(test: string): Promise<{ request: BookingRequest; price: number }> {
  const request = bookingRequest({ test });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  const outcome = await awaitOutcome(env.client, request.customerReferenceNo);
  if (outcome.kind !== 'confirmed') throw new Error(`booking ended ${outcome.kind}`);
  return { request, price: outcome.order.price?.amount ?? Number.NaN };
}

/** A booking waiting for a price approval: the supplier's price is 20% over the expected one, policy `ask`. */
async function bookingAwaitingApproval(): Promise<{ ref: string; price: { amount: number; currency: string } }> {
  const request = bookingRequest({
    test: 'scenario=priceChanged&priceDeltaPercent=20&confirmAfterMs=0',
    expectedPrice: basePriceFor('pkg-standard-double'),
    priceChangePolicy: { onExceeded: 'ask' },
  });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  const ref = request.customerReferenceNo;
  const state = await eventually(async () => {
    const s = await getBookingState(env.client, ref).catch(() => undefined);
    return s?.stage === 'awaiting-price-approval' ? s : undefined;
  });
  return { ref, price: state.currentPrice! };
}

const money = (m: { amount: number; currency: string }) => `${m.amount}${m.currency}`;

describe('status', () => {
  test('a confirmed booking: its state in text and in one JSON object, exit 0; an unknown reference exits 3', async () => {
    const { request } = await confirmedBooking('confirmAfterMs=0');
    const ref = request.customerReferenceNo;

    const text = await cli('status', '--ref', ref);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Booking ${ref}`);
    expect(text.stdout).toContain(`Booking workflow booking:${ref}: COMPLETED`);
    expect(text.stdout).toContain('stage: confirmed');
    expect(text.stdout).toContain('outcome: {"kind":"confirmed"');
    expect(text.stdout).toContain('No order run');

    const printed = await cli('status', '--ref', ref, '--json');
    expect(printed.code).toBe(0);
    expect(json(printed)).toMatchObject({
      reference: ref,
      booking: {
        workflowId: `booking:${ref}`,
        status: 'COMPLETED',
        stage: 'confirmed',
        outcome: { kind: 'confirmed', order: { customerReferenceNo: ref } },
      },
      order: null,
      needsPerson: false,
    });

    const unknown = randomUUID();
    const missing = await cli('status', '--ref', unknown, '--json');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`No booking (and no order run) for reference ${unknown}`);
    expect(json(missing)).toMatchObject({ error: 'not-found' });
  }, 120_000);
});

describe('approve / reject', () => {
  test('approve at the price awaiting approval confirms the booking; another price is refused (exit 2)', async () => {
    const { ref, price } = await bookingAwaitingApproval();

    const waiting = await cli('status', '--ref', ref, '--task-queue', rig.taskQueue, '--json');
    expect(waiting.code).toBe(0);
    expect(json(waiting)).toMatchObject({
      booking: { status: 'RUNNING', stage: 'awaiting-price-approval', state: { currentPrice: price } },
    });

    const stale = await cli(
      'approve',
      '--ref',
      ref,
      '--price',
      money({ ...price, amount: price.amount + 1 }),
      '--json',
    );
    expect(stale.code).toBe(2);
    expect(stale.stderr).toMatch(/Refused: Approval is for .* but the price awaiting approval is/);
    expect(json(stale)).toMatchObject({ error: 'refused' });
    expect(ordersFor(ref)).toEqual([]);

    const approved = await cli('approve', '--ref', ref, '--price', money(price), '--by', 'ops-cli-test', '--json');
    expect(approved.code).toBe(0);
    expect(json(approved)).toEqual({
      reference: ref,
      approved: true,
      price,
      answer: { accepted: true, stage: 'awaiting-price-approval' },
    });
    const outcome = await awaitOutcome(env.client, ref);
    expect(outcome).toMatchObject({ kind: 'confirmed', order: { price } });
    expect(ordersFor(ref)).toHaveLength(1);

    // Answered already, and ended: refused, not "not found".
    const again = await cli('approve', '--ref', ref, '--price', money(price));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^Refused: /m);
  }, 120_000);

  test('reject (the price taken from the booking) ends it price-rejected; nothing is booked', async () => {
    const { ref } = await bookingAwaitingApproval();
    const rejected = await cli('reject', '--ref', ref);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain(`Booking ${ref}: price`);
    expect(rejected.stdout).toContain('rejected');
    expect(await awaitOutcome(env.client, ref)).toMatchObject({ kind: 'price-rejected', reason: 'refused' });
    expect(ordersFor(ref)).toEqual([]);

    const again = await cli('reject', '--ref', ref, '--json');
    expect(again.code).toBe(2);
    expect(json(again)).toMatchObject({ error: 'refused', message: expect.stringMatching(/No price change/) });

    const unknown = await cli('reject', '--ref', randomUUID());
    expect(unknown.code).toBe(3);
  }, 120_000);
});

describe('cancel', () => {
  test('--yes --accept-fee: a different fresh quote is refused with nothing sent (exit 2); the quoted fee cancels', async () => {
    const { request } = await confirmedBooking('confirmAfterMs=0&freeCancel=0');
    const ref = request.customerReferenceNo;
    const quoted = await cli('quote', '--ref', ref, '--task-queue', rig.taskQueue, '--json');
    expect(quoted.code).toBe(0);
    const fee = json<{ quote: { quote: { fee: { amount: number; currency: string } } } }>(quoted).quote.quote.fee;
    expect(fee.amount).toBeGreaterThan(0);

    const wrong = await cli(
      'cancel',
      '--ref',
      ref,
      '--yes',
      '--accept-fee',
      money({ ...fee, amount: Math.round((fee.amount + 1.5) * 100) / 100 }),
      '--task-queue',
      rig.taskQueue,
      '--json',
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('nothing was sent');
    expect(json(wrong)).toMatchObject({ quote: { kind: 'quote', quote: { fee } }, refused: expect.any(String) });
    expect(json(wrong)).not.toHaveProperty('answer');
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 2 })]);

    const cancelled = await cli(
      'cancel',
      '--ref',
      ref,
      '--yes',
      '--accept-fee',
      money(fee),
      '--reason',
      'cli verbs test',
      '--task-queue',
      rig.taskQueue,
      '--json',
    );
    expect(cancelled.code).toBe(0);
    expect(json(cancelled)).toMatchObject({
      answer: { kind: 'cancel-requested', serviceFee: fee },
      outcome: { kind: 'cancelled', order: { status: 3 }, cancellation: { reason: 'cli verbs test' } },
    });
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);

    // The order run is visible to status now.
    const status = await cli('status', '--ref', ref, '--json');
    expect(status.code).toBe(0);
    expect(json(status)).toMatchObject({
      booking: { stage: 'confirmed' },
      order: { workflowId: `order:${ref}`, status: 'COMPLETED', outcome: { kind: 'cancelled' } },
    });

    // Cancelled already: the workflow refuses (exit 2); an unknown reference is not found (exit 3), nothing started.
    const again = await cli('cancel', '--ref', ref, '--yes', '--task-queue', rig.taskQueue);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/Refused: .*cannot be cancelled now/);
    const unknown = randomUUID();
    const missing = await cli('cancel', '--ref', unknown, '--yes', '--task-queue', rig.taskQueue);
    expect(missing.code).toBe(3);
    await expect(env.client.workflow.getHandle(`order:${unknown}`).describe()).rejects.toThrow(/not found/i);
  }, 150_000);
});

describe('cancel on a terminal', () => {
  test('asks with the quoted fee: "n" sends nothing (exit 2), "y" cancels at that fee (exit 0)', async () => {
    const { request } = await confirmedBooking('confirmAfterMs=0&freeCancel=0');
    const ref = request.customerReferenceNo;

    const declined = await cliOnTerminal('n', 'cancel', '--ref', ref, '--task-queue', rig.taskQueue);
    expect(`exit ${declined.code}\n${declined.output}`).toMatch(/^exit 2\n/);
    expect(declined.output).toMatch(new RegExp(`Cancel booking ${ref} at [0-9.]+ USD.*\\? \\[y/N\\]`));
    expect(declined.output).toContain('Not cancelled.');
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 2 })]);

    const accepted = await cliOnTerminal('y', 'cancel', '--ref', ref, '--task-queue', rig.taskQueue);
    expect(`exit ${accepted.code}\n${accepted.output}`).toMatch(/^exit 0\n/);
    expect(accepted.output).toContain('"kind": "cancelled"');
    expect(ordersFor(ref)).toEqual([expect.objectContaining({ status: 3 })]);
  }, 120_000);
});

describe('needs a person', () => {
  test('the supplier ends the cancellation CancelFailed: cancel and status exit 4, list --stage finds the order run', async () => {
    expectWorkerWarnings(/^ERROR Order cancel-failed: needs manual follow-up/);
    const { request } = await confirmedBooking('confirmAfterMs=0&cancel=failed&cancelAfterQueries=1');
    const ref = request.customerReferenceNo;
    const cancelled = await cli('cancel', '--ref', ref, '--yes', '--task-queue', rig.taskQueue, '--json');
    expect(cancelled.code).toBe(4);
    expect(json(cancelled)).toMatchObject({ outcome: { kind: 'cancel-failed', order: { status: 5 } } });

    const status = await cli('status', '--ref', ref);
    expect(status.code).toBe(4);
    expect(status.stdout).toContain('stage: order-cancel-failed');
    expect(status.stdout).toContain('Needs a person');

    const listed = await eventually(async () => {
      const r = await cli('list', '--stage', 'order-cancel-failed', '--limit', '1000', '--json');
      const report = json<{ workflows: { reference: string; workflowId: string }[] }>(r);
      return report.workflows.find((w) => w.reference === ref);
    }, 30_000);
    expect(listed).toMatchObject({ workflowId: `order:${ref}`, stage: 'order-cancel-failed' });
  }, 150_000);
});

describe('an unresolved booking', () => {
  test('list --stage unresolved finds it and status exits 4 (needs a person), as the README shows', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    // Book's answer lost and the order never settles; a test schedule (the rig's worker accepts it) gives up in 3 s.
    const ref = await unresolvedBooking(env, rig, 3);

    const listed = await eventually(async () => {
      const r = await cli('list', '--stage', 'unresolved', '--limit', '1000', '--json');
      const report = json<{ workflows: { reference: string; workflowId: string }[] }>(r);
      return report.workflows.find((w) => w.reference === ref);
    }, 30_000);
    expect(listed).toMatchObject({ workflowId: `booking:${ref}`, stage: 'unresolved' });

    const status = await cli('status', '--ref', ref, '--json');
    expect(status.code).toBe(4);
    expect(json(status)).toMatchObject({ booking: { outcome: { kind: 'unresolved' } } });
  }, 120_000);
});

describe('list', () => {
  test('--stage finds a booking by its BookingStage, printing reference, stage, workflow id and start time', async () => {
    const { ref, price } = await bookingAwaitingApproval();
    const listed = await eventually(async () => {
      const r = await cli('list', '--stage', 'awaiting-price-approval', '--limit', '1000', '--json');
      expect(r.code).toBe(0);
      const report = json<{ workflows: { reference: string }[] }>(r);
      return report.workflows.some((w) => w.reference === ref) ? report : undefined;
    }, 30_000);
    expect(listed).toMatchObject({
      stage: 'awaiting-price-approval',
      query: 'BookingStage = "awaiting-price-approval"',
    });
    expect(listed.workflows.find((w) => w.reference === ref)).toMatchObject({
      reference: ref,
      stage: 'awaiting-price-approval',
      workflowId: `booking:${ref}`,
      type: 'bookingWorkflow',
      status: 'RUNNING',
      startTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    const text = await cli('list', '--stage', 'awaiting-price-approval', '--limit', '1000');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^REFERENCE\tSTAGE\tWORKFLOW ID\tSTARTED\tBUILD$/m);
    expect(text.stdout).toMatch(new RegExp(`^${ref}\\tawaiting-price-approval\\tbooking:${ref}\\t\\d{4}-`, 'm'));

    // Leave nothing waiting: reject it.
    expect((await cli('reject', '--ref', ref, '--price', money(price))).code).toBe(0);
  }, 120_000);
});

describe('usage errors name the flag and exit 1', () => {
  test.each([
    [['approve', '--ref', 'r1', '--price', '250.66 USD'], /--price: expected <amount><CURRENCY>/],
    [['approve', '--ref', 'r1', '--price', '250.66usd'], /--price: expected <amount><CURRENCY>/],
    [['approve', '--ref', 'r1', '--price=-5USD'], /--price: expected <amount><CURRENCY>/],
    [['approve', '--ref', 'r1'], /approve: --price <amount><CURRENCY> is required/],
    [['cancel', '--ref', 'r1', '--yes', '--accept-fee', '12,50EUR'], /--accept-fee: expected <amount><CURRENCY>/],
    [['status'], /status: --ref <reference> is required/],
    [['list'], /list: --stage <stage> is required/],
    [['list', '--stage', 'Unresolved" OR 1=1'], /--stage: expected a stage/],
    [['list', '--stage', 'unresolved', '--limit', '0'], /--limit: expected a whole number/],
    [['status', '--ref', 'r1', '--price', '1USD'], /status: --price is not one of its flags/],
    [['status', '--ref', 'r1', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['refund', '--ref', 'r1'], /unknown command "refund"/],
  ])(
    '%j',
    async (args, message) => {
      const ran = await cli(...args, '--json');
      expect(ran.code).toBe(1);
      expect(ran.stderr).toMatch(message);
      expect(json(ran)).toMatchObject({ error: 'usage' });
    },
    60_000,
  );
});
