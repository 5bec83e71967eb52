/**
 * The checkAvail and book activities in the SDK's activity environment, against the sandbox over real
 * HTTP: every ending each one has, and for Book the Book rule's verdict (src/runtime/rules/book.ts):
 * refused before any work, surely not made, or an order that may exist. The workflow reads only these values.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { classifyBookFailure } from '../../src/runtime/rules/book';
import { createActivities } from '../../src/activities/booking';
import type { BookInput, BookOutcome } from '../../src/activities/types';
import { SupplierError } from '../../src/runtime/supplier/errors';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { staticToken } from '../../src/runtime/supplier/token';
import type { Sandbox } from '../../dev/sandbox/server';
import { bookRequest, deadPort, fastProfile, Resources } from './helpers';
import { expectWorkerWarnings, workerLogger } from '../harness/quiet-worker-logs';

const res = new Resources();
afterEach(() => res.closeAll());

let sandbox: Sandbox;
let client: SupplierClient;
beforeEach(async () => {
  sandbox = await res.sandbox();
  ({ client } = res.ticketClient(sandbox));
});

const context = (test?: string) => ({
  sessionId: `sess-${Math.random()}`,
  traceId: 'trace',
  ...(test ? { test } : {}),
});
const bookInput = (test?: string): BookInput => ({ ...bookRequest(), context: context(test) });

/** Runs an activity the way a worker does: inside an activity context, with heartbeats and cancellation. */
function run<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment(undefined, { logger: workerLogger() }).run(fn, ...args);
}

async function bookWith(test: string | undefined, supplier: SupplierClient = client, profile = fastProfile) {
  const input = bookInput(test);
  const outcome = await run(createActivities({ supplier, profile }).book, input);
  const orders = sandbox.orders().filter((o) => o.customerReferenceNo === input.customerReferenceNo);
  return { outcome, orders };
}

