/**
 * The client helper when the server answers "something went wrong, please retry" (gRPC UNKNOWN: the frontend's mask
 * over an internal error, as a production cluster gave once for a cancellation's Update-With-Start): the helper
 * sends the same update again, with the same update id, so the caller gets the answer and the work is done once.
 *
 * The answer is changed on the wire, by a gRPC proxy in front of the dev server: the real server does the work and
 * the proxy puts the masked error in place of its answer, the worst case for a retry (the update already ran). The
 * client has no gRPC retry interceptor, so what retries is the helper.
 */
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  awaitOutcome,
  cancelBooking,
  orderWorkflowId,
  serverAskedToRetry,
  startBooking,
} from '../../src/api/client/index';
import {
  ASK_AGAIN_ANSWERS,
  MASKED_PLEASE_RETRY,
  startAnswerProxy,
  type AnswerProxy,
} from '../fixtures/grpc-answer-proxy';
import { connectDevServer } from '../harness/temporal';
import { bookingRequest, createBookingRig, type BookingRig } from '../harness/booking';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let proxy: AnswerProxy;
let client: Client;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'client-retry');
  proxy = await startAnswerProxy(env.address);
  // No gRPC retry interceptor: only the helper may retry.
  client = new Client({ connection: await Connection.connect({ address: proxy.address, interceptors: [] }) });
});
afterAll(async () => {
  await client?.connection.close();
  await proxy?.close();
  await rig?.close();
  await env?.teardown();
});

async function confirmedReference(): Promise<string> {
  const request = bookingRequest({ test: 'confirmAfterMs=0&freeCancel=0' });
  await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  expect((await awaitOutcome(env.client, request.customerReferenceNo)).kind).toBe('confirmed');
  return request.customerReferenceNo;
}

/**
 * Each answer the helper asks again for, with the same update id. The real server did the work each time (the proxy
 * threw its answer away), so the retry finds the update already done: the caller gets the quote, one run, one update.
 *  - UNKNOWN 'please retry': the frontend's mask over an internal error.
 *  - FAILED_PRECONDITION, WorkflowNotReady: the server aborts an update whose workflow task failed (a run about to
 *    continue as new met new signals: the task is failed with UNHANDLED_COMMAND and its updates aborted); nothing
 *    was accepted, and the same update asked again reaches the run that follows. Found by the chaos class of waits
 *    (seed 2026112901): two confirms got this error instead of an answer.
 *  - UNAVAILABLE 'StartDeduped': an Update-With-Start that lost a race with another start of the same id (a
 *    callback's check, say); the update was not applied, and the server's code says to retry the whole operation.
 *    Seen in the chaos deploy smoke: a confirm left unanswered, its cancellation never sent.
 */
test.each(ASK_AGAIN_ANSWERS)(
  '$answer is asked again with the same id: the caller gets the quote, one run did it',
  async ({ status, text }) => {
    const ref = await confirmedReference();
    const before = proxy.updateIds().length;
    const quote = await proxy.masking({ status, text }, () =>
      cancelBooking(client, ref, { confirm: false }, { taskQueue: rig.taskQueue }),
    );
    expect(quote).toMatchObject({ kind: 'quote', quote: { basis: 'policy', fee: { currency: 'USD' } } });

    const [first, second, ...more] = proxy.updateIds().slice(before);
    expect(more).toEqual([]);
    expect(first).toBeTruthy();
    expect(second).toBe(first);
    // The run the first (discarded) answer started is the latest: the retry found its update, started none.
    const order = env.client.workflow.getHandle(orderWorkflowId(ref));
    expect((await order.describe()).runId).toBe(proxy.lastDiscardedRunId());
    const events = (await order.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
  },
);

test('a server that keeps asking is retried a few times, then its answer reaches the caller', async () => {
  const ref = await confirmedReference();
  const before = proxy.updateIds().length;
  const error = await proxy.masking({ status: '2', text: MASKED_PLEASE_RETRY, times: 100 }, () =>
    cancelBooking(client, ref, { confirm: false }, { taskQueue: rig.taskQueue }).then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
  expect(serverAskedToRetry(error)).toBe(true);
  const ids = proxy.updateIds().slice(before);
  expect(ids).toHaveLength(5);
  expect(new Set(ids).size).toBe(1);
});
