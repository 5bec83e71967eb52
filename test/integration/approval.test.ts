/**
 * Two answers to one price question, delivered in one workflow task: the validator must refuse the second,
 * or its caller is told "accepted" for an answer that changed nothing. On the dev server, whose update
 * delivery is the production server's (the Java test server delivers one update per task and drops the
 * rest when the workflow completes).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { approvePriceChangeUpdate, bookingStateQuery } from '../../src/api/contract/index';
import { basePriceFor } from '../../dev/sandbox/server';
import { connectDevServer } from '../harness/temporal';
import { bookingRequest, createBookingRig, eventually, startBooking } from '../harness/booking';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await connectDevServer();
});
afterAll(() => env?.teardown());

test('ask: two approvals in one workflow task → one is accepted, the other refused by the validator', async () => {
  // Both reach the worker in one task: they are sent while it is down, and it comes back to find them.
  const own = await createBookingRig(env, 'approve-twice', { maxCachedWorkflows: 0 });
  try {
    const request = bookingRequest({
      test: 'scenario=priceChanged&priceDeltaPercent=20&confirmAfterMs=0',
      expectedPrice: basePriceFor('PKG-ASK-TWICE'),
      ratePkgId: 'PKG-ASK-TWICE',
      priceChangePolicy: { onExceeded: 'ask' },
    });
    const handle = await startBooking(env, own, request);
    const state = await eventually(async () => {
      const s = await handle.query(bookingStateQuery);
      return s.stage === 'awaiting-price-approval' ? s : undefined;
    });
    await own.stopWorker();
    const answer = { approved: true, price: state.currentPrice! };
    const answers = Promise.allSettled([
      handle.executeUpdate(approvePriceChangeUpdate, { args: [answer] }),
      handle.executeUpdate(approvePriceChangeUpdate, { args: [{ ...answer, approvedBy: 'second' }] }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await own.restartWorker();
    const settled = await answers;
    expect(settled.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const refused = settled.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String(refused?.reason?.cause?.message)).toMatch(/already answered/);
    expect((await handle.result()).kind).toBe('confirmed');
  } finally {
    await own.close();
  }
});
