/**
 * The client helper when the server answers "something went wrong, please retry" (gRPC UNKNOWN: the frontend's mask
 * over an internal error, as a production cluster gave once for a cancellation's Update-With-Start): the helper
 * sends the same update again, with the same update id, so the caller gets the answer and the work is done once.
 *
 * The answer is changed on the wire, by a gRPC proxy in front of the dev server: the real server does the work and
 * the proxy puts the masked error in place of its answer, the worst case for a retry (the update already ran). The
 * client has no gRPC retry interceptor, so what retries is the helper.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import {
  awaitOutcome,
  cancelBooking,
  orderWorkflowId,
  serverAskedToRetry,
  startBooking,
  type CancelBookingAnswer,
} from '../../src/api/client/index';
import { connectDevServer } from '../harness/temporal';
import { bookingRequest, createBookingRig, type BookingRig } from '../harness/booking';

const MULTI_OPERATION = '/temporal.api.workflowservice.v1.WorkflowService/ExecuteMultiOperation';
const MASKED = 'something went wrong, please retry (2738015394)';

/** One gRPC message out of a unary call's body (a 5-byte frame header, then the message). */
const message = (body: Buffer) => body.subarray(5, 5 + body.readUInt32BE(1));

/**
 * A plaintext gRPC proxy to `target`. While `maskLeft` > 0, an ExecuteMultiOperation is forwarded, its answer
 * awaited and thrown away, and the masked UNKNOWN sent instead; every request and discarded answer is kept.
 */
async function startProxy(target: string) {
  const upstream = http2.connect(`http://${target}`);
  const seen: Array<{ request: Buffer; discarded?: Buffer }> = [];
  const state = { maskLeft: 0, status: '2', text: MASKED };
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const forwarded = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !name.startsWith(':') || name === ':method' || name === ':path'),
    );
    const up = upstream.request(forwarded);
    const request: Buffer[] = [];
    const answer: Buffer[] = [];
    const mask = headers[':path'] === MULTI_OPERATION && state.maskLeft > 0;
    if (mask) state.maskLeft--;
    stream.on('data', (chunk: Buffer) => {
      request.push(chunk);
      up.write(chunk);
    });
    stream.on('end', () => up.end());
    let trailers: http2.OutgoingHttpHeaders = { 'grpc-status': '0' };
    let answered = false;
    up.on('response', (h) => {
      if (mask) return;
      const { ':status': status, ...rest } = h;
      // A trailers-only answer (an error) carries its grpc-status in the headers and ends there.
      answered = rest['grpc-status'] !== undefined;
      stream.respond({ ':status': status, ...rest }, answered ? { endStream: true } : { waitForTrailers: true });
    });
    up.on('trailers', (t) => (trailers = { ...t }));
    up.on('data', (chunk: Buffer) => (mask ? answer.push(chunk) : stream.write(chunk)));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    up.on('end', () => {
      if (headers[':path'] === MULTI_OPERATION)
        seen.push({ request: Buffer.concat(request), ...(mask ? { discarded: Buffer.concat(answer) } : {}) });
      if (!mask) {
        if (!answered) stream.end();
        return;
      }
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': state.status, 'grpc-message': state.text },
        { endStream: true },
      );
    });
    up.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    /** The update id of each ExecuteMultiOperation that went through, in order. */
    updateIds: () =>
      seen.map(
        ({ request }) =>
          temporal.api.workflowservice.v1.ExecuteMultiOperationRequest.decode(message(request)).operations[1]!
            .updateWorkflow!.request!.meta!.updateId,
      ),
    /** The run the server started in the latest answer the proxy threw away. */
    lastDiscardedRunId: () => {
      const discarded = [...seen].reverse().find((s) => s.discarded)!.discarded!;
      return temporal.api.workflowservice.v1.ExecuteMultiOperationResponse.decode(message(discarded)).responses[0]!
        .startWorkflow!.runId;
    },
    close: async () => {
      upstream.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let client: Client;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'client-retry');
  proxy = await startProxy(env.address);
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
test.each([
  { answer: 'a masked UNKNOWN', status: '2', text: MASKED },
  {
    answer: 'an update aborted because its workflow task failed',
    status: '9',
    text: 'Unable to perform workflow execution update due to unexpected workflow task failure.',
  },
  {
    answer: 'an Update-With-Start whose start lost a race',
    status: '14',
    text: 'Workflow was not started: StartDeduped',
  },
])('$answer is asked again with the same id: the caller gets the quote, one run did it', async ({ status, text }) => {
  const ref = await confirmedReference();
  const before = proxy.updateIds().length;
  Object.assign(proxy.state, { maskLeft: 1, status, text });
  let quote: CancelBookingAnswer;
  try {
    quote = await cancelBooking(client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
  } finally {
    Object.assign(proxy.state, { maskLeft: 0, status: '2', text: MASKED });
  }
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
});

test('a server that keeps asking is retried a few times, then its answer reaches the caller', async () => {
  const ref = await confirmedReference();
  const before = proxy.updateIds().length;
  proxy.state.maskLeft = 100;
  try {
    const error = await cancelBooking(client, ref, { confirm: false }, { taskQueue: rig.taskQueue }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(serverAskedToRetry(error)).toBe(true);
  } finally {
    proxy.state.maskLeft = 0;
  }
  const ids = proxy.updateIds().slice(before);
  expect(ids).toHaveLength(5);
  expect(new Set(ids).size).toBe(1);
});
