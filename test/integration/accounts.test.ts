/**
 * Several supplier accounts in one worker, as an operator configures them (SUPPLIER_ACCOUNTS_FILE, read by the
 * worker's own config, wired by createWorkerFromConfig), on the dev server:
 *  - alpha: a sandbox supplier, open to this partner (the namespace), listed first: the partner's default;
 *  - beta: a supplier written from the spec's text with its own numbers (test/fixtures/conformance-supplier.ts),
 *    with the profile the conformance kit proposed for it, dropped in as is;
 *  - gamma: a sandbox open to another partner only;
 *  - delta: a sandbox open to this partner, whose Books one test makes slow;
 *  - broken: its credential file is missing; named at start and left out, the others serve.
 * A booking goes where it says, or to its partner's default; one naming an account its partner may not use is
 * refused before any request; its order run cancels on the account the booking was made on.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { bookingWorkflowId, type BookingOutcome, type BookingRequest } from '../../src/api/contract/index';
import { awaitOrderOutcome, cancelBooking, getBookingState, getOrderState } from '../../src/api/client/index';
import { runConformance } from '../../src/operators/conformance/run';
import { startConsole } from '../../src/operators/console/server';
import { loadConfig, type AppConfig } from '../../src/runtime/config/index';
import { createWorkerFromConfig, type ConfiguredWorker } from '../../src/worker';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import { staticToken } from '../../src/runtime/supplier/token';
import type { SweepWorkflowInput } from '../../src/runtime/rules/sweep-classify';
import type { bookingWorkflow } from '../../src/workflows';
import { kitOptions, startConformanceSupplier } from '../fixtures/conformance-supplier';
import type { SpecSupplier } from '../fixtures/spec-supplier';
import { bookingRequest, eventually, guests, holder } from '../harness/booking';
import { expectWorkerWarnings, workerLogLines } from '../harness/quiet-worker-logs';
import { expectExit, inheritedEnv, runProgram } from '../harness/program';
import { connectDevServer, workflowBundle } from '../harness/temporal';

const SECRET_TOKEN = 'beta-token-never-logged';
const WRONG_SECRET = 'refused-secret-never-logged';

let env: TestWorkflowEnvironment;
let client: Client;
let alpha: Sandbox;
let gamma: Sandbox;
let delta: Sandbox;
let beta: SpecSupplier;
let dir: string;
let config: AppConfig;
let configured: ConfiguredWorker;
let running: Promise<void>;
const taskQueue = `accounts-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  env = await connectDevServer();
  client = env.client;
  [alpha, gamma, delta, beta] = await Promise.all([
    startSandbox({ port: 0, confirmAfterMs: 0 }),
    startSandbox({ port: 0, confirmAfterMs: 0 }),
    startSandbox({ port: 0, confirmAfterMs: 0 }),
    startConformanceSupplier(),
  ]);
  // The kit's run against beta, as an operator onboards it: its proposed profile goes into the account as is.
  const report = await runConformance(kitOptions(beta.url));
  expect(report.summary.blocker).toBe(0);
  beta.calls.length = 0;

  dir = mkdtempSync(path.join(os.tmpdir(), 'accounts-'));
  writeFileSync(path.join(dir, 'app-key'), 'sandbox-app\n');
  writeFileSync(path.join(dir, 'app-secret'), 'sandbox-secret\n');
  writeFileSync(path.join(dir, 'beta-token'), 'conformance-token\n');
  writeFileSync(path.join(dir, 'wrong-secret'), `${WRONG_SECRET}\n`);
  const closedPort = await portNobodyListensOn();
  const ticket = { appKeyFile: 'app-key', appSecretFile: 'app-secret' };
  writeFileSync(
    path.join(dir, 'accounts.json'),
    JSON.stringify({
      accounts: [
        { id: 'alpha', baseUrl: alpha.url, credentials: ticket, partners: ['default'] },
        {
          id: 'beta',
          baseUrl: beta.url,
          credentials: { tokenFile: 'beta-token' },
          profile: report.proposedProfile,
          partners: ['*'],
        },
        { id: 'gamma', baseUrl: gamma.url, credentials: ticket, partners: ['another-partner'] },
        { id: 'delta', baseUrl: delta.url, credentials: ticket, partners: ['default'] },
        { id: 'broken', baseUrl: alpha.url, credentials: { tokenFile: 'no-such-file' }, partners: ['*'] },
        // Read well, but not usable: nothing listens at one, the other's Ticket secret is refused.
        { id: 'down', baseUrl: `http://127.0.0.1:${closedPort}`, credentials: ticket, partners: ['another-partner'] },
        {
          id: 'refused',
          baseUrl: gamma.url,
          credentials: { appKeyFile: 'app-key', appSecretFile: 'wrong-secret' },
          partners: ['another-partner'],
        },
      ],
    }),
  );
  config = loadConfig({
    TEMPORAL_ADDRESS: process.env.TEST_DEV_SERVER_ADDRESS,
    SUPPLIER_ACCOUNTS_FILE: path.join(dir, 'accounts.json'),
    BOOKING_TASK_QUEUE: taskQueue,
    RECONCILIATION_SCHEDULE: 'off',
    // Each account's Books carry the receiver's URL with the account's own path (nothing listens here: a hint only).
    SUPPLIER_CALLBACK_URL: 'http://127.0.0.1:9/callbacks/order-status',
    RECOVERY_TESTING: 'on',
    SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS: '0',
    // Two activity slots per queue: the slow-account test fills delta's.
    WORKER_MAX_CONCURRENT_ACTIVITIES: '2',
  });
  expectWorkerWarnings(
    /^WARN Supplier account left out/,
    /^WARN Supplier account (down|refused) .* is not usable at start/,
    /^WARN No workflows registered/,
  );
  configured = await createWorkerFromConfig(env.nativeConnection, config, { workflowBundle: workflowBundle() });
  running = configured.worker.run();
}, 120_000);

afterAll(async () => {
  configured?.worker.shutdown();
  await running;
  await configured?.closeSupplier();
  await Promise.all([alpha?.close(), gamma?.close(), delta?.close(), beta?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  await env?.teardown();
});

/** A port that was free a moment ago: nothing listens on it. */
async function portNobodyListensOn(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function book(request: BookingRequest): Promise<BookingOutcome> {
  const handle = await client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
  });
  return handle.result();
}

