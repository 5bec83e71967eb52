/**
 * Order-status callbacks end to end over real HTTP: the sandbox books with a callback URL, sends signed
 * callbacks (retried, duplicated, reordered on request) to the receiver, which verifies them and passes
 * each on once; unverified ones are refused with 401 and counted. The workflows are a recording fake here
 * (test/workflow covers the signal's effect). Also Cancel through the supplier client.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CallbackDeferredError,
  startCallbackReceiver,
  verifyCallback,
  timestampedSignature,
  CALLBACK_PATH,
  type CallbackReceiver,
} from '../../src/servers/callbacks/server';
import { CALLBACK_METRICS } from '../../src/runtime/observability/definitions';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import {
  accountCallbackUrl,
  readAccountsFile,
  readCallbackAccounts,
  sharedCallbackSecrets,
} from '../../src/runtime/config/accounts';
import { parseScrape, sampleValue } from '../fixtures/prometheus';
import { bookRequest, fastProfile, Resources } from './helpers';

const SECRET = 'callback-secret-for-tests-0123456789';
const resources = new Resources();
afterEach(() => resources.closeAll());

interface Signalled {
  customerReferenceNo: string;
  status?: number;
}

async function receiver(
  options: { profile?: SupplierProfile; owner?: 'booking' | 'order' | 'none'; fail?: () => boolean } = {},
): Promise<{ receiver: CallbackReceiver; signalled: Signalled[] }> {
  const signalled: Signalled[] = [];
  const r = await startCallbackReceiver({
    port: 0,
    profile: options.profile ?? fastProfile,
    secret: SECRET,
    target: {
      async signal(update) {
        if (options.fail?.()) throw new Error('Temporal unavailable');
        signalled.push(update);
        return options.owner ?? 'booking';
      },
    },
  });
  resources.add(() => r.close());
  return { receiver: r, signalled };
}

async function until<T>(check: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}${CALLBACK_PATH}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('the receiver', () => {
  test('a signed callback is passed on once; a duplicate within the minute is not', async () => {
    const { receiver: r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-1', status: 2, unknownField: { x: 1 } });
    expect((await post(r.url, body, { 'x-signature': sign(body) })).status).toBe(200);
    expect((await post(r.url, body, { 'x-signature': sign(body) })).status).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-1', status: 2 }]);
    expect(r.stats()).toMatchObject({ received: 2, duplicates: 1, signalled: { booking: 1 } });
  });

  test.each([
    ['no signature', {}],
    ['a wrong signature', { 'x-signature': 'sha256=00' }],
    ['a signature made with another secret', { 'x-signature': 'SIGN_OTHER' }],
  ])('a callback with %s is refused with 401, counted, and never passed on', async (_name, headers) => {
    const { receiver: r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-2', status: 3 });
    const h = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, v === 'SIGN_OTHER' ? sign(body, 'another-secret-0123456789') : v]),
    );
    const res = await post(r.url, body, h);
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(text).not.toContain(SECRET);
    expect(signalled).toEqual([]);
    expect(r.stats().unverified).toBe(1);
  });

  test('a shared-secret profile compares the header with the secret; a body without a reference is 400', async () => {
    const profile = SupplierProfile.parse({ callbacks: { verification: 'shared-secret', header: 'X-Callback-Token' } });
    const { receiver: r, signalled } = await receiver({ profile });
    const body = JSON.stringify({ data: { hotelOrder: { customerReferenceNo: 'ref-3', status: 2 } } });
    expect((await post(r.url, body, { 'x-callback-token': SECRET })).status).toBe(200);
    expect((await post(r.url, body, { 'x-callback-token': 'nope' })).status).toBe(401);
    expect((await post(r.url, '{"orderId":1}', { 'x-callback-token': SECRET })).status).toBe(400);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-3', status: 2 }]);
  });

  test('when Temporal cannot be reached the answer is 503 (the supplier sends it again), and the retry goes through', async () => {
    let failures = 1;
    const { receiver: r, signalled } = await receiver({ fail: () => failures-- > 0 });
    const body = JSON.stringify({ customerReferenceNo: 'ref-4', status: 2 });
    expect((await post(r.url, body, { 'x-signature': sign(body) })).status).toBe(503);
    expect((await post(r.url, body, { 'x-signature': sign(body) })).status).toBe(200);
    expect(signalled).toHaveLength(1);
    expect(r.stats()).toMatchObject({ failed: 1, signalled: { booking: 1 } });
  });

  test('a callback the target defers (the order was read moments ago) is 503 with Retry-After, counted apart; sent again later it goes through', async () => {
    let defer = true;
    const signalled: Signalled[] = [];
    const r = await startCallbackReceiver({
      port: 0,
      profile: fastProfile,
      secret: SECRET,
      target: {
        async signal(update) {
          if (defer) throw new CallbackDeferredError(42);
          signalled.push(update);
          return 'order';
        },
      },
    });
    resources.add(() => r.close());
    const body = JSON.stringify({ customerReferenceNo: 'ref-deferred', status: 3 });
    const first = await post(r.url, body, { 'x-signature': sign(body) });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('42');
    defer = false;
    expect((await post(r.url, body, { 'x-signature': sign(body) })).status).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-deferred', status: 3 }]);
    expect(r.stats()).toMatchObject({ deferred: 1, failed: 0, signalled: { order: 1 } });
  });

  test('GET /metrics counts every callback by what became of it, in the Prometheus text format', async () => {
    let temporalDown = true;
    const r = await startCallbackReceiver({
      port: 0,
      profile: fastProfile,
      secret: SECRET,
      target: {
        async signal({ customerReferenceNo }) {
          if (customerReferenceNo === 'ref-down' && temporalDown) {
            temporalDown = false;
            throw new Error('Temporal unavailable');
          }
          return customerReferenceNo === 'ref-order'
            ? 'order'
            : customerReferenceNo === 'ref-gone'
              ? 'none'
              : 'booking';
        },
      },
    });
    resources.add(() => r.close());
    const signed = async (payload: object) => {
      const body = JSON.stringify(payload);
      return (await post(r.url, body, { 'x-signature': sign(body) })).status;
    };
    // Served on the admin listener (loopback) only: the public one answers neither path.
    expect((await fetch(`${r.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${r.url}/callbacks/stats`)).status).toBe(404);
    const before = parseScrape(await (await fetch(`${r.adminUrl}/metrics`)).text());
    // Every known series is there from the start, at 0 (so rate() and increase() see the first step).
    expect(before.types.get('booking_callbacks_total')).toBe('counter');
    for (const result of CALLBACK_METRICS.callbacks.values.result) {
      expect(before.samples).toContainEqual({ name: 'booking_callbacks_total', labels: { result }, value: 0 });
    }

    expect(await signed({ customerReferenceNo: 'ref-booking', status: 2 })).toBe(200);
    expect(await signed({ customerReferenceNo: 'ref-booking', status: 2 })).toBe(200);
    expect(await signed({ customerReferenceNo: 'ref-order', status: 3 })).toBe(200);
    expect(await signed({ customerReferenceNo: 'ref-gone', status: 2 })).toBe(200);
    expect(await signed({ customerReferenceNo: 'ref-down', status: 2 })).toBe(503);
    expect(await signed({ orderId: 7 })).toBe(400);
    expect((await post(r.url, '{"customerReferenceNo":"ref-forged","status":2}')).status).toBe(401);
    expect((await post(r.url, '{"customerReferenceNo":"ref-forged"}', { 'x-signature': 'sha256=00' })).status).toBe(
      401,
    );
    expect((await post(r.url, 'x'.repeat(70 * 1024), { 'x-signature': 'sha256=00' })).status).toBe(413);

    const res = await fetch(`${r.adminUrl}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const scrape = parseScrape(await res.text());
    const count = (result: string) => sampleValue(scrape, 'booking_callbacks_total', { result });
    expect(
      Object.fromEntries(CALLBACK_METRICS.callbacks.values.result.map((result) => [result, count(result)])),
    ).toEqual({
      'signalled-booking': 1,
      'signalled-order': 1,
      'unknown-reference': 1,
      duplicate: 1,
      unverified: 2,
      invalid: 1,
      'too-large': 1,
      failed: 1,
      deferred: 0,
    });
    // The same counts as the JSON stats, and nothing on the endpoint names a reference.
    expect(r.stats()).toMatchObject({ received: 9, unverified: 2, invalid: 1, tooLarge: 1, failed: 1, duplicates: 1 });
    expect(await (await fetch(`${r.adminUrl}/callbacks/stats`)).json()).toEqual(r.stats());
    expect(scrape.samples.every((s) => !JSON.stringify(s).includes('ref-'))).toBe(true);
  });

  test('verifyCallback accepts the hex HMAC with or without its sha256= prefix', () => {
    const raw = Buffer.from('{"customerReferenceNo":"r"}');
    const hex = createHmac('sha256', SECRET).update(raw).digest('hex');
    expect(verifyCallback('hmac-sha256', SECRET, raw, hex)).toBe(true);
    expect(verifyCallback('hmac-sha256', SECRET, raw, `sha256=${hex.toUpperCase()}`)).toBe(true);
    expect(verifyCallback('hmac-sha256', SECRET, raw, undefined)).toBe(false);
  });

  test('hmac-sha256-timestamp signs `<timestamp>.<body>`: the timestamp header is read by the name in the profile', async () => {
    const raw = Buffer.from('{"customerReferenceNo":"r"}');
    const t = String(Math.floor(Date.now() / 1000));
    const hex = timestampedSignature(SECRET, t, raw);
    expect(hex).toBe(createHmac('sha256', SECRET).update(`${t}.${raw.toString()}`).digest('hex'));
    expect(verifyCallback('hmac-sha256-timestamp', SECRET, raw, `sha256=${hex}`, t)).toBe(true);
    expect(verifyCallback('hmac-sha256-timestamp', SECRET, raw, hex, String(Number(t) + 1))).toBe(false);
    expect(verifyCallback('hmac-sha256-timestamp', SECRET, raw, hex, undefined)).toBe(false);

    const profile = SupplierProfile.parse({
      callbacks: { verification: 'hmac-sha256-timestamp', header: 'X-Sig', timestampHeader: 'X-Sig-Time' },
    });
    const { receiver: r, signalled } = await receiver({ profile });
    const body = JSON.stringify({ customerReferenceNo: 'ref-ts', status: 2 });
    const signature = timestampedSignature(SECRET, t, body);
    expect((await post(r.url, body, { 'x-sig': signature, 'x-signature-timestamp': t })).status).toBe(401);
    expect((await post(r.url, body, { 'x-sig': signature, 'x-sig-time': t })).status).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-ts', status: 2 }]);
  });
});

describe('callback secrets in the accounts file', () => {
  test("the receiver reads each account's callbackSecretFile (relative to the file) and no credential; a bad one is named, never its content", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callback-accounts-'));
    resources.add(async () => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'alpha-callback'), 'alpha-callback-secret-0123456789\n');
    writeFileSync(path.join(dir, 'short-callback'), 'short-secret');
    writeFileSync(path.join(dir, 'token'), 'a-supplier-token');
    const entry = (id: string, extra: object) => ({
      id,
      baseUrl: 'https://supplier.example',
      // The receiver never opens credential files: beta's does not exist.
      credentials: { tokenFile: id === 'beta' ? 'missing-token' : 'token' },
      partners: ['*'],
      ...extra,
    });
    const file = path.join(dir, 'accounts.json');
    writeFileSync(
      file,
      JSON.stringify({
        accounts: [
          entry('alpha', {
            callbackSecretFile: 'alpha-callback',
            profile: { callbacks: { verification: 'hmac-sha256' } },
          }),
          entry('beta', {}),
          entry('gamma', { callbackSecretFile: 'no-such-file' }),
          entry('delta', { callbackSecretFile: 'short-callback' }),
        ],
      }),
    );
    const { accounts, leftOut } = readCallbackAccounts(file);
    expect(
      accounts.map(({ id, secret, profile }) => ({ id, secret, verification: profile.callbacks.verification })),
    ).toEqual([
      { id: 'alpha', secret: 'alpha-callback-secret-0123456789', verification: 'hmac-sha256' },
      { id: 'beta', secret: undefined, verification: fastProfile.callbacks.verification },
    ]);
    expect(leftOut).toEqual([
      'SUPPLIER_ACCOUNTS_FILE: accounts[2] (gamma): callbackSecretFile: cannot read no-such-file (ENOENT)',
      'SUPPLIER_ACCOUNTS_FILE: accounts[3] (delta): callbackSecretFile: short-callback holds fewer than 16 characters',
    ]);
    expect(leftOut.join('\n')).not.toContain('short-secret');
    // A worker reads the credentials and never the callback secret: gamma's missing secret file does not stop it.
    expect(readAccountsFile(file).accounts.map((a) => a.id)).toEqual(['alpha', 'gamma', 'delta']);
  });

  test('accounts that share a callback secret, with each other or with SUPPLIER_CALLBACK_SECRET, are named, never the secret', () => {
    const profile = fastProfile;
    const accounts = [
      { id: 'a', profile, secret: 'secret-one-0123456789' },
      { id: 'b', profile, secret: 'secret-two-0123456789' },
      { id: 'c', profile, secret: 'secret-one-0123456789' },
      { id: 'd', profile, secret: 'shared-secret-0123456789' },
      { id: 'e', profile },
    ];
    expect(sharedCallbackSecrets(accounts, 'shared-secret-0123456789')).toEqual([
      ['SUPPLIER_CALLBACK_SECRET', 'd'],
      ['a', 'c'],
    ]);
    expect(sharedCallbackSecrets(accounts.slice(0, 2))).toEqual([]);
  });

  test("an account's Books carry the receiver's URL with the account's id added to its path", () => {
    expect(accountCallbackUrl('https://hooks.example/callbacks/order-status', 'acme-eu')).toBe(
      'https://hooks.example/callbacks/order-status/acme-eu',
    );
    expect(accountCallbackUrl('http://127.0.0.1:8236/callbacks/order-status/?x=1', 'b')).toBe(
      'http://127.0.0.1:8236/callbacks/order-status/b?x=1',
    );
  });
});

describe('the sandbox sends callbacks', () => {
  async function bookWithCallbacks(test: string, fail?: () => boolean, profile?: SupplierProfile) {
    const { receiver: r, signalled } = await receiver({ fail, ...(profile ? { profile } : {}) });
    const sandbox = await resources.sandbox({ callbackSecret: SECRET, ...(profile ? { profile } : {}) });
    const client = resources.client({
      baseUrl: sandbox.url,
      tokens: resources.tickets({ baseUrl: sandbox.url, profile: fastProfile }),
    });
    const ref = randomUUID();
    const order = await client.book(
      bookRequest({ customerReferenceNo: ref, callbackUrl: `${r.url}${CALLBACK_PATH}` }),
      { sessionId: 's1', test },
    );
    return { r, signalled, sandbox, client, ref, order };
  }

  test('Book carries the callback URL; the settled status is called back, signed, and passed on', async () => {
    const { signalled, ref, order } = await bookWithCallbacks('confirmAfterMs=100');
    expect(order.status).toBe(1);
    await until(() => (signalled.length > 0 ? true : undefined));
    expect(signalled).toEqual([{ customerReferenceNo: ref, status: 2 }]);
  });

  test('with the replay-proof scheme the sandbox signs `<timestamp>.<body>` and sends the timestamp: passed on', async () => {
    const profile = SupplierProfile.parse({ ...fastProfile, callbacks: { verification: 'hmac-sha256-timestamp' } });
    const { r, signalled, ref } = await bookWithCallbacks('confirmAfterMs=100', undefined, profile);
    await until(() => (signalled.length > 0 ? true : undefined));
    expect(signalled).toEqual([{ customerReferenceNo: ref, status: 2 }]);
    expect(r.stats().unverified).toBe(0);
  });

  test('duplicates are signalled once; a stale callback sent after the settled one is passed on (the workflow verifies)', async () => {
    const dup = await bookWithCallbacks('confirmAfterMs=50&callbacks=duplicate');
    await until(() => (dup.sandbox.callbacks().length >= 2 ? true : undefined));
    expect(dup.signalled).toEqual([{ customerReferenceNo: dup.ref, status: 2 }]);
    expect(dup.r.stats().duplicates).toBe(1);

    const re = await bookWithCallbacks('confirmAfterMs=50&callbacks=reorder');
    await until(() => (re.signalled.length >= 2 ? true : undefined));
    expect(re.signalled.map((s) => s.status)).toEqual([2, 1]);
  });

  test('a receiver that fails is retried with backoff until it takes the callback', async () => {
    let failures = 2;
    const { signalled, sandbox } = await bookWithCallbacks('confirmAfterMs=50', () => failures-- > 0);
    await until(() => (signalled.length > 0 ? true : undefined), 15_000);
    // The receiver signals before it answers, so the sandbox logs the 200 a moment after the signal.
    await until(() => (sandbox.callbacks().some((c) => c.httpStatus === 200) ? true : undefined), 5_000);
    expect(sandbox.callbacks().map((c) => c.httpStatus)).toEqual([503, 503, 200]);
  });

  test('a Cancel is called back when it settles; the client reads its service fee', async () => {
    const { signalled, client, ref, order, sandbox } = await bookWithCallbacks('confirmAfterMs=50');
    await until(() => (signalled.length > 0 ? true : undefined));
    const answer = await client.cancel(
      { customerReferenceNo: ref, supplierReferenceNo: order.supplierReferenceNo!, reason: 'test' },
      { sessionId: 's1', test: 'cancelAfterMs=50' },
    );
    expect(answer).toEqual({ status: 2, serviceFee: { currency: 'USD', amount: 0 } });
    await until(() => (signalled.length > 1 ? true : undefined));
    expect(signalled[1]).toEqual({ customerReferenceNo: ref, status: 3 });
    expect(sandbox.orders()[0]?.status).toBe(3);
    // A second Cancel of the same order answers the same, without a second charge.
    const again = await client.cancel(
      { customerReferenceNo: ref, supplierReferenceNo: order.supplierReferenceNo!, reason: 'test' },
      { sessionId: 's1' },
    );
    expect(again.serviceFee).toEqual({ currency: 'USD', amount: 0 });
  });

  test('Cancel of an unknown order, or with another supplier reference, is refused', async () => {
    const { client, ref } = await bookWithCallbacks('confirmAfterMs=0');
    await expect(
      client.cancel(
        { customerReferenceNo: randomUUID(), supplierReferenceNo: 'SRN1', reason: 'x' },
        { sessionId: 's' },
      ),
    ).rejects.toMatchObject({ type: 'SupplierNotFound' });
    await expect(
      client.cancel({ customerReferenceNo: ref, supplierReferenceNo: 'SRN-other', reason: 'x' }, { sessionId: 's' }),
    ).rejects.toMatchObject({ type: 'SupplierBadRequest' });
  });
});
