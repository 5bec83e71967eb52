/**
 * The operator console as an operator uses it: headless Chromium opens the page, finds an unresolved booking,
 * presses "Check again now" once the supplier lists the order, and marks another one handled with a note; each
 * leaves the list. The screenshot is kept in test-results/ as an artifact.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startConsole, type ConsoleServer } from '../../src/operators/console/server';
import { connectDevServer } from '../harness/temporal';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import { createBookingRig, eventually, unresolvedBooking, type BookingRig } from '../harness/booking';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '../../test-results');

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  env = await connectDevServer();
  rig = await createBookingRig(env, 'console-e2e');
  server = await startConsole({ client: env.client, taskQueue: rig.taskQueue, checkWaitMs: 30_000 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--no-first-run'],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await rig?.close();
  await env?.teardown();
});

/** The page, reloaded until the row for `ref` is there (or gone, with `present: false`). */
async function row(page: Page, ref: string, present = true) {
  return eventually(async () => {
    await page.goto(server.url);
    const count = await page.locator(`tr.item[data-ref="${ref}"]`).count();
    return count > 0 === present ? page.locator(`tr.item[data-ref="${ref}"]`) : undefined;
  }, 30_000);
}

test('an operator checks an unresolved booking again, and marks another handled with a note', async () => {
  expectWorkerWarnings(/^ERROR Booking unresolved/);
  const [resolvedRef, handledRef] = await Promise.all([unresolvedBooking(env, rig), unresolvedBooking(env, rig)]);
  const page = await browser.newPage();
  try {
    const first = await row(page, resolvedRef);
    await expect(first.locator('td').nth(2).innerText()).resolves.toBe('unresolved');
    await expect(first.innerText()).resolves.toMatch(/last status 1/);

    // The supplier now lists the order as confirmed: "Check again now" finds it and the booking leaves the list.
    rig.sandbox.setOrderStatus(resolvedRef, 2);
    await first.getByRole('button', { name: 'Check again now' }).click();
    await page.waitForURL(/flash=/);
    await expect(page.getByRole('status').innerText()).resolves.toBe(
      `${resolvedRef}: checked: the supplier lists the order in status 2`,
    );
    await row(page, resolvedRef, false);

    // Who acts is the console's to say (here: loopback, no login), never a name typed into the form.
    await expect(page.locator('#operator').innerText()).resolves.toBe('loopback');
    const second = await row(page, handledRef);
    await second.getByRole('textbox', { name: 'note' }).fill('called the hotel: no room held; guest told');
    await second.getByRole('button', { name: 'Mark handled' }).click();
    await page.waitForURL(/flash=/);
    await expect(page.getByRole('status').innerText()).resolves.toBe(`${handledRef}: marked handled`);
    await row(page, handledRef, false);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });
  } finally {
    await page.close();
  }
}, 180_000);
