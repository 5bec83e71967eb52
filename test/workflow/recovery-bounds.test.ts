/**
 * A production worker (RECOVERY_TESTING off) holds a booking's recovery settings to the bounds: a request that
 * would re-send Book every second, or that asks for a test schedule, fails the workflow with
 * InvalidBookingRequest naming the field, before anything reaches the supplier.
 */
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectTimeSkipping } from '../harness/temporal';
import { book, bookingRequest, createBookingRig, eventually, startBooking, type BookingRig } from '../harness/booking';
import { bookingStateQuery, type BookingRequest } from '../../src/api/contract/index';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';

let env: TestWorkflowEnvironment;
let rig: BookingRig;

beforeAll(async () => {
  env = await connectTimeSkipping();
  rig = await createBookingRig(env, 'recovery-bounds-wf', { recoveryTesting: false });
});
afterAll(async () => {
  await rig?.close();
  await env?.teardown();
});

/** Every supplier call made for this booking: by its reference, its session or its trace (the workflow id). */
const supplierCallsFor = (ref: string) =>
  rig.sandbox
    .calls()
    .filter((c) => c.customerReferenceNos?.includes(ref) || c.sessionId?.includes(ref) || c.traceId?.includes(ref));

/** The workflow's failure, which must be InvalidBookingRequest. */
async function refusal(request: BookingRequest): Promise<ApplicationFailure> {
  expectWorkerWarnings(/^WARN Workflow failed .*"workflowType":"bookingWorkflow"/);
  const handle = await startBooking(env, rig, request);
  const error: unknown = await handle.result().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('InvalidBookingRequest');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  return cause as ApplicationFailure;
}

test('Book re-sent every second is refused, naming each field and its bound; nothing sent', async () => {
  const request = bookingRequest({
    test: 'confirmAfterMs=0',
    recovery: { rebookAfterSeconds: 1, maxBookAttempts: 20, delaysSeconds: [1] },
  });
  const cause = await refusal(request);
  expect(cause.message).toContain('recovery.rebookAfterSeconds: must be at least 600');
  expect(cause.message).toContain('recovery.maxBookAttempts: must be at most 3');
  expect(cause.message).toContain('recovery.delaysSeconds.0: must be at least 5');
  expect(supplierCallsFor(request.customerReferenceNo)).toEqual([]);
});

test('a test schedule is refused by a worker without RECOVERY_TESTING; nothing sent', async () => {
  const request = bookingRequest({
    test: 'confirmAfterMs=0',
    recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1 },
  });
  const cause = await refusal(request);
  expect(cause.message).toMatch(/recovery\.testing: honoured only by a worker with RECOVERY_TESTING=on/);
  expect(supplierCallsFor(request.customerReferenceNo)).toEqual([]);
});

test('the same worker books a request within the bounds', async () => {
  const request = bookingRequest({
    test: 'confirmAfterMs=0',
    recovery: { delaysSeconds: [5, 10], repeatEverySeconds: 60, maxBookAttempts: 3, deadlineSeconds: 1200 },
  });
  expect((await book(env, rig, request)).kind).toBe('confirmed');
  // And the filter the refusals are checked with sees a booking's calls.
  expect(supplierCallsFor(request.customerReferenceNo).map((c) => c.op)).toEqual(
    expect.arrayContaining(['checkAvail', 'book']),
  );
});

/**
 * A booking's recovery settings are judged once, when it starts. A run resumed from continue-as-new re-reads its
 * input, and must not be failed by bounds or a switch deployed since: its Book has been sent.
 */
test('a run resumed after a deploy that turned RECOVERY_TESTING off goes on and resolves the booking', async () => {
  // Sticky execution off: the Java test server does not move a task off a stopped worker's sticky queue.
  const testRig = await createBookingRig(env, 'resumed-after-deploy-wf', { maxCachedWorkflows: 0 });
  try {
    const request = bookingRequest({
      test: 'book=504AfterCreate&confirmAfterQueries=30',
      // Polls at 0 and 1 s, a 10-minute wait, then every second: 100 events and it continues-as-new.
      recovery: { testing: true, delaysSeconds: [1, 600], repeatEverySeconds: 1, continueAsNewAfterEvents: 100 },
    });
    const handle = await startBooking(env, testRig, request);
    // Time stands still while nothing awaits a result: the booking waits on its 10-minute timer.
    await eventually(async () => {
      const state = await handle.query(bookingStateQuery);
      return state.polls.length >= 2 ? state : undefined;
    });
    await testRig.restartWorker({ recoveryTesting: false });
    const outcome = await env.client.workflow.getHandle(handle.workflowId).result();
    expect(outcome.kind).toBe('confirmed');
    const latest = await env.client.workflow.getHandle(handle.workflowId).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
  } finally {
    await testRig.close();
  }
});
