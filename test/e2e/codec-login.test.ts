/**
 * The Web UI decodes through a codec server that requires a token, as `npm run stack:prod` wires it: the
 * standalone UI server with `codec.includeCredentials`, headless Chromium. Before the operator logs in the UI's
 * decode calls are refused (401) and the guest's e-mail is not on the page; after typing the token once into the
 * codec server's /login the browser holds an HttpOnly SameSite=Strict cookie and the same page shows it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startCodecServer, type CodecServer } from '../../src/servers/codec/server';
import { SESSION_COOKIE } from '../../src/servers/codec/session';
import { startWebUi, type WebUi } from '../../dev/prod/ui';
import { freePort } from '../../dev/temporal/dev-server';
import { testCodec } from '../fixtures/encryption';
import { connectDevServer } from '../harness/temporal';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = 'e2e-codec-token-typed-by-an-operator';
const EMAIL = 'codec-login-guest@example.com';

let env: TestWorkflowEnvironment;
let codec: CodecServer;
let ui: WebUi;
let browser: Browser;
let dataDir: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  env = await connectDevServer();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'codec-login-e2e-'));
  mkdirSync(path.join(dataDir, 'logs'));
  const uiPort = await freePort();
  codec = await startCodecServer({
    codec: testCodec(),
    port: 0,
    allowedOrigin: `http://127.0.0.1:${uiPort}`,
    token: TOKEN,
  });
  ui = await startWebUi({
    dataDir,
    port: uiPort,
    temporalAddress: process.env.TEST_DEV_SERVER_ADDRESS!,
    namespace: 'default',
    codecEndpoint: codec.url,
    codecIncludeCredentials: true,
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--no-first-run'],
  });
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  await codec?.close();
  await env?.teardown();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The visible text of the workflow's page, once the UI has called the codec server for it. */
async function workflowPage(page: Page, workflowId: string): Promise<{ text: string; decodeStatus: number }> {
  const decoded = page.waitForResponse(
    (r) => r.url().startsWith(`${codec.url}/decode`) && r.request().method() === 'POST',
    {
      timeout: 30_000,
    },
  );
  await page.goto(`${ui.url}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
  const decodeStatus = (await decoded).status();
  await page.getByText(workflowId).first().waitFor({ timeout: 30_000 });
  return { text: await page.locator('body').innerText(), decodeStatus };
}

test('the Web UI decodes a guest payload only after the operator logged in to the codec server', async () => {
  // A workflow whose input is encrypted as a worker's would be; no worker needed to show its input.
  const client = new Client({
    connection: env.connection,
    namespace: 'default',
    dataConverter: { payloadCodecs: [testCodec()] },
  });
  const workflowId = `codec-login-${Date.now()}`;
  const handle = await client.workflow.start('codecLoginProbe', {
    taskQueue: `codec-login-${Date.now()}`,
    workflowId,
    args: [{ email: EMAIL }],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    const page = await context.newPage();
    const before = await workflowPage(page, workflowId);
    expect(before.decodeStatus).toBe(401);
    expect(before.text).not.toContain(EMAIL);

    // The one login: the form on the codec server, then back to the UI.
    await page.goto(`${codec.url}/login`);
    await page.locator('input[name="token"]').fill(TOKEN);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${ui.url}/**`, { timeout: 30_000 });
    const [cookie] = (await context.cookies(codec.url)).filter((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(TOKEN);

    const after = await workflowPage(page, workflowId);
    expect(after.decodeStatus).toBe(200);
    await page.getByText(EMAIL).first().waitFor({ timeout: 30_000 });
  } finally {
    await context.close();
    await handle.terminate('e2e test done');
  }
}, 120_000);
