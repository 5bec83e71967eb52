/**
 * The callback receiver faces the internet: each attack from issue 24 is tried on a real listener started
 * here, and refused, and the receiver still passes the next good callback on. The workflows are a recording
 * fake (what reaches them is what is asserted).
 */
import { createHmac } from 'node:crypto';
import {
  accountCallbackPath,
  CALLBACK_PATH,
  CALLBACK_SERVER_DEFAULTS,
  MAX_CALLBACK_BODY_BYTES,
  startCallbackReceiver,
  timestampedSignature,
  type CallbackReceiver,
} from '../../src/servers/callbacks/server';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { fastProfile, Resources } from '../supplier/helpers';
import { idleConnection, rawPost, slowLoris, statusOrClosed } from './attack';

const SECRET = 'callback-secret-for-security-tests-0123';
const resources = new Resources();
afterEach(() => resources.closeAll());

/** The replay-proof scheme, with the default timestamp header and tolerance. */
const timestampProfile = SupplierProfile.parse({
  ...fastProfile,
  callbacks: { verification: 'hmac-sha256-timestamp' },
});

interface Signalled {
  customerReferenceNo: string;
  status?: number;
  supplier?: string;
}

async function receiver(
  options: {
    profile?: SupplierProfile;
    now?: () => number;
    maxConnections?: number;
    accounts?: Parameters<typeof startCallbackReceiver>[0]['accounts'];
  } = {},
): Promise<{ r: CallbackReceiver; signalled: Signalled[] }> {
  const signalled: Signalled[] = [];
  const r = await startCallbackReceiver({
    port: 0,
    profile: options.profile ?? timestampProfile,
    secret: SECRET,
    ...(options.accounts ? { accounts: options.accounts } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
    target: {
      async signal(update) {
        signalled.push(update);
        return 'booking';
      },
    },
  });
  resources.add(() => r.close());
  return { r, signalled };
}

const seconds = (ms: number) => String(Math.floor(ms / 1000));

/** Headers a supplier sends with the timestamp scheme: the signature of `<timestamp>.<body>` and the timestamp. */
const signedHeaders = (body: string, timestamp: string, secret = SECRET) => ({
  'content-type': 'application/json',
  'x-signature': `sha256=${timestampedSignature(secret, timestamp, body)}`,
  'x-signature-timestamp': timestamp,
});

const post = (r: CallbackReceiver, body: string, headers: Record<string, string>, path = CALLBACK_PATH) =>
  fetch(`${r.url}${path}`, { method: 'POST', body, headers });

/** A good callback, freshly signed: what the supplier sends after each attack. */
async function goodCallback(r: CallbackReceiver, ref: string, nowMs = Date.now()): Promise<number> {
  const body = JSON.stringify({ customerReferenceNo: ref, status: 2 });
  return (await post(r, body, signedHeaders(body, seconds(nowMs)))).status;
}

describe('replayed callbacks (hmac-sha256-timestamp)', () => {
  test('the same signed callback again is not signalled again, within the minute or after it, while fresh', async () => {
    let clock = Date.now();
    const { r, signalled } = await receiver({ now: () => clock });
    const body = JSON.stringify({ customerReferenceNo: 'ref-replay', status: 2 });
    const captured = signedHeaders(body, seconds(clock));

    expect((await post(r, body, captured)).status).toBe(200);
    // Replayed at once, then after the per-reference minute has passed (body-only schemes signal it again then).
    const replay = await post(r, body, captured);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ accepted: true, duplicate: true });
    clock += 61_000;
    expect((await post(r, body, captured)).status).toBe(200);
    clock += 180_000;
    expect((await post(r, body, captured)).status).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-replay', status: 2 }]);
    expect(r.stats()).toMatchObject({ duplicates: 3, signalled: { booking: 1 } });

    // Past the 5 minutes the captured callback is stale: refused, never signalled.
    clock += 60_001;
    expect((await post(r, body, captured)).status).toBe(401);
    expect(signalled).toHaveLength(1);
    expect(r.stats()).toMatchObject({ unverified: 1, stale: 1 });

    // The supplier's next callback, signed now, goes through.
    expect(await goodCallback(r, 'ref-next', clock)).toBe(200);
    expect(signalled.map((s) => s.customerReferenceNo)).toEqual(['ref-replay', 'ref-next']);
  });

  test('copies of one signed callback sent at the same moment are signalled once', async () => {
    const { r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-burst', status: 2 });
    const captured = signedHeaders(body, seconds(Date.now()));
    const statuses = await Promise.all(Array.from({ length: 20 }, () => post(r, body, captured).then((x) => x.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(signalled).toHaveLength(1);
  });

  test.each([
    ['10 minutes old', -600],
    ['10 minutes ahead', +600],
    ['5 minutes and 2 seconds old', -302],
  ])('a callback signed %s is refused with 401 and never signalled', async (_name, offsetSeconds) => {
    const { r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-stale', status: 3 });
    const res = await post(r, body, signedHeaders(body, String(Math.floor(Date.now() / 1000) + offsetSeconds)));
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain(SECRET);
    expect(signalled).toEqual([]);
    expect(r.stats()).toMatchObject({ unverified: 1, stale: 1 });
    expect(await goodCallback(r, 'ref-after-stale')).toBe(200);
  });

  test('a captured signature with a new timestamp, a body-only signature, or no timestamp is refused', async () => {
    const { r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-forged', status: 3 });
    const old = seconds(Date.now() - 600_000);
    const captured = signedHeaders(body, old);
    // The attacker moves the timestamp to now: the signature no longer matches.
    expect((await post(r, body, { ...captured, 'x-signature-timestamp': seconds(Date.now()) })).status).toBe(401);
    const bodyOnly = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    expect(
      (
        await post(r, body, {
          'content-type': 'application/json',
          'x-signature': bodyOnly,
          'x-signature-timestamp': seconds(Date.now()),
        })
      ).status,
    ).toBe(401);
    const { 'x-signature-timestamp': _dropped, ...noTimestamp } = signedHeaders(body, seconds(Date.now()));
    expect((await post(r, body, noTimestamp)).status).toBe(401);
    expect(signalled).toEqual([]);
    expect(r.stats()).toMatchObject({ unverified: 3, stale: 0 });
  });
});

describe('callbacks per supplier account', () => {
  const ALPHA = 'alpha-callback-secret-0123456789';
  const BETA = 'beta-callback-secret-9876543210';
  /** alpha signs with a timestamp, beta the body alone; gamma names no callback secret file. */
  const accounts = [
    { id: 'alpha', profile: timestampProfile, secret: ALPHA },
    {
      id: 'beta',
      profile: SupplierProfile.parse({ ...fastProfile, callbacks: { verification: 'hmac-sha256' } }),
      secret: BETA,
    },
    { id: 'gamma', profile: timestampProfile },
  ];
  const bodyOnly = (body: string, secret: string) => ({
    'content-type': 'application/json',
    'x-signature': createHmac('sha256', secret).update(body).digest('hex'),
  });

  test("each account's path takes callbacks signed by its own scheme and secret; the hint names the account", async () => {
    const { r, signalled } = await receiver({ accounts });
    const body = JSON.stringify({ customerReferenceNo: 'ref-per-account', status: 2 });
    const now = seconds(Date.now());
    expect((await post(r, body, signedHeaders(body, now, ALPHA), accountCallbackPath('alpha'))).status).toBe(200);
    expect((await post(r, body, bodyOnly(body, BETA), accountCallbackPath('beta'))).status).toBe(200);
    // The shared path still takes the single supplier's callbacks, and names no account.
    expect((await post(r, body, signedHeaders(body, now))).status).toBe(200);
    expect(signalled).toEqual([
      { customerReferenceNo: 'ref-per-account', status: 2, supplier: 'alpha' },
      { customerReferenceNo: 'ref-per-account', status: 2, supplier: 'beta' },
      { customerReferenceNo: 'ref-per-account', status: 2 },
    ]);
  });

  test("a callback signed with another account's secret, the shared one, or on an unknown account's path is refused alike", async () => {
    const { r, signalled } = await receiver({ accounts });
    const body = JSON.stringify({ customerReferenceNo: 'ref-cross', status: 3 });
    const now = seconds(Date.now());
    const attempts: Array<[string, Record<string, string>]> = [
      [accountCallbackPath('alpha'), signedHeaders(body, now, BETA)],
      [accountCallbackPath('alpha'), signedHeaders(body, now, SECRET)],
      [accountCallbackPath('beta'), bodyOnly(body, ALPHA)],
      [CALLBACK_PATH, signedHeaders(body, now, ALPHA)],
      [accountCallbackPath('gamma'), signedHeaders(body, now, ALPHA)],
      [accountCallbackPath('no-such-account'), signedHeaders(body, now, ALPHA)],
      [`${accountCallbackPath('alpha')}/extra`, signedHeaders(body, now, ALPHA)],
    ];
    const answers = [];
    for (const [path, headers] of attempts) {
      const res = await post(r, body, headers, path);
      answers.push({ status: res.status, text: await res.text() });
    }
    // The same answer every time: a stranger cannot tell an account that exists from one that does not.
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(
      new Set([JSON.stringify({ status: 401, text: '{"error":"unverified callback"}' })]),
    );
    expect(signalled).toEqual([]);
    expect(r.stats()).toMatchObject({ received: attempts.length, unverified: attempts.length });
    expect(await goodCallback(r, 'ref-after-cross')).toBe(200);
  });

  test("one account's signed callback replayed on another account's path is refused, and on its own passed on once", async () => {
    const { r, signalled } = await receiver({
      accounts: [...accounts, { id: 'delta', profile: timestampProfile, secret: ALPHA.replace('alpha', 'delta') }],
    });
    const body = JSON.stringify({ customerReferenceNo: 'ref-replayed-elsewhere', status: 2 });
    const captured = signedHeaders(body, seconds(Date.now()), ALPHA);
    expect((await post(r, body, captured, accountCallbackPath('alpha'))).status).toBe(200);
    expect((await post(r, body, captured, accountCallbackPath('delta'))).status).toBe(401);
    expect((await post(r, body, captured, accountCallbackPath('alpha'))).status).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-replayed-elsewhere', status: 2, supplier: 'alpha' }]);
    expect(r.stats()).toMatchObject({ unverified: 1, duplicates: 1 });
  });
});

describe('oversized and wrongly typed bodies', () => {
  const tenMegabytes = Buffer.alloc(10 * 1024 * 1024, '{');

  test.each([
    ['with a content-length', false],
    ['chunked', true],
  ])(
    'a 10 MB body %s is answered 413, never passed on, and the next good callback goes through',
    async (_name, chunked) => {
      const { r, signalled } = await receiver();
      const answer = await rawPost(`${r.url}${CALLBACK_PATH}`, tenMegabytes, signedHeaders('x', seconds(Date.now())), {
        chunked,
      });
      expect(answer.status).toBe(413);
      // Answered before the client could send it all: the receiver stopped reading at the limit.
      expect(answer.answeredBeforeBodySent).toBe(true);
      expect(r.stats()).toMatchObject({ received: 1, tooLarge: 1 });
      expect(signalled).toEqual([]);
      expect(await goodCallback(r, 'ref-after-10mb')).toBe(200);
      expect(signalled).toEqual([{ customerReferenceNo: 'ref-after-10mb', status: 2 }]);
    },
  );

  test('a body one byte over 64 KiB is 413; one of exactly 64 KiB is read (and verified)', async () => {
    const { r } = await receiver();
    const over = Buffer.alloc(MAX_CALLBACK_BODY_BYTES + 1, ' ');
    const at = Buffer.alloc(MAX_CALLBACK_BODY_BYTES, ' ');
    const headers = signedHeaders('x', seconds(Date.now()));
    expect((await rawPost(`${r.url}${CALLBACK_PATH}`, over, headers)).status).toBe(413);
    expect((await rawPost(`${r.url}${CALLBACK_PATH}`, at, headers)).status).toBe(401);
  });

  test('a non-JSON content-type is 415 and never verified or passed on; JSON with a charset is taken', async () => {
    const { r, signalled } = await receiver();
    const body = JSON.stringify({ customerReferenceNo: 'ref-type', status: 2 });
    const headers = signedHeaders(body, seconds(Date.now()));
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      expect((await post(r, body, { ...headers, 'content-type': type })).status).toBe(415);
    }
    expect(signalled).toEqual([]);
    expect(r.stats()).toMatchObject({ unsupportedMediaType: 3, unverified: 0 });
    expect((await post(r, body, { ...headers, 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect(signalled).toHaveLength(1);
  });
});

describe('starving the receiver', () => {
  test('a slow-loris client (headers a byte a second) is cut off by the headers timeout; good callbacks pass meanwhile and after', async () => {
    const { r, signalled } = await receiver();
    const attack = slowLoris(r.port, '127.0.0.1', CALLBACK_PATH, { everyMs: 1_000 });
    // While the attacker holds its socket, the supplier's callbacks are served.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await goodCallback(r, 'ref-during-loris')).toBe(200);

    const outcome = await attack;
    expect(outcome.closedByServer).toBe(true);
    expect(outcome.headSent).toBe(false);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 408 /);
    // Cut off by the 10 s headers timeout (Node checks it every second), not by the client giving up at 60 s.
    expect(outcome.bytesSent).toBeLessThan(60);
    expect(CALLBACK_SERVER_DEFAULTS.headersTimeoutMs).toBe(10_000);
    console.log(
      `slow-loris closed after ${outcome.elapsedMs} ms and ${outcome.bytesSent} bytes: ${outcome.answer.split('\r\n')[0]}`,
    );

    expect(await goodCallback(r, 'ref-after-loris')).toBe(200);
    expect(signalled.map((s) => s.customerReferenceNo)).toEqual(['ref-during-loris', 'ref-after-loris']);
    expect(r.stats().received).toBe(2);
  }, 90_000);

  test('connections past the cap are closed unanswered; once they go, callbacks are served again', async () => {
    const { r, signalled } = await receiver({ maxConnections: 3 });
    const held = await Promise.all([1, 2, 3].map(() => idleConnection(r.port, '127.0.0.1')));
    // Let the server accept the three before the fourth arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const body = JSON.stringify({ customerReferenceNo: 'ref-capped', status: 2 });
    const url = `${r.url}${CALLBACK_PATH}`;
    expect(await statusOrClosed(url, body, signedHeaders(body, seconds(Date.now())))).toBe('closed');
    expect(signalled).toEqual([]);

    for (const c of held) c.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await statusOrClosed(url, body, signedHeaders(body, seconds(Date.now())))).toBe(200);
    expect(signalled).toEqual([{ customerReferenceNo: 'ref-capped', status: 2 }]);
  });
});

describe('metrics and stats', () => {
  test('are not on the public listener; the admin listener serves them on loopback', async () => {
    const { r } = await receiver();
    for (const path of ['/metrics', '/callbacks/stats']) {
      expect((await fetch(`${r.url}${path}`)).status).toBe(404);
      expect((await fetch(`${r.adminUrl}${path}`)).status).toBe(200);
    }
    expect(new URL(r.adminUrl).hostname).toBe('127.0.0.1');
    expect(new URL(r.adminUrl).port).not.toBe(String(r.port));
    // The admin listener takes no callbacks.
    const body = JSON.stringify({ customerReferenceNo: 'ref-admin', status: 2 });
    expect(
      (
        await fetch(`${r.adminUrl}${CALLBACK_PATH}`, {
          method: 'POST',
          body,
          headers: signedHeaders(body, seconds(Date.now())),
        })
      ).status,
    ).toBe(404);
  });
});
