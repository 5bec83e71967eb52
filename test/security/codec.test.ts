/**
 * The codec server decrypts guests' personal data for whoever may call it: each attack from issue 24 is tried
 * on a real listener started here, and refused. The codec is the real encryption codec, counted, so "nothing
 * decoded" is asserted, not assumed.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import {
  CodecServerConfigError,
  MAX_CODEC_BODY_BYTES,
  startCodecServer,
  type CodecServer,
} from '../../src/servers/codec/server';
import { TEST_ENCRYPTION, testCodec } from '../fixtures/encryption';
import { rawPost } from './attack';

const TOKEN = 'codec-token-for-security-tests';
const UI_ORIGIN = 'http://127.0.0.1:8233';
const ROOT = path.join(__dirname, '../..');

const servers: CodecServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The test codec, counting what it is asked to decode. */
function countingCodec(): { codec: PayloadCodec; decoded: () => number } {
  const inner = testCodec();
  let decoded = 0;
  return {
    codec: {
      encode: (p) => inner.encode(p),
      decode: (p) => {
        decoded += p.length;
        return inner.decode(p);
      },
    },
    decoded: () => decoded,
  };
}

async function server(options: { token?: string } = { token: TOKEN }) {
  const { codec, decoded } = countingCodec();
  const s = await startCodecServer({ codec, port: 0, allowedOrigin: UI_ORIGIN, ...options });
  servers.push(s);
  return { s, decoded };
}

/** A payload as it sits in history: a guest's e-mail, encrypted. */
async function sealedPayload(): Promise<{ metadata: Record<string, string>; data: string }> {
  const [sealed] = await testCodec().encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"email":"guest@example.com"}') },
  ]);
  const p = sealed as Payload;
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(p.data!).toString('base64'),
  };
}

