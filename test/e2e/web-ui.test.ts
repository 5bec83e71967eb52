/**
 * An operator's view, end to end: headless Chromium opens the dev server's Web UI, filters by
 * CustomerReferenceNo, opens the booking and sees its stage and current details.
 * The screenshot is kept in test-results/ as an artifact.
 */
import { mkdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bookingStateQuery } from '../../src/api/contract/index';
import { startBooking } from '../../src/api/client/index';
import { connectDevServer } from '../harness/temporal';
import { bookingRequest, createBookingRig, eventually, type BookingRig } from '../harness/booking';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '../../test-results');

/** The visible text of the page and of every frame in it. */
async function pageText(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((f) =>
      f
        .locator('body')
        .innerText()
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  env = await connectDevServer();
  rig = await createBookingRig(env, 'web-ui');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // As root in a container Chromium needs --no-sandbox; the rest keeps it off the (closed) network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await rig?.close();
  await env?.teardown();
});

test('an operator finds a booking by reference and sees its stage and current details', async () => {
  // A booking parked in recovery: Book answered 504, the order stays pending, next poll in 10 minutes.
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { delaysSeconds: [600] },
  });
  const handle = await startBooking(env.client, request, { taskQueue: rig.taskQueue });
  await eventually(async () => ((await handle.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));

  const ui = process.env.TEST_DEV_SERVER_UI_URL!;
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const query = encodeURIComponent(`CustomerReferenceNo="${request.customerReferenceNo}"`);
  await page.goto(`${ui}/namespaces/default/workflows?query=${query}`);

  // The list shows exactly this booking, with its one-line summary.
  const row = page.getByRole('link', { name: handle.workflowId }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.click();

  // The history names the activities and the timer the booking is waiting on.
  await page.getByText('Wait for QueryOrders poll 2', { exact: false }).first().waitFor({ timeout: 30_000 });
  const history = await page.locator('body').innerText();
  for (const name of ['checkRequestAndAvail', 'book', 'queryOrder']) expect(history).toContain(name);

  // "User Metadata" holds the summary and the current details the workflow keeps up to date.
  await page
    .getByRole('link', { name: 'User Metadata' })
    .or(page.getByRole('tab', { name: 'User Metadata' }))
    .first()
    .click();
  // The UI renders summary and details as Markdown inside frames, so read every frame's text.
  const text = await eventually(async () => {
    const all = await pageText(page);
    return all.includes('Stage: recovering') ? all : undefined;
  }, 30_000);
  expect(text).toContain(`ref ${request.customerReferenceNo}`);
  expect(text).toMatch(/Next poll:/);
  expect(text).toMatch(/Last poll: .* found \(status 1\)/);
  // Summary and details carry references only, never personal data.
  expect(text).not.toContain(request.holder.email);
  expect(text).not.toContain(request.holder.lastName);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'web-ui-booking.png'), fullPage: true });
  await handle.terminate('web UI test done');
});