describe('book: every ending is a value', () => {
  test.each([
    ['confirmAfterMs=0', 'confirmed', 2],
    ['confirmAfterMs=60000', 'pending', 1],
  ])('an order (%s) → order, %s', async (test, state, status) => {
    const { outcome, orders } = await bookWith(test);
    expect(outcome).toMatchObject({ kind: 'order', order: { state, status } });
    expect(orders).toHaveLength(1);
  });

  test('refused before any work (book=429) → refused, nothing made', async () => {
    const { outcome, orders } = await bookWith('book=429');
    expect(outcome).toMatchObject({ kind: 'refused', errorType: 'SupplierRateLimited' });
    expect(orders).toEqual([]);
  });

  test('a 429 with Retry-After carries the hint to the workflow', async () => {
    sandbox.configure({ rateLimitRetryAfterSeconds: 7 });
    const { outcome } = await bookWith('book=429');
    expect(outcome).toMatchObject({ kind: 'refused', retryAfterMs: 7000 });
  });

  test('the connection never opened → refused', async () => {
    const dead = res.client({ baseUrl: `http://127.0.0.1:${await deadPort()}`, tokens: staticToken('t') });
    expect((await bookWith(undefined, dead)).outcome).toMatchObject({
      kind: 'refused',
      errorType: 'SupplierNetworkBeforeSend',
    });
  });

  test.each([
    ['book=400', 'SupplierBadRequest'],
    ['book=403', 'SupplierForbidden'],
    ['book=creditLimit', 'SupplierCreditLimit'],
  ])('surely not made (%s) → rejected, nothing made', async (test, errorType) => {
    const { outcome, orders } = await bookWith(test);
    expect(outcome).toMatchObject({ kind: 'rejected', errorType });
    expect(orders).toEqual([]);
  });

  test.each([
    ['book=504AfterCreate', 'SupplierGatewayTimeout', 1],
    ['book=504BeforeCreate', 'SupplierGatewayTimeout', 0],
    ['book=500AfterCreate', 'SupplierServerError', 1],
    ['book=hangAfterCreate', 'SupplierClientTimeout', 1],
    ['book=resetAfterCreate', 'SupplierNetworkAfterSend', 1],
    ['book=malformedAfterCreate', 'SupplierInvalidResponse', 1],
    ['scenario=unknownInternalError', 'SupplierServerError', 0],
  ])('the order may exist (%s) → ambiguous', async (test, errorType, made) => {
    const { outcome, orders } = await bookWith(test);
    expect(outcome).toMatchObject({ kind: 'ambiguous', errorType });
    expect(orders).toHaveLength(made);
  });

  test('a profile path the supplier does not serve (404) → ambiguous: an unknown answer is no proof', async () => {
    const profile = SupplierProfile.parse({ ...fastProfile, paths: { ...fastProfile.paths, book: '/api/trade/v9' } });
    const { client: other } = res.ticketClient(sandbox, profile);
    expect((await bookWith(undefined, other, profile)).outcome).toMatchObject({
      kind: 'ambiguous',
      errorType: 'SupplierNotFound',
    });
  });

  describe('answers only a live supplier gives', () => {
    async function answering(status: number, body: unknown): Promise<BookOutcome> {
      const server = http.createServer((req, reply) => {
        req.resume();
        req.on('end', () => reply.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      res.add(() => new Promise((resolve) => server.close(resolve)));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return (await bookWith(undefined, res.client({ baseUrl: url, tokens: staticToken('t') }))).outcome;
    }

    // Reported from a black-box run: the order was created, the booking ended `failed`.
    test('an envelope code no profile knows, on HTTP 200 → ambiguous', async () => {
      expect(await answering(200, { code: 100009999, msg: 'internal error' })).toMatchObject({
        kind: 'ambiguous',
        errorType: 'SupplierBusinessError',
      });
    });

    test('"duplicate operation" (the order exists already) → ambiguous, so it is looked up', async () => {
      expect(await answering(500, { code: 100001003, msg: 'duplicate' })).toMatchObject({ kind: 'ambiguous' });
      expect(await answering(200, { code: 100001003, msg: 'duplicate' })).toMatchObject({ kind: 'ambiguous' });
    });

    test('a 400 code on a 5xx status → ambiguous (the status says the supplier failed mid-way)', async () => {
      expect(await answering(502, { code: 100000400, msg: 'bad request' })).toMatchObject({ kind: 'ambiguous' });
    });

    test('an order in a status no profile knows → an order, pending (recovery follows it)', async () => {
      const order = { status: 9, customerReferenceNo: bookRequest().customerReferenceNo };
      expect(await answering(200, { code: 0, data: { hotelOrder: order } })).toMatchObject({
        kind: 'order',
        order: { state: 'pending', status: 9 },
      });
    });

    test('a code the profile marks "surely not made" → rejected; the same code unmarked → ambiguous', async () => {
      expect(await answering(200, { code: 100000404, msg: 'not found' })).toMatchObject({ kind: 'ambiguous' });
      const marked = SupplierProfile.parse({ book: { surelyNotMadeCodes: ['notFound'] } });
      const notFound = new SupplierError('SupplierNotFound', 'book: supplier code 100000404', {
        operation: 'book',
        httpStatus: 200,
        code: 100000404,
      });
      expect(classifyBookFailure(notFound, marked).kind).toBe('rejected');
      expect(classifyBookFailure(notFound, fastProfile).kind).toBe('ambiguous');
    });
  });
});

describe('checkAvail: expected answers are values, failures typed', () => {
  const check = (test?: string) =>
    run(createActivities({ supplier: client, profile: fastProfile }).checkAvail, {
      ratePkgId: 'PKG-ACT',
      context: context(test),
    });

  test('available, with the total gross price', async () => {
    expect(await check()).toEqual({ kind: 'available', price: expect.objectContaining({ currency: 'USD' }) });
  });
  test('sold out → unavailable, with the fallback candidates the sandbox offers', async () => {
    expect(await check('scenario=soldOut')).toEqual({
      kind: 'unavailable',
      status: 2,
      candidates: [
        {
          ratePkgId: 'PKG-ACT-r2-a',
          supplier: 2,
          name: 'Double Room (partner hotel)',
          price: expect.objectContaining({ currency: 'USD' }),
        },
        {
          ratePkgId: 'PKG-ACT-r2-b',
          supplier: 3,
          name: 'Twin Room (partner hotel)',
          price: expect.objectContaining({ currency: 'USD' }),
        },
      ],
    });
  });
  test('ARI changed → ari-changed', async () => {
    expect(await check('checkAvail=ariChanged')).toEqual({ kind: 'ari-changed' });
  });

  test.each([
    ['checkAvail=400', 'SupplierBadRequest', true],
    ['checkAvail=403', 'SupplierForbidden', true],
    ['checkAvail=429', 'SupplierRateLimited', false],
    ['checkAvail=500', 'SupplierServerError', false],
    ['checkAvail=malformed', 'SupplierInvalidResponse', false],
    ['checkAvail=hang', 'SupplierClientTimeout', false],
  ])('%s → ApplicationFailure %s (nonRetryable %s)', async (test, type, nonRetryable) => {
    // The SDK logs every activity that throws; these throw on purpose.
    expectWorkerWarnings(/^WARN Activity failed .*"activityType":"unknown"/);
    const err = await check(test).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type, nonRetryable });
  });
});
