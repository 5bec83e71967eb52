/**
 * The codec server holds strangers as the callback receiver does, each tried on a real listener started here: a
 * slow-loris client is cut off within the headers timeout (checked every second), connections past the cap are
 * closed unanswered, `/login` takes 5 tokens per client address a minute and then answers 429 (the right token
 * included, so guessing stops), and a token under 128 bits is refused at start, by the function and by the
 * process, naming CODEC_SERVER_TOKEN.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CODEC_SERVER_LIMITS,
  CodecServerConfigError,
  startCodecServer,
  type CodecServer,
} from '../../src/servers/codec/server';
import { tokenBits } from '../../src/servers/http/login-guard';
import { TEST_ENCRYPTION, testCodec } from '../fixtures/encryption';
import { idleConnection, slowLoris, statusOrClosed } from './attack';

const TOKEN = 'codec-token-for-limit-tests-0123456789';
const UI_ORIGIN = 'http://127.0.0.1:8233';
const ROOT = path.join(__dirname, '../..');

const servers: CodecServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(options: Partial<Parameters<typeof startCodecServer>[0]> = {}): Promise<CodecServer> {
  const s = await startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: UI_ORIGIN, token: TOKEN, ...options });
  servers.push(s);
  return s;
}

const portOf = (s: CodecServer) => Number(new URL(s.url).port);
const goodDecode = (s: CodecServer) =>
  statusOrClosed(`${s.url}/decode`, '{"payloads":[]}', {
    'content-type': 'application/json',
    authorization: `Bearer ${TOKEN}`,
  });

const login = (s: CodecServer, token: string) =>
  fetch(`${s.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ token }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

describe('starving the codec server', () => {
  test('a slow-loris client (headers a byte a second) is cut off within the 10 s headers timeout; decodes pass meanwhile', async () => {
    const s = await server();
    const attack = slowLoris(portOf(s), '127.0.0.1', '/decode', { everyMs: 1_000, giveUpMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await goodDecode(s)).toBe(200);

    const outcome = await attack;
    expect(outcome.closedByServer).toBe(true);
    expect(outcome.headSent).toBe(false);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 408 /);
    // 10 s and the check a second later; Node's default check (every 30 s) would hold it up to 40 s.
    expect(CODEC_SERVER_LIMITS.headersTimeoutMs).toBe(10_000);
    expect(outcome.elapsedMs).toBeLessThan(14_000);
    expect(await goodDecode(s)).toBe(200);
  }, 90_000);

  test('connections past the cap are closed unanswered; once they go, decodes are served again', async () => {
    const s = await server({ limits: { maxConnections: 3 } });
    const held = await Promise.all([1, 2, 3].map(() => idleConnection(portOf(s), '127.0.0.1')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await goodDecode(s)).toBe('closed');
    for (const c of held) c.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await goodDecode(s)).toBe(200);
  });

  test('by default at most 256 connections are open at once', async () => {
    expect(CODEC_SERVER_LIMITS.maxConnections).toBe(256);
    const s = await server();
    const held = await Promise.all(Array.from({ length: 256 }, () => idleConnection(portOf(s), '127.0.0.1')));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await goodDecode(s)).toBe('closed');
    } finally {
      for (const c of held) c.close();
    }
  });
});

describe('guessing the token', () => {
  test('/login takes 5 tokens a minute from one address, then 429 with Retry-After, even for the right token', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const s = await server({ now: () => clock });
    for (let i = 0; i < 5; i++) expect((await login(s, `wrong-${i}`)).status).toBe(401);
    const sixth = await login(s, 'wrong-5');
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(sixth.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Past the limit nothing is compared: the right token gets no cookie either.
    const right = await login(s, TOKEN);
    expect(right.status).toBe(429);
    expect(right.headers.getSetCookie()).toEqual([]);
    // The bearer token on /decode is not a login: the CLI keeps working.
    expect(await goodDecode(s)).toBe(200);

    clock += 61_000;
    const later = await login(s, TOKEN);
    expect(later.status).toBe(303);
    expect(later.headers.getSetCookie()).toHaveLength(1);
  });

  test('a guessing run of 40 tokens from one address gets 5 of them compared', async () => {
    const s = await server();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await login(s, `guess-${i}`)).status);
    expect(statuses.filter((x) => x === 401)).toHaveLength(5);
    expect(statuses.filter((x) => x === 429)).toHaveLength(35);
  });
});

describe('a token that could be guessed', () => {
  const SHORT = ['abcdef0123456789', '0123456789abcdef0123456789abcde', 'a-console-token-1234', 'x'.repeat(64)];

  test.each(SHORT)('startCodecServer refuses %s (under 128 bits), naming CODEC_SERVER_TOKEN', async (token) => {
    expect(tokenBits(token)).toBeLessThan(128);
    await expect(startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: UI_ORIGIN, token })).rejects.toThrow(
      CodecServerConfigError,
    );
    await expect(startCodecServer({ codec: testCodec(), port: 0, allowedOrigin: UI_ORIGIN, token })).rejects.toThrow(
      /^CODEC_SERVER_TOKEN: carries at most \d+ bits; at least 128/,
    );
  });

  test('32 hex characters (openssl rand -hex 16) and longer random tokens start', async () => {
    for (const token of ['0123456789abcdef0123456789abcdef', TOKEN, 'Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4']) {
      await server({ token });
    }
  });

  test('npm run codec-server exits 1 naming CODEC_SERVER_TOKEN for a 16-character token, also from CODEC_SERVER_TOKEN_FILE', async () => {
    const keys = [...TEST_ENCRYPTION.keys.entries()].map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
    const base = { PAYLOAD_ENCRYPTION_KEYS: keys, CODEC_SERVER_PORT: '0' };
    const inline = await runMain({ ...base, CODEC_SERVER_TOKEN: 'abcdef0123456789' });
    expect(inline.code).toBe(1);
    expect(inline.output).toMatch(/CODEC_SERVER_TOKEN: carries at most 64 bits; at least 128 are required/);
    expect(inline.output).not.toMatch(/Codec server on /);

    const dir = mkdtempSync(path.join(os.tmpdir(), 'codec-token-'));
    try {
      writeFileSync(path.join(dir, 'short'), 'abcdef0123456789\n');
      writeFileSync(path.join(dir, 'good'), `${'0123456789abcdef'.repeat(4)}\n`);
      const fromFile = await runMain({ ...base, CODEC_SERVER_TOKEN_FILE: path.join(dir, 'short') });
      expect(fromFile.code).toBe(1);
      expect(fromFile.output).toMatch(/CODEC_SERVER_TOKEN: carries at most 64 bits/);
      const good = await runMain({ ...base, CODEC_SERVER_TOKEN_FILE: path.join(dir, 'good') });
      expect(good.output).toMatch(/Codec server on .*\(token required/);
      expect(good.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
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
      if (!stopped && /Codec server on /.test(output)) {
        stopped = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
