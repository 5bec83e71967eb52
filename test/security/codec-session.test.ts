/**
 * The Web UI cannot send the codec server's token, so an operator logs in once (`/login`) and the browser sends a
 * session cookie with the UI's calls (its UI server's `codec.includeCredentials`). Tried here on a real listener,
 * as the UI calls it (POST /decode?preserveStorageRefs=true, content-type and X-Namespace, credentials included):
 * no cookie, a forged, foreign or expired cookie, a wrong token at /login and a cookie sent from another origin
 * are refused and decode nothing; the right token gives an HttpOnly SameSite=Strict cookie that decodes from the
 * UI's origin only, with CORS credentials headers for that exact origin.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { startCodecServer, type CodecServer } from '../../src/servers/codec/server';
import { newSessionValue, SESSION_COOKIE, SESSION_TTL_SECONDS } from '../../src/servers/codec/session';
import { testCodec } from '../fixtures/encryption';

const TOKEN = 'codec-token-for-session-tests';
const UI_ORIGIN = 'http://127.0.0.1:8233';

const servers: CodecServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A codec server with a token, counting what it is asked to decode. */
async function server(options: { token?: string; allowedOrigin?: string } = {}) {
  const inner = testCodec();
  let decoded = 0;
  const codec: PayloadCodec = {
    encode: (p) => inner.encode(p),
    decode: (p) => {
      decoded += p.length;
      return inner.decode(p);
    },
  };
  const s = await startCodecServer({ codec, port: 0, allowedOrigin: UI_ORIGIN, token: TOKEN, ...options });
  servers.push(s);
  return { s, decoded: () => decoded };
}

/** A guest's e-mail, encrypted, as the UI sends it from history. */
async function sealedPayloads(): Promise<{ payloads: Array<{ metadata: Record<string, string>; data: string }> }> {
  const [sealed] = await testCodec().encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"email":"guest@example.com"}') },
  ]);
  const p = sealed as Payload;
  const metadata = Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
  return { payloads: [{ metadata, data: Buffer.from(p.data!).toString('base64') }] };
}

/** The Web UI's call (temporalio/ui src/lib/services/data-encoder.ts), with what a browser adds to it. */
async function uiDecode(s: CodecServer, headers: Record<string, string>) {
  return fetch(`${s.url}/decode?preserveStorageRefs=true`, {
    method: 'POST',
    body: JSON.stringify(await sealedPayloads()),
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
  });
}

/** POST /login as the form sends it. */
const login = (s: CodecServer, token: string, origin = s.url) =>
  fetch(`${s.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ token }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
  });

/** The cookie pair (name=value) a successful login set. */
async function loggedIn(s: CodecServer): Promise<string> {
  const res = await login(s, TOKEN);
  expect(res.status).toBe(303);
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

test('a decode from the UI origin without the token or a valid session cookie is 401 and decodes nothing', async () => {
  const { s, decoded } = await server();
  const otherTokensCookie = newSessionValue('another-codec-servers-token', Date.now());
  const expired = newSessionValue(TOKEN, Date.now() - (SESSION_TTL_SECONDS + 60) * 1000);
  const valid = newSessionValue(TOKEN, Date.now());
  const [expiry, mac] = valid.split('.');
  for (const cookie of [
    undefined,
    `${SESSION_COOKIE}=`,
    `${SESSION_COOKIE}=${TOKEN}`,
    `${SESSION_COOKIE}=${otherTokensCookie}`,
    `${SESSION_COOKIE}=${expired}`,
    // The valid MAC moved to a later expiry: the expiry is signed too.
    `${SESSION_COOKIE}=${Number(expiry) + 3600}.${mac}`,
    `other_cookie=${valid}`,
  ]) {
    const res = await uiDecode(s, { origin: UI_ORIGIN, ...(cookie ? { cookie } : {}) });
    expect({ cookie, status: res.status }).toEqual({ cookie, status: 401 });
    expect(await res.text()).not.toContain('guest@example.com');
  }
  expect(decoded()).toBe(0);
});

test('/login: the form is served without cache or frames; a wrong token is 401 and sets no cookie', async () => {
  const { s } = await server();
  const form = await fetch(`${s.url}/login`);
  expect(form.status).toBe(200);
  expect(form.headers.get('content-type')).toMatch(/^text\/html/);
  expect(form.headers.get('cache-control')).toBe('no-store');
  expect(form.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(await form.text()).toContain('<form method="post" action="login">');

  for (const token of ['', 'wrong', `${TOKEN}x`, TOKEN.slice(0, -1), `Bearer ${TOKEN}`]) {
    const res = await login(s, token);
    expect({ token, status: res.status }).toEqual({ token, status: 401 });
    expect(res.headers.getSetCookie()).toEqual([]);
    // What was typed is not echoed back.
    if (token) expect(await res.text()).not.toContain(token);
  }
  // The token is read from the body only, never from the URL (history and proxies' logs keep URLs).
  const inUrl = await fetch(`${s.url}/login?token=${TOKEN}`, { redirect: 'manual' });
  expect(inUrl.headers.getSetCookie()).toEqual([]);
  const huge = await login(s, 'x'.repeat(8192));
  expect(huge.status).toBe(413);
  expect(huge.headers.getSetCookie()).toEqual([]);
});

test('the right token sets an HttpOnly SameSite=Strict cookie that is not the token, and sends the browser to the UI', async () => {
  const { s } = await server();
  const res = await login(s, TOKEN);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`${UI_ORIGIN}/`);
  const [setCookie, ...more] = res.headers.getSetCookie();
  expect(more).toEqual([]);
  const attributes = setCookie!.split(';').map((a) => a.trim());
  expect(attributes).toEqual(
    expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${SESSION_TTL_SECONDS}`]),
  );
  // Plain HTTP here (the UI's origin is http:): a Secure cookie would never be stored.
  expect(attributes).not.toContain('Secure');
  expect(attributes[0]).toMatch(new RegExp(`^${SESSION_COOKIE}=\\d+\\.[A-Za-z0-9_-]{43}$`));
  expect(setCookie).not.toContain(TOKEN);
  expect(await res.text()).not.toContain(TOKEN);
});