test('the file is read at start: a bad account is named and left out, never with a secret; the others serve', () => {
  expect(config.accounts?.accounts.map((a) => a.id)).toEqual(['alpha', 'beta', 'gamma', 'delta', 'down', 'refused']);
  expect(config.accounts?.leftOut).toEqual([
    expect.stringMatching(
      /^SUPPLIER_ACCOUNTS_FILE: accounts\[4\] \(broken\): credentials\.tokenFile: cannot read no-such-file/,
    ),
  ]);
  expect(JSON.stringify(config.accounts?.leftOut)).not.toContain(SECRET_TOKEN);
  // No SUPPLIER_* credential: the first account also serves bookings that name none, with its one stack.
  expect(config.supplier.account).toBe('alpha');
});

test('every account is tried at start: one nobody answers and one whose Ticket is refused are named, the others answer', async () => {
  // The worker asks in the background, so its start waits for no supplier: the lines come when the answers do.
  const said = (id: string) => workerLogLines().find((line) => line.includes(`Supplier account ${id} (`));
  const ids = ['alpha', 'beta', 'gamma', 'delta', 'down', 'refused'];
  await eventually(async () => (ids.every((id) => said(id) !== undefined) ? true : undefined));
  expect(said('down')).toMatch(/^WARN .*down .* is not usable at start: nothing listens there \(ECONNREFUSED\)/);
  expect(said('refused')).toMatch(/^WARN .*refused .* is not usable at start: it answers, but no Ticket was issued/);
  expect(said('refused')).toContain('SupplierUnauthorized');
  for (const id of ['alpha', 'gamma', 'delta'])
    expect(said(id)).toMatch(/^INFO .*answered at start: it answers and issued a Ticket/);
  expect(said('beta')).toMatch(/answered at start: it answers \{/);
  expect(workerLogLines().join('\n')).not.toContain(WRONG_SECRET);
  // One bad account stops no other: alpha books while down and refused are named.
  const outcome = await book(bookingRequest({ supplier: 'alpha' }));
  expect(outcome.kind).toBe('confirmed');
});

test("a booking naming an account books there, with that account's profile, and its order is cancelled there", async () => {
  // beta answers pending for its first two listings: polls a second apart (a test schedule) keep the test short.
  const request = bookingRequest({
    supplier: 'beta',
    recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1 },
  });
  const outcome = await book(request);
  expect(outcome.kind).toBe('confirmed');
  const ref = request.customerReferenceNo;
  const books = beta.callsOf('book').filter((c) => c.body.customerReferenceNo === ref);
  expect(books).toHaveLength(1);
  // Its callbacks come back on beta's own path, checked with beta's secret by the receiver.
  expect(JSON.stringify(books[0]!.body)).toContain('http://127.0.0.1:9/callbacks/order-status/beta');
  expect(alpha.orders().some((o) => o.customerReferenceNo === ref)).toBe(false);
  expect((await getBookingState(client, ref)).supplier).toBe('beta');

  // The caller's cancellation knows nothing of accounts: the order run reads the booking's and cancels there.
  const quote = await cancelBooking(client, ref, { confirm: false }, { taskQueue });
  expect(quote.kind).toBe('quote');
  await awaitOrderOutcome(client, ref).catch(() => undefined);
  const fee = quote.kind === 'quote' ? quote.quote.fee : null;
  const answer = await cancelBooking(client, ref, { confirm: true, acceptedFee: fee ?? null }, { taskQueue });
  expect(answer.kind).toBe('cancel-requested');
  expect((await awaitOrderOutcome(client, ref)).kind).toBe('cancelled');
  expect(beta.callsOf('cancel').filter((c) => c.body.customerReferenceNo === ref)).toHaveLength(1);
  expect(alpha.calls('cancel')).toHaveLength(0);
});

