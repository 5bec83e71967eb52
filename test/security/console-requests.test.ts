/**
 * What a request to the operator console may make it believe, tried on a real listener with a recording fake of
 * Temporal (./console-rig):
 *  - behind a proxy: X-Forwarded-For and X-Forwarded-Proto are believed from the trusted proxies only; the login
 *    limiter counts by the client's address they give (one client guessing locks out itself, not every operator),
 *    and the session cookie is Secure when the client came over https;
 *  - its address: the page shows no text from the query string (`?msg=`, `?quoteRef=`), only a message the console
 *    signed for this login, and a quote only to the login it was made for;
 *  - the namespace: a console watching several acts, and reads a booking, only in one it is configured for.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ConsoleConfigError, startConsole } from '../../src/operators/console/server';
import { flashToken } from '../../src/operators/console/flash';
import { parseNamespaceKeys } from '../../src/operators/console/namespaces';
import {
  ANA,
  BO,
  closeConsoles,
  consoleServer,
  emptyRecord,
  FAKE_QUOTE,
  loggedIn,
  login,
  messageIn,
  post,
  recordingClient,
  SECRET,
} from './console-rig';

afterEach(closeConsoles);

const cookieAttributes = (res: Response) =>
  res.headers
    .getSetCookie()[0]!
    .split(';')
    .map((a) => a.trim());

describe('behind a proxy', () => {
  test("a trusted proxy's clients are limited one by one: one guessing does not lock out another", async () => {
    const { s } = await consoleServer({ trustedProxies: ['127.0.0.1'] });
    const attacker = { 'x-forwarded-for': '203.0.113.7' };
    for (let i = 0; i < 5; i++) expect((await login(s, `wrong-${i}`, attacker)).status).toBe(401);
    expect((await login(s, 'wrong-5', attacker)).status).toBe(429);
    // A left-most entry is the client's own word: changing it does not make another client.
    const spoofing = { 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 200)}, 203.0.113.7` };
    expect((await login(s, 'wrong-6', spoofing)).status).toBe(429);
    // The operator behind the same proxy logs in.
    expect((await login(s, ANA, { 'x-forwarded-for': '198.51.100.20' })).status).toBe(303);
  });

  test('from a peer that is not a trusted proxy, X-Forwarded-For is not believed: the peer is limited', async () => {
    const { s } = await consoleServer({ trustedProxies: ['10.0.0.0/8'] });
    for (let i = 0; i < 5; i++) {
      expect((await login(s, `wrong-${i}`, { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401);
    }
    expect((await login(s, ANA, { 'x-forwarded-for': '198.51.100.20' })).status).toBe(429);
  });

  test('the session cookie is Secure when a trusted proxy says the client came over https, and only then', async () => {
    const behind = await consoleServer({ trustedProxies: ['127.0.0.1', '::1'] });
    const overHttps = await login(behind.s, ANA, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.20' });
    expect(overHttps.status).toBe(303);
    expect(cookieAttributes(overHttps)).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict']));
    const cookie = overHttps.headers.getSetCookie()[0]!.split(';')[0]!;
    const out = await fetch(`${behind.s.url}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'x-forwarded-proto': 'https' },
    });
    expect(cookieAttributes(out)).toContain('Secure');

    const overHttp = await login(behind.s, ANA, { 'x-forwarded-proto': 'http' });
    expect(cookieAttributes(overHttp)).not.toContain('Secure');

    // Said by a client that is not a trusted proxy: not believed.
    const direct = await consoleServer();
    const claimed = await login(direct.s, ANA, { 'x-forwarded-proto': 'https' });
    expect(claimed.status).toBe(303);
    expect(cookieAttributes(claimed)).not.toContain('Secure');
  });

  test('a trusted proxy that is not an address, or trusted proxies without operator tokens, are refused at start', async () => {
    const { client } = recordingClient();
    await expect(
      startConsole({ client, taskQueue: 'q', token: ANA, trustedProxies: ['proxy.example'] }),
    ).rejects.toThrow(/^CONSOLE_TRUSTED_PROXIES: "proxy.example" is not an address or a CIDR block/);
    await expect(startConsole({ client, taskQueue: 'q', token: ANA, trustedProxies: ['10.0.0.0/33'] })).rejects.toThrow(
      ConsoleConfigError,
    );
    await expect(startConsole({ client, taskQueue: 'q', trustedProxies: ['127.0.0.1'] })).rejects.toThrow(
      /^CONSOLE_TOKEN: required with CONSOLE_TRUSTED_PROXIES/,
    );
  });
});

describe('what the page shows from its address', () => {
  test('a link carrying a message or a quote shows neither', async () => {
    const { s } = await consoleServer();
    const cookie = await loggedIn(s);
    const forged = new URLSearchParams({
      msg: 'Your session expired: log in again at https://evil.example',
      quoteRef: 'c0ffee00-0000-4000-8000-000000000001',
      quoteAmount: '0',
      quoteCurrency: 'USD',
      quoteChangesAt: '<b>never</b>',
    });
    const page = await fetch(`${s.url}/?${forged}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(messageIn(html)).toBe('');
    expect(html).not.toContain('evil.example');
    expect(html).not.toContain('c0ffee00');
    expect(html).not.toContain('/actions/cancel');
    expect(html).not.toContain('never');
  });

  test("a quote is shown to the login that asked for it, not to another operator's, and not once changed", async () => {
    const { s, recorded } = await consoleServer();
    const ana = await loggedIn(s, ANA);
    const ref = 'c0ffee00-0000-4000-8000-000000000002';
    const quoted = await post(s, '/actions/quote', { workflowId: `order:${ref}`, runId: 'r', ref }, { cookie: ana });
    expect(quoted.status).toBe(303);
    expect(quoted.location).toMatch(/^\/\?flash=[^&]+$/);
    expect(quoted.msg).toBe(`${ref}: quoted`);
    expect(quoted.page).toContain(`Cancel at ${FAKE_QUOTE.fee.amount} ${FAKE_QUOTE.fee.currency}`);
    expect(quoted.page).toContain('<input type="hidden" name="namespace" value="default">');
    expect(recorded.namespaces).toEqual(['default']);

    // The same address in bo's browser (a link ana sent him): nothing of it.
    const bo = await loggedIn(s, BO);
    const asBo = await (await fetch(new URL(quoted.location, s.url), { headers: { cookie: bo } })).text();
    expect(messageIn(asBo)).toBe('');
    expect(asBo).not.toContain(ref);
    // After ana logs in again (another session), her old link shows nothing either.
    const again = await loggedIn(s, ANA);
    expect(await (await fetch(new URL(quoted.location, s.url), { headers: { cookie: again } })).text()).not.toContain(
      ref,
    );
    // Changed in any part: nothing.
    const token = new URL(quoted.location, s.url).searchParams.get('flash')!;
    const [payload, expiry, mac] = token.split('.') as [string, string, string];
    const other = Buffer.from(
      JSON.stringify({ message: 'forged', quote: { namespace: 'default', customerReferenceNo: ref, fee: null } }),
    ).toString('base64url');
    for (const changed of [`${other}.${expiry}.${mac}`, `${payload}.${Number(expiry) + 600}.${mac}`]) {
      const html = await (await fetch(`${s.url}/?flash=${changed}`, { headers: { cookie: ana } })).text();
      expect(messageIn(html)).toBe('');
      expect(html).not.toContain('/actions/cancel');
    }
  });

  test('a message signed for this login but expired shows nothing; one made under another secret neither', async () => {
    let clock = Date.now();
    const { s } = await consoleServer({ operators: {}, now: () => clock });
    const fresh = flashToken(Buffer.from(SECRET), 'loopback', { message: 'made here' }, clock);
    expect(messageIn(await (await fetch(`${s.url}/?flash=${fresh}`)).text())).toBe('made here');
    const foreign = flashToken(Buffer.from(`${SECRET}-other`), 'loopback', { message: 'made elsewhere' }, clock);
    expect(messageIn(await (await fetch(`${s.url}/?flash=${foreign}`)).text())).toBe('');
    clock += 11 * 60_000;
    expect(messageIn(await (await fetch(`${s.url}/?flash=${fresh}`)).text())).toBe('');
  });

  test('a quote for a reference that is not one is refused, and nothing is asked of Temporal', async () => {
    const { s, recorded } = await consoleServer({ operators: {} });
    const ref = '<b>x</b>';
    const answer = await post(s, '/actions/quote', { workflowId: 'order:x', runId: 'r', ref });
    expect(answer.msg).toMatch(/^not done: ref: not a reference/);
    expect(answer.page).not.toContain('<b>x');
    expect(recorded.namespaces).toEqual([]);
  });
});

describe('namespaces', () => {
  const twoNamespaces = () => {
    const recorded = emptyRecord();
    const connection = {};
    const clients = ['default', 'partner-acme'].map((ns) => recordingClient(recorded, ns, connection).client);
    return { recorded, clients };
  };

  test('each action goes to the namespace its form names, and only to one the console watches', async () => {
    const { recorded, clients } = twoNamespaces();
    const { s } = await consoleServer({ clients, operators: {} });
    const note = { workflowId: 'booking:n', runId: 'r', ref: 'n', note: 'called the hotel' };

    expect((await post(s, '/actions/handled', { ...note, namespace: 'partner-acme' })).msg).toBe('n: marked handled');
    expect((await post(s, '/actions/check', { ...note, namespace: 'partner-acme' })).msg).toMatch(/^n: checked/);
    const cancel = { ref: 'n', amount: '0', currency: 'EUR', reason: 'guest asked' };
    expect((await post(s, '/actions/cancel', { ...cancel, namespace: 'default' })).msg).toBe('n: cancel-requested');
    expect(recorded.namespaces).toEqual(['partner-acme', 'partner-acme', 'default']);

    for (const namespace of ['partner-other', 'partner-acme\n', '../default']) {
      const refused = await post(s, '/actions/handled', { ...note, namespace });
      expect(refused.msg).toBe('not done: namespace: not one this console watches');
      expect((await post(s, '/actions/cancel', { ...cancel, namespace })).msg).toMatch(/^not done: namespace/);
    }
    // Watching several, a form that names none is refused rather than sent to the first.
    expect((await post(s, '/actions/handled', note)).msg).toBe(
      'not done: namespace: required; this console watches default, partner-acme',
    );
    expect(recorded.namespaces).toHaveLength(3);
    expect(recorded.notes).toHaveLength(1);
  });

  test("a booking's page is read in the namespace it names, if watched; another is refused unread", async () => {
    const { recorded, clients } = twoNamespaces();
    const { s } = await consoleServer({ clients, operators: {} });
    const ref = 'c0ffee00-0000-4000-8000-000000000003';
    const page = await fetch(`${s.url}/booking?ref=${ref}&namespace=partner-acme`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('In namespace <code id="namespace">partner-acme</code>');
    expect(recorded.namespaces).toEqual(['partner-acme', 'partner-acme']);
    expect((await fetch(`${s.url}/booking?ref=${ref}&namespace=partner-other`)).status).toBe(400);
    expect((await fetch(`${s.url}/booking?ref=${ref}`)).status).toBe(400);
    expect(recorded.namespaces).toHaveLength(2);
  });

  test('clients over two connections, or a namespace twice, are refused at start', async () => {
    const a = recordingClient(emptyRecord(), 'default', {}).client;
    const b = recordingClient(emptyRecord(), 'partner-acme', {}).client;
    await expect(startConsole({ clients: [a, b], taskQueue: 'q' })).rejects.toThrow(/has a connection of its own/);
    const again = recordingClient(emptyRecord(), 'default', a.connection).client;
    await expect(startConsole({ clients: [a, again], taskQueue: 'q' })).rejects.toThrow(/listed twice/);
  });
});

describe('npm run console', () => {
  const run = (env: Record<string, string>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', 'src/operators/console/main.ts'],
        {
          cwd: path.join(__dirname, '../..'),
          // Nothing listens there: a refusal that came after connecting would name the address instead.
          env: { PATH: process.env.PATH ?? '', CONSOLE_PORT: '0', TEMPORAL_ADDRESS: '127.0.0.1:1', ...env },
        },
      );
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.once('exit', (code) => resolve({ code, output }));
    });

  test('exits 1 naming CONSOLE_TRUSTED_PROXIES or CONSOLE_NAMESPACES when one is not sound, before connecting', async () => {
    const proxies = await run({ CONSOLE_TOKEN: ANA, CONSOLE_TRUSTED_PROXIES: '10.0.0.1, proxy.example' });
    expect(proxies).toEqual({ code: 1, output: expect.stringMatching(/^CONSOLE_TRUSTED_PROXIES: "proxy.example"/m) });
    const namespaces = await run({ CONSOLE_NAMESPACES: 'default,partner acme' });
    expect(namespaces).toEqual({
      code: 1,
      output: expect.stringMatching(/^CONSOLE_NAMESPACES: "partner acme" is not a namespace name/m),
    });
  }, 60_000);

  test("a namespace's payload keys: a line that is not sound is named by line and namespace, never by its key", () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const keys = parseNamespaceKeys(`# partners\npartner-acme=acme-1:${key}, acme-2:${key}\n`);
    expect(keys.get('partner-acme')).toMatchObject({ activeKeyId: 'acme-2' });
    const short = Buffer.alloc(16, 7).toString('base64');
    expect(() => parseNamespaceKeys(`partner-acme=acme-1:${short}`)).toThrow(
      /^CONSOLE_NAMESPACE_KEYS_FILE: line 1 \(namespace partner-acme\): key "acme-1" must be 32 bytes/,
    );
    expect(() => parseNamespaceKeys(`partner-acme=acme-1:${short}`)).not.toThrow(short);
    expect(() => parseNamespaceKeys(`acme-1:${key}`)).toThrow(/line 1 is not namespace=keyId:base64key/);
  });
});
