/**
 * The sendCancel activity against the sandbox over real HTTP, and the Cancel rule's verdict on each ending
 * (src/runtime/rules/cancel.ts): taken, refused before any work, surely not done by this send, or possibly done.
 * The order workflow reads only these values; whether a `rejected` is a refusal depends on the sends before it.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { classifyCancelFailure } from '../../src/runtime/rules/cancel';
import { createOrderActivities } from '../../src/activities/order';
import type { CancelOrderInput } from '../../src/activities/types';
import { SupplierError } from '../../src/runtime/supplier/errors';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { staticToken } from '../../src/runtime/supplier/token';
import type { Sandbox } from '../../dev/sandbox/server';
import { bookRequest, deadPort, fastProfile, Resources } from './helpers';
import { workerLogger } from '../harness/quiet-worker-logs';

const res = new Resources();
afterEach(() => res.closeAll());

let sandbox: Sandbox;
let client: SupplierClient;
beforeEach(async () => {
  sandbox = await res.sandbox();
  ({ client } = res.ticketClient(sandbox));
});

function run<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment(undefined, { logger: workerLogger() }).run(fn, ...args);
}

/** A confirmed order booked with `test` (Cancel faults are read from the Book's Test header), and its Cancel input. */
async function confirmedOrder(test: string): Promise<CancelOrderInput> {
  const request = bookRequest();
  const context = {
    sessionId: `sess-${request.customerReferenceNo}`,
    traceId: 'trace',
    test: `confirmAfterMs=0&${test}`,
  };
  const order = await client.book(request, context);
  return {
    customerReferenceNo: request.customerReferenceNo,
    supplierReferenceNo: order.supplierReferenceNo ?? '',
    reason: 'test',
    context: { sessionId: context.sessionId, traceId: 'trace' },
  };
}

/** Cancel makes no Temporal call: the order activities' client is never reached here. */
const NO_TEMPORAL = undefined as never;
const sendCancel = (input: CancelOrderInput, supplier: SupplierClient = client, profile = fastProfile) =>
  run(createOrderActivities({ supplier, profile, client: NO_TEMPORAL }).sendCancel, input);

const taken = (ref: string) => sandbox.orders().find((o) => o.customerReferenceNo === ref)?.cancel !== undefined;

describe('sendCancel: every ending is a value', () => {
  test('taken → accepted, with the service fee', async () => {
    const input = await confirmedOrder('');
    expect(await sendCancel(input)).toMatchObject({ kind: 'accepted', serviceFee: { amount: 0 } });
    expect(taken(input.customerReferenceNo)).toBe(true);
  });

  test('refused before any work (429) → refused: send again', async () => {
    const input = await confirmedOrder('cancel=429');
    expect(await sendCancel(input)).toMatchObject({ kind: 'refused', errorType: 'SupplierRateLimited' });
    expect(taken(input.customerReferenceNo)).toBe(false);
  });

  test('the connection never opened → refused', async () => {
    const dead = res.client({ baseUrl: `http://127.0.0.1:${await deadPort()}`, tokens: staticToken('t') });
    const input = await confirmedOrder('');
    expect(await sendCancel(input, dead)).toMatchObject({ kind: 'refused', errorType: 'SupplierNetworkBeforeSend' });
  });

  test('400 "cannot be cancelled" → rejected: this send did nothing (a refusal only if no earlier send may have acted)', async () => {
    const input = await confirmedOrder('cancel=refuse');
    expect(await sendCancel(input)).toMatchObject({ kind: 'rejected', errorType: 'SupplierBadRequest' });
    expect(taken(input.customerReferenceNo)).toBe(false);
  });

  test.each([
    ['cancel=504AfterAccept', 'SupplierGatewayTimeout', true],
    ['cancel=lost', 'SupplierGatewayTimeout', false],
    ['cancel=unknownCode', 'SupplierBusinessError', true],
  ])('it may have cancelled (%s) → ambiguous, settled by QueryOrders', async (test, errorType, wasTaken) => {
    const input = await confirmedOrder(test);
    expect(await sendCancel(input)).toMatchObject({ kind: 'ambiguous', errorType });
    expect(taken(input.customerReferenceNo)).toBe(wasTaken);
  });

  test('a repeat after the first was taken, refused 400 (cancelRepeat=refuse) → rejected, as the first would be', async () => {
    const input = await confirmedOrder('cancel=504AfterAccept&cancelTimes=1&cancelRepeat=refuse');
    expect((await sendCancel(input)).kind).toBe('ambiguous');
    // The activity cannot tell the two 400s apart: the workflow does, by the send before (see order.test.ts).
    expect(await sendCancel(input)).toMatchObject({ kind: 'rejected' });
  });
});

describe('the rule on its own', () => {
  const err = (httpStatus: number | undefined, code?: number, type: SupplierError['type'] = 'SupplierBusinessError') =>
    new SupplierError(type, 'x', {
      operation: 'cancel',
      ...(httpStatus ? { httpStatus } : {}),
      ...(code ? { code } : {}),
    });

  test('only the profile decides what proves nothing was done', () => {
    const profile = SupplierProfile.parse({});
    expect(classifyCancelFailure(err(404, 100000404, 'SupplierNotFound'), profile).kind).toBe('rejected');
    expect(classifyCancelFailure(err(500, 100000500, 'SupplierServerError'), profile).kind).toBe('ambiguous');
    expect(classifyCancelFailure(err(200, 100000404), profile).kind).toBe('rejected');
    const narrow = SupplierProfile.parse({ cancel: { surelyNotDoneStatuses: [401], surelyNotDoneCodes: [] } });
    expect(classifyCancelFailure(err(404, 100000404, 'SupplierNotFound'), narrow).kind).toBe('ambiguous');
    expect(classifyCancelFailure(new Error('boom'), profile).kind).toBe('ambiguous');
  });
});
