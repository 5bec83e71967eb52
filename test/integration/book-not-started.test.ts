/**
 * A Book that no worker starts was never sent, and the booking does not wait for it without a ceiling. The booking's
 * first step chooses its account (delta) and checks availability in the main worker; Book then goes to delta's own
 * queue, which nobody polls at first (the account's workers down, or the account gone from the file). The Book waits
 * at most BOOK_START_WITHIN_SECONDS to be started and counts as refused before any work (`BookNotStarted`); the
 * booking sends it again within the first Book's refusal window (and past that window would end `failed`, no order
 * made, as for any refusal). Once delta's worker is back, the booking is confirmed with one Book at the supplier.
 * Before, the Book waited on the queue for ever, and the booking with it, deaf to everything but a worker.
 * On the dev server: this file takes the minute a Book waits to be started.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bookingWorkflowId, BOOK_START_WITHIN_SECONDS } from '../../src/api/contract/index';
import type { bookingWorkflow } from '../../src/workflows';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import { staticToken } from '../../src/runtime/supplier/token';
import { createBookingWorker } from '../../src/worker';
import { bookAnswer, specOrder, startSpecSupplier, type SpecSupplier } from '../fixtures/spec-supplier';
import { bookingRequest, eventually, testProfile } from '../harness/booking';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { connectDevServer, workflowBundle } from '../harness/temporal';

let env: TestWorkflowEnvironment;
let spec: SpecSupplier;

beforeAll(async () => {
  env = await connectDevServer();
  spec = await startSpecSupplier();
});
afterAll(async () => {
  await spec?.close();
  await env?.teardown();
});

test("a Book on an account's queue that no worker starts is refused before any work and sent again, never waited for without a ceiling", async () => {
  // delta's Book-and-Cancel queue runs activities only.
  expectWorkerWarnings(/^WARN No workflows registered/);
  spec.script({ book: (body) => bookAnswer(specOrder(String(body.customerReferenceNo))) });
  const supplier = createHttpSupplierClient({ baseUrl: spec.url, profile: testProfile, tokens: staticToken('t') });
  const taskQueue = `book-not-started-${randomUUID().slice(0, 8)}`;
  const workerOf = () =>
    createBookingWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      supplier,
      profile: testProfile,
      workflowBundle: workflowBundle(),
      accounts: [{ id: 'delta', partners: ['*'], supplier, profile: testProfile }],
    });
  const request = bookingRequest({ supplier: 'delta' });
  const ref = request.customerReferenceNo;
  const first = await workerOf();
  try {
    // Only the main queue's worker runs: delta's own queues (Book, Cancel, QueryOrders) have no poller.
    const handle = await first.main.runUntil(async () => {
      const started = await env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
        taskQueue,
        workflowId: bookingWorkflowId(ref),
        args: [request],
      });
      // The first Book times out unstarted, and a second is scheduled: refused before any work, sent again.
      await eventually(
        async () => {
          const { events } = await started.fetchHistory();
          const books = events?.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'book');
          return (books?.length ?? 0) >= 2 ? true : undefined;
        },
        (BOOK_START_WITHIN_SECONDS + 30) * 1000,
      );
      return started;
    });
    expect(spec.callsOf('book')).toHaveLength(0);
    // The first worker's other queues were never polled: release them, so a whole worker can take their place.
    await Promise.all([first.queryOrders, ...first.accounts].map((w) => w.runUntil(Promise.resolve())));

    // delta's worker is back: the Book sent again is started, and the booking confirmed, one order at the supplier.
    const second = await workerOf();
    const outcome = await second.runUntil(handle.result());
    expect(outcome.kind).toBe('confirmed');
    expect(spec.callsOf('book').filter((c) => c.body.customerReferenceNo === ref)).toHaveLength(1);

    const history = await handle.fetchHistory();
    const books = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'book',
    );
    expect(books.length).toBeGreaterThan(1);
    const timedOut = (history.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes);
    expect(
      timedOut.map((e) => e.activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo?.timeoutType),
    ).toEqual([temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START]);
    for (const e of books) {
      expect(Number(e.activityTaskScheduledEventAttributes?.scheduleToStartTimeout?.seconds)).toBe(
        BOOK_START_WITHIN_SECONDS,
      );
    }
  } finally {
    await supplier.close();
  }
}, 180_000);
