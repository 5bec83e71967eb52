/**
 * The operator console cancels orders and writes the notes that close an item, so each attack is tried on a real
 * listener started here, and refused: a slow-loris client and connections past the cap; guessing tokens at
 * `/login`; a session cookie changed in any part, signed under another secret, expired, logged out, or from before
 * the operator's token changed; the token itself offered anywhere but the login form; a token or session secret
 * under 128 bits (refused at start, by the function and by the process, naming the setting); a booking's page asked
 * for by a stranger, or for a reference carrying markup or past the bound. What the console records as the operator
 * is the login's name (or the certificate's subject), never a name typed in the form.
 *
 * No Temporal here: the client is a recording fake (what the console asks of Temporal is what is asserted), and
 * "authorized" is told by a note without text, which the console refuses itself (303, "not done: note") where a
 * stranger gets 401.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import {
  CONSOLE_LIMITS,
  ConsoleConfigError,
  LOOPBACK_OPERATOR,
  SHARED_TOKEN_OPERATOR,
  startConsole,
  type ConsoleOptions,
} from '../../src/operators/console/server';
import { CONSOLE_SESSION_COOKIE, CONSOLE_SESSION_TTL_SECONDS } from '../../src/operators/console/session';
import { ensureCertificates } from '../../dev/prod/certs';
import { idleConnection, slowLoris, statusOrClosed } from './attack';
import {
  ANA,
  BO,
  closeConsoles,
  consoleServer,
  form,
  FORM,
  loggedIn,
  login,
  probe,
  recordingClient,
} from './console-rig';

const ROOT = path.join(__dirname, '../..');

afterEach(closeConsoles);

describe('starving the console', () => {
  test('a slow-loris client is cut off within the 10 s headers timeout; the login form is served meanwhile', async () => {
    const { s, port } = await consoleServer();
    const attack = slowLoris(port, '127.0.0.1', '/login', { everyMs: 1_000, giveUpMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await fetch(`${s.url}/login`)).status).toBe(200);
    const outcome = await attack;
    expect(outcome.closedByServer).toBe(true);
    expect(outcome.headSent).toBe(false);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(CONSOLE_LIMITS.headersTimeoutMs).toBe(10_000);
    // 10 s and the check a second later; Node's default check (every 30 s) would hold it up to 40 s.
    expect(outcome.elapsedMs).toBeLessThan(14_000);
  }, 90_000);

  test('connections past the cap are closed unanswered; once they go, the console answers again', async () => {
    const { s, port } = await consoleServer({ limits: { maxConnections: 3 } });
    const held = await Promise.all([1, 2, 3].map(() => idleConnection(port, '127.0.0.1')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const attempt = () => statusOrClosed(`${s.url}/login`, form({ token: 'wrong' }), FORM);
    expect(await attempt()).toBe('closed');
    for (const c of held) c.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await attempt()).toBe(401);
  });

  test('by default at most 100 connections are open at once', async () => {
    expect(CONSOLE_LIMITS.maxConnections).toBe(100);
    const { s, port } = await consoleServer();
    const held = await Promise.all(Array.from({ length: 100 }, () => idleConnection(port, '127.0.0.1')));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await statusOrClosed(`${s.url}/login`, form({ token: 'wrong' }), FORM)).toBe('closed');
    } finally {
      for (const c of held) c.close();
    }
  });
});

describe('logging in', () => {
  test('/login takes 5 tokens a minute from one address, then 429 with Retry-After, even for the right token', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const { s } = await consoleServer({ now: () => clock });
    for (let i = 0; i < 5; i++) expect((await login(s, `wrong-${i}`)).status).toBe(401);
    const sixth = await login(s, 'wrong-5');
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    const right = await login(s, ANA);
    expect(right.status).toBe(429);
    expect(right.headers.getSetCookie()).toEqual([]);
    clock += 61_000;
    expect((await login(s, ANA)).status).toBe(303);
  });

  test('the token is taken on the login form only: not as a bearer header, a query parameter or a cookie', async () => {
    const { s, recorded } = await consoleServer({ operators: {}, token: ANA });
    expect((await fetch(`${s.url}/`)).status).toBe(401);
    expect((await fetch(`${s.url}/`, { headers: { authorization: `Bearer ${ANA}` } })).status).toBe(401);
    const inUrl = await fetch(`${s.url}/?token=${ANA}`, { redirect: 'manual' });
    expect(inUrl.status).toBe(401);
    expect(inUrl.headers.getSetCookie()).toEqual([]);
    const loginInUrl = await fetch(`${s.url}/login?token=${ANA}`, { redirect: 'manual' });
    expect(loginInUrl.headers.getSetCookie()).toEqual([]);
    const offers: Array<Record<string, string>> = [
      { authorization: `Bearer ${ANA}` },
      { cookie: `console_token=${ANA}` },
      { cookie: `${CONSOLE_SESSION_COOKIE}=${ANA}` },
    ];
    for (const headers of offers) {
      expect({ headers, status: (await probe(s, headers)).status }).toEqual({ headers, status: 401 });
    }
    expect((await probe(s, {}, `/actions/handled?token=${ANA}`)).status).toBe(401);
    expect(recorded.notes).toEqual([]);

    // The form: a session cookie, HttpOnly and SameSite=Strict, that is not the token and names the operator.
    const res = await login(s, ANA);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const [setCookie] = res.headers.getSetCookie();
    expect(setCookie).not.toContain(ANA);
    expect(setCookie!.split(';').map((a) => a.trim())).toEqual(
      expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${CONSOLE_SESSION_TTL_SECONDS}`]),
    );
    expect(await probe(s, { cookie: setCookie!.split(';')[0]! })).toEqual({
      status: 303,
      msg: expect.stringMatching(/^not done: note/),
    });
  });

  test('a login from another site (Origin) is refused', async () => {
    const { s } = await consoleServer();
    const res = await fetch(`${s.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, origin: 'https://evil.example' },
      body: form({ token: ANA }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});

describe('the session cookie', () => {
  test('changed in any part, or signed under another secret, it is refused', async () => {
    const { s, recorded } = await consoleServer();
    const cookie = await loggedIn(s, ANA);
    const value = cookie.slice(CONSOLE_SESSION_COOKIE.length + 1);
    const [sid, expiry, operator, mac] = value.split('.') as [string, string, string, string];
    expect(Buffer.from(operator, 'base64url').toString()).toBe('ana');
    expect((await probe(s, { cookie })).status).toBe(303);

    const flip = (x: string) => (x[0] === 'A' ? 'B' : 'A') + x.slice(1);
    const { s: other } = await consoleServer({ sessionSecret: 'another-consoles-secret-0123456789abcdef' });
    const foreign = (await loggedIn(other, ANA)).slice(CONSOLE_SESSION_COOKIE.length + 1);
    for (const tampered of [
      [sid, expiry, Buffer.from('bo').toString('base64url'), mac],
      [sid, String(Number(expiry) + 3600), operator, mac],
      [flip(sid), expiry, operator, mac],
      [sid, expiry, operator, flip(mac)],
      [sid, expiry, operator, ''],
      [sid, expiry, operator],
      foreign.split('.'),
    ]) {
      const c = `${CONSOLE_SESSION_COOKIE}=${tampered.join('.')}`;
      expect({ c, status: (await probe(s, { cookie: c })).status }).toEqual({ c, status: 401 });
    }
    expect(recorded.notes).toEqual([]);
  });

  test('it expires, ends at logout, and ends when the operator token changes or the operator is removed', async () => {
    let clock = Date.now();
    const { s } = await consoleServer({ now: () => clock });
    const cookie = await loggedIn(s, ANA);
    clock += (CONSOLE_SESSION_TTL_SECONDS - 60) * 1000;
    expect((await probe(s, { cookie })).status).toBe(303);
    clock += 120_000;
    expect((await probe(s, { cookie })).status).toBe(401);

    clock = Date.now();
    const fresh = await loggedIn(s, ANA);
    const out = await fetch(`${s.url}/logout`, { method: 'POST', redirect: 'manual', headers: { cookie: fresh } });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie()[0]).toMatch(new RegExp(`^${CONSOLE_SESSION_COOKIE}=; .*Max-Age=0`));
    expect((await probe(s, { cookie: fresh })).status).toBe(401);

    // Same secret, ana's token changed (or ana gone): her sessions end; bo's stand.
    const anaCookie = await loggedIn(s, ANA);
    const boCookie = await loggedIn(s, BO);
    const { s: rotated } = await consoleServer({ operators: { ana: `${ANA}-new`, bo: BO } });
    const { s: without } = await consoleServer({ operators: { bo: BO } });
    for (const next of [rotated, without]) {
      expect((await probe(next, { cookie: anaCookie })).status).toBe(401);
      expect((await probe(next, { cookie: boCookie })).status).toBe(303);
    }
  });
});

describe('who did what', () => {
  test('a note, a cancellation and a check record the logged-in operator, not a name typed in the form', async () => {
    const { s, recorded } = await consoleServer();
    const cookie = await loggedIn(s, BO);
    const note = await fetch(`${s.url}/actions/handled`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, cookie },
      body: form({ workflowId: 'booking:x', runId: 'r', ref: 'x', note: 'called the hotel', by: 'Ana' }),
    });
    expect(note.status).toBe(303);
    const cancel = await fetch(`${s.url}/actions/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, cookie },
      body: form({ ref: 'x', amount: '0', currency: 'EUR', reason: 'guest asked', requestedBy: 'Ana' }),
    });
    expect(cancel.status).toBe(303);
    const check = await fetch(`${s.url}/actions/check`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, cookie },
      body: form({ workflowId: 'booking:x', runId: 'r', ref: 'x', by: 'Ana', requestedBy: 'Ana' }),
    });
    expect(check.status).toBe(303);
    expect(recorded.notes).toEqual([{ by: 'bo', note: 'called the hotel' }]);
    expect(recorded.cancels).toEqual([expect.objectContaining({ requestedBy: 'bo', reason: 'guest asked' })]);
    expect(recorded.checks).toEqual(['asked in the operator console by bo']);
  });

  test('CONSOLE_TOKEN, shared, records its holder as console-token; loopback without a login as loopback', async () => {
    const shared = await consoleServer({ operators: {}, token: ANA });
    const cookie = await loggedIn(shared.s, ANA);
    await fetch(`${shared.s.url}/actions/handled`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, cookie },
      body: form({ workflowId: 'booking:y', runId: 'r', note: 'done' }),
    });
    expect(shared.recorded.notes).toEqual([{ by: SHARED_TOKEN_OPERATOR, note: 'done' }]);

    const open = await consoleServer({ operators: {} });
    await fetch(`${open.s.url}/actions/handled`, {
      method: 'POST',
      redirect: 'manual',
      headers: FORM,
      body: form({ workflowId: 'booking:z', runId: 'r', note: 'done', by: 'Ana' }),
    });
    expect(open.recorded.notes).toEqual([{ by: LOOPBACK_OPERATOR, note: 'done' }]);
    expect((await fetch(`${open.s.url}/login`)).status).toBe(404);
  });

  test("behind mutual TLS the operator is the client certificate's subject; another OU and no certificate are refused", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'console-mtls-'));
    try {
      const certs = ensureCertificates(dir);
      const read = (f: string) => readFileSync(f);
      const { s, recorded } = await consoleServer({
        operators: {},
        tls: { cert: read(certs.server.cert), key: read(certs.server.key), clientCa: read(certs.ca.cert) },
      });
      expect(s.url).toMatch(/^https:/);
      const post = (client?: { cert: string; key: string }) =>
        new Promise<number | 'refused'>((resolve) => {
          const req = https.request(
            `${s.url}/actions/handled`,
            {
              method: 'POST',
              ca: read(certs.ca.cert),
              servername: 'localhost',
              headers: FORM,
              ...(client ? { cert: read(client.cert), key: read(client.key) } : {}),
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', () => resolve('refused'));
          req.end(form({ workflowId: 'booking:m', runId: 'r', note: 'via mTLS', by: 'Ana' }));
        });
      expect(await post(certs.clients.operator)).toBe(303);
      expect(recorded.notes).toEqual([
        { by: expect.stringMatching(/^CN=operator:stack-setup,OU=operators,O=/), note: 'via mTLS' },
      ]);
      expect(await post(certs.clients.caller)).toBe(403);
      expect(await post()).toBe('refused');
      expect(recorded.notes).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("a booking's page", () => {
  test('is for operators only; a reference is bounded, and echoed escaped', async () => {
    const { s, recorded } = await consoleServer();
    const ref = '<script>alert(1)</script>';
    const stranger = await fetch(`${s.url}/booking?ref=${encodeURIComponent(ref)}`, { redirect: 'manual' });
    expect(stranger.status).toBe(401);
    expect(recorded.described).toEqual([]);

    const cookie = await loggedIn(s);
    const page = await fetch(`${s.url}/booking?ref=${encodeURIComponent(ref)}`, { headers: { cookie } });
    expect(page.status).toBe(404);
    const html = await page.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(recorded.described).toEqual([`booking:${ref}`, `order:${ref}`]);

    const tooLong = await fetch(`${s.url}/booking?ref=${'x'.repeat(101)}`, { headers: { cookie } });
    expect(tooLong.status).toBe(400);
    expect(recorded.described).toHaveLength(2);
  });
});

describe('a token that could be guessed', () => {
  const { client } = recordingClient();
  const start = (options: Partial<ConsoleOptions>) => startConsole({ client, taskQueue: 'q', ...options });

  test.each([
    [{ token: 'a-console-token-1234' }, /^CONSOLE_TOKEN: carries at most \d+ bits; at least 128/],
    [
      { operators: { ana: 'abcdef0123456789abcdef' } },
      /^CONSOLE_OPERATOR_TOKENS_FILE \(operator ana\): carries at most/,
    ],
    [{ token: ANA, sessionSecret: 'short-secret' }, /^CONSOLE_SESSION_SECRET: carries at most/],
  ])('startConsole refuses %j, naming the setting', async (options, message) => {
    await expect(start(options)).rejects.toThrow(ConsoleConfigError);
    await expect(start(options)).rejects.toThrow(message);
  });

  test('npm run console exits 1 naming CONSOLE_TOKEN for a 16-character token, before connecting anywhere', async () => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/operators/console/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        CONSOLE_TOKEN: 'abcdef0123456789',
        CONSOLE_PORT: '0',
        // Nothing listens there: a refusal that came after connecting would name the address instead.
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(/CONSOLE_TOKEN: carries at most 64 bits; at least 128 are required/);
  }, 60_000);
});