test("the console's page of a booking names the account it is on", async () => {
  const request = bookingRequest({ supplier: 'delta' });
  expect((await book(request)).kind).toBe('confirmed');
  const operatorConsole = await startConsole({ client, taskQueue });
  try {
    const page = await (await fetch(`${operatorConsole.url}/booking?ref=${request.customerReferenceNo}`)).text();
    expect(page).toContain('On supplier account <code id="supplier-account">delta</code>');
  } finally {
    await operatorConsole.close();
  }
});

test("a booking naming none goes to its partner's default, the first account open to it", async () => {
  const request = bookingRequest();
  expect((await book(request)).kind).toBe('confirmed');
  const ref = request.customerReferenceNo;
  expect(alpha.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
  expect(beta.callsOf('book').some((c) => c.body.customerReferenceNo === ref)).toBe(false);
  expect((await getBookingState(client, ref)).supplier).toBe('alpha');
});

test.each([
  ['gamma', 'not open to this partner'],
  ['epsilon', 'no supplier account "epsilon"'],
])('a booking naming %s is refused before anything is sent, naming the field', async (supplier, why) => {
  expectWorkerWarnings(/^WARN Workflow failed/);
  const gammaBefore = gamma.calls().length;
  const alphaBefore = alpha.calls().length;
  const betaBefore = beta.calls.length;
  const request = bookingRequest({ supplier });
  const failure = await book(request).then(
    () => undefined,
    (err: unknown) => err as Error & { cause?: Error & { type?: string } },
  );
  expect(failure?.cause?.type).toBe('InvalidBookingRequest');
  expect(failure?.cause?.message).toContain(`supplier: `);
  expect(failure?.cause?.message).toContain(why);
  expect(gamma.calls().length).toBe(gammaBefore);
  expect(alpha.calls().length).toBe(alphaBefore);
  expect(beta.calls.length).toBe(betaBefore);
});

/**
 * A caller in another language names the account as the contract says (a plain `supplier` field), with Temporal's
 * own Python SDK and nothing of ours: the booking goes there, and one naming an account its partner may not use
 * fails with the refusal naming the field.
 */
test('a Python caller names the account in its request', async () => {
  const { stdout } = await promisify(execFile)('bash', ['scripts/install-clients.sh', 'python'], {
    cwd: path.resolve(__dirname, '../..'),
    timeout: 600_000,
  });
  const python = stdout.trim().split('\n').pop()!;
  expectWorkerWarnings(/^WARN Workflow failed/);
  const script = `
import asyncio, json, os, sys, uuid
from temporalio.client import Client, WorkflowFailureError
async def main():
    client = await Client.connect(sys.argv[1])
    results = {}
    for supplier in ["beta", "gamma"]:
        ref = str(uuid.uuid4())
        request = {"customerReferenceNo": ref, "ratePkgId": "pkg-standard-double", "supplier": supplier,
                   "holder": {"firstName": "Ada", "lastName": "Py", "email": "ada@example.com",
                              "phone": {"countryCode": "GB", "countryNumber": 44, "number": "2071234567"}},
                   "guests": [{"roomIndex": 0, "firstName": "Ada", "lastName": "Py", "nationalityCode": "GB",
                               "age": 36, "isChild": False}],
                   "recovery": {"testing": True, "delaysSeconds": [1], "repeatEverySeconds": 1}}
        handle = await client.start_workflow("bookingWorkflow", request, id="booking:" + ref, task_queue=sys.argv[2])
        try:
            outcome = await handle.result()
            results[supplier] = {"ref": ref, "kind": outcome["kind"]}
        except WorkflowFailureError as err:
            results[supplier] = {"ref": ref, "failed": str(err.cause)}
    print(json.dumps(results))
asyncio.run(main())
# The SDK's native runtime can crash at interpreter teardown, after the work (temporalio/sdk-python#300): leave at once.
sys.stdout.flush()
os._exit(0)
`;
  const run = await runProgram(python, ['-c', script, process.env.TEST_DEV_SERVER_ADDRESS!, taskQueue], {
    env: inheritedEnv(),
    cwd: dir,
    timeoutMs: 120_000,
  });
  expectExit(run, 0, 'the Python caller');
  const results = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<
    string,
    { ref: string; kind?: string; failed?: string }
  >;
  expect(results.beta?.kind).toBe('confirmed');
  expect(beta.callsOf('book').filter((c) => c.body.customerReferenceNo === results.beta?.ref)).toHaveLength(1);
  expect(results.gamma?.failed).toContain('supplier: the account "gamma" is not open to this partner');
  expect(gamma.orders()).toHaveLength(0);
}, 300_000);

/**
 * Each account is swept on its own: a sweep of beta lists beta with beta's credential on beta's QueryOrders queue, and
 * judges its orders by beta's statuses; an order made at beta by nobody's booking is its orphan. alpha hears nothing.
 */
test("an account's sweep lists that account alone and finds its orphans", async () => {
  expectWorkerWarnings(/^ERROR Reconciliation orphan/);
  const profile = config.accounts!.accounts.find((a) => a.id === 'beta')!.profile;
  const direct = createHttpSupplierClient({ baseUrl: beta.url, profile, tokens: staticToken('conformance-token') });
  const orphan = randomUUID();
  try {
    await direct.book(
      { customerReferenceNo: orphan, ratePkgId: 'pkg-standard-double', holder, guests },
      { sessionId: `orphan-${orphan}`, traceId: 'accounts-test' },
    );
  } finally {
    await direct.close();
  }
  const alphaListings = alpha.calls('queryOrders').length;
  const betaListings = beta.callsOf('queryOrders').length;
  const input: SweepWorkflowInput = {
    lookbackMinutes: 60,
    settleMinutes: 0,
    sliceMinutes: 60,
    cancelOrphans: false,
    checkInHours: 1,
    statuses: profile.orderStatus,
    supplier: 'beta',
  };
  const result = await client.workflow.execute('reconciliationSweepWorkflow', {
    taskQueue,
    workflowId: `reconciliation:${taskQueue}@beta:${randomUUID().slice(0, 8)}`,
    args: [input],
  });
  expect(result.orphans.map((o: { customerReferenceNo: string }) => o.customerReferenceNo)).toContain(orphan);
  expect(beta.callsOf('queryOrders').length).toBeGreaterThan(betaListings);
  expect(alpha.calls('queryOrders').length).toBe(alphaListings);
  // The finding's ERROR line, which a person follows up, names the account whose supplier holds the orphan.
  const line = await eventually(async () => workerLogLines().find((l) => l.includes(orphan)));
  expect(line).toMatch(/^ERROR Reconciliation orphan: /);
  expect(line).toContain('"supplierAccount":"beta"');
});

/**
 * A slow account holds only its own queue's slots. Two Books at delta answer after 15 s and take both of its slots;
 * a booking on alpha meanwhile is confirmed while both are still in flight (with one queue for every account, its
 * Book would wait for one of them). Then delta's two confirm too, one order each.
 */
test('a slow account holds only its own slots: a booking on another confirms while its Books are all in flight', async () => {
  const slow = [0, 1].map(() => bookingRequest({ supplier: 'delta', test: 'bookDelayMs=15000' }));
  const slowOutcomes = slow.map((request) => book(request));
  // Both orders are made at delta (the sandbox makes the order, then waits to answer): both Books are in flight.
  await eventually(async () => (delta.orders().length >= 2 ? true : undefined), 30_000);

  const quick = bookingRequest();
  expect((await book(quick)).kind).toBe('confirmed');
  for (const { customerReferenceNo } of slow) {
    expect((await getBookingState(client, customerReferenceNo)).stage).toBe('booking');
  }

  expect((await Promise.all(slowOutcomes)).map((o) => o.kind)).toEqual(['confirmed', 'confirmed']);
  for (const { customerReferenceNo } of slow) {
    expect(delta.orders().filter((o) => o.customerReferenceNo === customerReferenceNo)).toHaveLength(1);
  }
}, 90_000);

/**
 * A booking that continued as new keeps its account where an order run reads it. delta (open to this partner, not
 * its default) keeps the order pending for 16 listings a second apart, and the history limit makes the booking
 * continue as new while it polls. The order run then quotes on delta. Before, the continued run lost the account from
 * its memo (a new run takes the memo its start carried, not what the first run wrote), and the order run went to the
 * partner's default, alpha, which has no such order: a Cancel on another account's credential.
 */
test('a booking that continued as new keeps its account: its order run quotes on that account', async () => {
  const request = bookingRequest({
    supplier: 'delta',
    test: 'confirmAfterQueries=16',
    recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1, continueAsNewAfterEvents: 100 },
  });
  const ref = request.customerReferenceNo;
  expect((await book(request)).kind).toBe('confirmed');
  const latest = await client.workflow.getHandle(bookingWorkflowId(ref)).describe();
  expect(latest.raw.workflowExecutionInfo?.firstRunId).not.toBe(latest.runId);

  const quote = await cancelBooking(client, ref, { confirm: false }, { taskQueue });
  expect(quote.kind).toBe('quote');
  expect((await getOrderState(client, ref)).supplier).toBe('delta');
}, 90_000);