const decode = (s: CodecServer, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/decode`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
  });

test('a decode without the token, or with a wrong one, is 401 and decodes nothing', async () => {
  const { s, decoded } = await server();
  const payloads = [await sealedPayload()];
  for (const authorization of [
    '',
    'Bearer ',
    `Bearer ${TOKEN}x`,
    `Bearer ${TOKEN.slice(0, -1)}`,
    TOKEN,
    `Basic ${TOKEN}`,
  ]) {
    const res = await decode(s, { payloads }, { authorization });
    expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
    expect(await res.text()).not.toContain('guest@example.com');
  }
  expect(decoded()).toBe(0);
  // The token opens it.
  const res = await decode(s, { payloads });
  expect(res.status).toBe(200);
  const { payloads: clear } = (await res.json()) as { payloads: Array<{ data: string }> };
  expect(Buffer.from(clear[0]!.data, 'base64').toString()).toContain('guest@example.com');
  expect(decoded()).toBe(1);
});

test.each([
  ['with a content-length', false],
  ['chunked', true],
])('a 10 MB body %s is answered 413, nothing decoded, and the next good decode is served', async (_name, chunked) => {
  const { s, decoded } = await server();
  const payload = await sealedPayload();
  // Valid JSON all the way: 10 MB of payloads, each one a real sealed payload.
  const many = JSON.stringify({
    payloads: Array.from({ length: Math.ceil((10 * 1024 * 1024) / JSON.stringify(payload).length) }, () => payload),
  });
  const body = Buffer.from(many);
  expect(body.length).toBeGreaterThan(10 * 1024 * 1024);
  const answer = await rawPost(
    `${s.url}/decode`,
    body,
    { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    { chunked },
  );
  expect(answer.status).toBe(413);
  expect(answer.answeredBeforeBodySent).toBe(true);
  expect(decoded()).toBe(0);

  expect((await decode(s, { payloads: [payload] })).status).toBe(200);
  expect(decoded()).toBe(1);
});

test('a body of exactly 1 MiB is read; one byte more is 413', async () => {
  const { s } = await server();
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
  const fill = (n: number) => Buffer.from(`{"payloads":[],"pad":"${'a'.repeat(n - 24)}"}`);
  expect(fill(MAX_CODEC_BODY_BYTES).length).toBe(MAX_CODEC_BODY_BYTES);
  expect((await rawPost(`${s.url}/decode`, fill(MAX_CODEC_BODY_BYTES), headers)).status).toBe(200);
  expect((await rawPost(`${s.url}/decode`, fill(MAX_CODEC_BODY_BYTES + 1), headers)).status).toBe(413);
});

test('only POST /encode and /decode are served (and their CORS preflight)', async () => {
  const { s } = await server();
  const auth = { authorization: `Bearer ${TOKEN}` };
  for (const [method, route] of [
    ['GET', '/decode'],
    ['PUT', '/encode'],
    ['DELETE', '/decode'],
    ['POST', '/'],
    ['POST', '/decode/extra'],
    ['GET', '/metrics'],
    ['OPTIONS', '/anything'],
  ] as const) {
    const res = await fetch(`${s.url}${route}`, { method, headers: auth });
    expect({ method, route, status: res.status }).toEqual({ method, route, status: 404 });
  }
  const preflight = await fetch(`${s.url}/encode`, { method: 'OPTIONS', headers: { origin: UI_ORIGIN } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
});

describe('listening beyond loopback', () => {
  test.each(['0.0.0.0', '::'])(
    'startCodecServer refuses %s without a token, and listens on it with one',
    async (host) => {
      await expect(startCodecServer({ codec: testCodec(), host, port: 0, allowedOrigin: UI_ORIGIN })).rejects.toThrow(
        CodecServerConfigError,
      );
      const withToken = await startCodecServer({
        codec: testCodec(),
        host,
        port: 0,
        allowedOrigin: UI_ORIGIN,
        token: TOKEN,
      });
      servers.push(withToken);
      const port = new URL(withToken.url).port;
      const res = await fetch(`http://127.0.0.1:${port}/decode`, { method: 'POST', body: '{"payloads":[]}' });
      expect(res.status).toBe(401);
    },
  );

  test('loopback without a token still starts (the dev stacks), and anonymous mode beyond loopback warns', async () => {
    const local = await startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: UI_ORIGIN });
    servers.push(local);
    const warnings: string[] = [];
    const open = await startCodecServer({
      codec: testCodec(),
      host: '0.0.0.0',
      port: 0,
      allowedOrigin: UI_ORIGIN,
      allowAnonymous: true,
      warn: (line) => warnings.push(line),
    });
    servers.push(open);
    expect(warnings).toEqual([expect.stringMatching(/^WARN: codec server on 0\.0\.0\.0 without a token/)]);
  });

  /** `npm run codec-server` as a process: its exit code and what it printed, or what it printed once listening. */
  function runMain(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/servers/codec/main.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      let output = '';
      let stopped = false;
      const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
      const onData = (d: Buffer) => {
        output += d.toString();
        // Listening: stop it (SIGTERM closes the server and exits 0).
        if (!stopped && /Codec server on /.test(output)) {
          stopped = true;
          child.kill('SIGTERM');
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code, signal) => {
        if (signal) output += `\n[signal ${signal}]`;
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  }

  const keys = `${[...TEST_ENCRYPTION.keys.entries()].map(([id, key]) => `${id}:${key.toString('base64')}`).join(',')}`;

  test('npm run codec-server with CODEC_SERVER_HOST=0.0.0.0 and no token exits 1 naming CODEC_SERVER_TOKEN; with CODEC_SERVER_ALLOW_ANONYMOUS=on it starts with a WARN', async () => {
    const base = { PAYLOAD_ENCRYPTION_KEYS: keys, CODEC_SERVER_HOST: '0.0.0.0', CODEC_SERVER_PORT: '0' };
    const refused = await runMain(base);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/CODEC_SERVER_TOKEN: required to listen on 0\.0\.0\.0/);
    expect(refused.output).not.toMatch(/Codec server on /);

    const anonymous = await runMain({ ...base, CODEC_SERVER_ALLOW_ANONYMOUS: 'on' });
    expect(anonymous.output).toMatch(/WARN: codec server on 0\.0\.0\.0 without a token/);
    expect(anonymous.output).toMatch(/Codec server on http:\/\/0\.0\.0\.0:\d+/);
    expect(anonymous.code).toBe(0);
  }, 90_000);
});