test('with only the cookie and the UI origin the decode works, with CORS credentials headers for that exact origin', async () => {
  const { s, decoded } = await server();
  const cookie = await loggedIn(s);
  const res = await uiDecode(s, { origin: UI_ORIGIN, cookie });
  expect(res.status).toBe(200);
  expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
  expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  expect(res.headers.get('vary')).toMatch(/origin/i);
  const { payloads } = (await res.json()) as { payloads: Array<{ data: string }> };
  expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toContain('guest@example.com');
  expect(decoded()).toBe(1);
  // Among the other cookies a browser sends to this host (the UI server's own, on another port).
  const among = await uiDecode(s, { origin: UI_ORIGIN, cookie: `_csrf=abc; ${cookie}; theme=dark` });
  expect(among.status).toBe(200);
});

test('the cookie from another origin, or with no origin at all, is refused and decodes nothing', async () => {
  const { s, decoded } = await server();
  const cookie = await loggedIn(s);
  for (const origin of ['http://127.0.0.1:9999', 'http://localhost:8233', 'https://evil.example', 'null']) {
    const res = await uiDecode(s, { origin, cookie });
    expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  }
  // Not a browser on the UI's page: the cookie alone is not a credential, the token is.
  expect((await uiDecode(s, { cookie })).status).toBe(401);
  expect(decoded()).toBe(0);
  expect((await uiDecode(s, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
});

test("the preflight the browser sends before the UI's call is answered for the UI's origin only", async () => {
  const { s } = await server();
  const preflight = (origin: string) =>
    fetch(`${s.url}/decode?preserveStorageRefs=true`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
  const res = await preflight(UI_ORIGIN);
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
  expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  expect(res.headers.get('access-control-allow-methods')).toBe('POST');
  const allowed = res.headers.get('access-control-allow-headers')!.split(',');
  expect(allowed).toEqual(expect.arrayContaining(['content-type', 'x-namespace']));
  const other = await preflight('http://127.0.0.1:9999');
  expect(other.status).toBe(403);
  expect(other.headers.get('access-control-allow-origin')).toBeNull();
  expect(other.headers.get('access-control-allow-credentials')).toBeNull();
});

test('behind HTTPS the cookie is Secure; without a token there is no /login', async () => {
  const { s } = await server({ allowedOrigin: 'https://temporal.example.com' });
  const res = await login(s, TOKEN);
  expect(res.headers.get('location')).toBe('https://temporal.example.com/');
  expect(
    res.headers
      .getSetCookie()[0]!
      .split(';')
      .map((a) => a.trim()),
  ).toContain('Secure');

  const { s: open } = await server({ token: undefined });
  expect((await fetch(`${open.url}/login`)).status).toBe(404);
});