/**
 * A memo is only as good as whoever wrote it: a start may carry one. A booking started with a memo naming gamma (an
 * account of another partner) that never reaches its first step (its queue has no worker) keeps that memo; the
 * order run for its reference checks the account against this worker's file and refuses it, naming it. Before, it
 * took gamma, and its Cancel and QueryOrders would have gone out on another partner's credential.
 */
test("an order run refuses a booking's memo naming an account its partner may not use", async () => {
  const ref = randomUUID();
  const booking = await client.workflow.start('bookingWorkflow', {
    taskQueue: `nobody-${randomUUID().slice(0, 8)}`,
    workflowId: bookingWorkflowId(ref),
    args: [bookingRequest({ customerReferenceNo: ref })],
    memo: { supplier: 'gamma' },
  });
  try {
    const gammaBefore = gamma.calls().length;
    const answer = await cancelBooking(client, ref, { confirm: false }, { taskQueue }).catch((err: Error) => err);
    expect(JSON.stringify(answer)).not.toContain('"kind":"quote"');
    const outcome = await awaitOrderOutcome(client, ref);
    expect(outcome).toMatchObject({
      kind: 'not-cancellable',
      reason: expect.stringContaining('the account "gamma" is not open to this partner'),
    });
    expect(gamma.calls().length).toBe(gammaBefore);
  } finally {
    await booking.terminate('test over');
  }
});
