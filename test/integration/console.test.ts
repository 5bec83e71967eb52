/**
 * The operator console against the dev server, a worker and the sandbox (the browser's view is
 * test/e2e/console.test.ts): what it lists, what each action does through the workflows, who may use it, and
 * a console watching two namespaces, each item acted on in its own.
 */
import { request } from 'node:http';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  awaitOutcome,
  cancelBooking,
  getBookingHandle,
  getBookingState,
  operatorNoteWorkflowId,
  startBooking,
} from '../../src/api/client/index';
import { listItemsNeedingAPerson, type ConsoleItem } from '../../src/operators/console/items';
import {
  ConsoleConfigError,
  LOOPBACK_OPERATOR,
  startConsole,
  type ConsoleServer,
} from '../../src/operators/console/server';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { createBookingWorker, type BookingWorker } from '../../src/worker';
import { connectDevServer, workflowBundle } from '../harness/temporal';
import { expectWorkerWarnings } from '../harness/quiet-worker-logs';
import {
  bookingRequest,
  createBookingRig,
  eventually,
  testProfile,
  unresolvedBooking,
  type BookingRig,
} from '../harness/booking';

let env: TestWorkflowEnvironment;
let rig: BookingRig;
let server: ConsoleServer;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'console');
  server = await startConsole({ client: env.client, taskQueue: rig.taskQueue, checkWaitMs: 30_000 });
});
afterAll(async () => {
  await server?.close();
  await rig?.close();
  await env?.teardown();
});

const itemFor = async (ref: string) =>
  (await listItemsNeedingAPerson(env.client)).find((i) => i.customerReferenceNo === ref);
const listed = (ref: string) => eventually(() => itemFor(ref), 30_000);
const gone = (ref: string) => eventually(async () => ((await itemFor(ref)) ? undefined : true), 30_000);

/** The message the page shows (role=status), unescaped. */
function messageIn(html: string): string {
  const m = /<p class="message" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return m.replace(/&(amp|lt|gt|quot|#39);/g, (_, c: string) =>
    c === 'amp' ? '&' : c === 'lt' ? '<' : c === 'gt' ? '>' : c === 'quot' ? '"' : "'",
  );
}

/** A form POST as the page sends it; answers the message the page it redirects to shows. */
async function post(
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
  to: ConsoleServer = server,
) {
  const res = await fetch(`${to.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  const location = res.headers.get('location') ?? '';
  const shown =
    res.status === 303 && location.startsWith('/?') ? await (await fetch(new URL(location, to.url))).text() : '';
  return { status: res.status, message: messageIn(shown), location };
}

const target = (item: ConsoleItem) => ({
  workflowId: item.workflowId,
  runId: item.runId,
  ref: item.customerReferenceNo ?? '',
});

/** The supplier now lists the item's order in `status`, and "check again" on the item answers that it found it. */
async function checkFinds(item: ConsoleItem, status: number) {
  const ref = item.customerReferenceNo ?? '';
  rig.sandbox.setOrderStatus(ref, status);
  const answer = await post('/actions/check', { ...target(item), kind: item.kind });
  expect(answer.message).toBe(`${ref}: checked: the supplier lists the order in status ${status}`);
}

describe('what needs a person', () => {
  test('an unresolved booking is listed with its reference, stage, poll log and age; the page shows it', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const ref = await unresolvedBooking(env, rig);
    const item = await listed(ref);
    expect(item).toMatchObject({
      kind: 'unresolved-booking',
      workflowId: `booking:${ref}`,
      stage: 'unresolved',
      actions: ['check', 'handled'],
    });
    expect(item.polls.length).toBeGreaterThan(0);
    expect(item.polls.every((p) => p.result === 'found' && p.status === 1)).toBe(true);
    expect(item.summary).toMatch(/Book sent 1 time\(s\); \d+ QueryOrders polls, last status 1/);
    expect(item.ageMinutes).toBeGreaterThanOrEqual(0);

    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain(ref);
    expect(page).toContain('Check again now');
    // No guest data: the page shows references, statuses and the poll log only.
    expect(page).not.toContain(bookingRequest().holder.lastName);
  }, 90_000);

  test("a booking's own page shows what it waits for: a refused Book's next send, while it waits", async () => {
    // The first Book answered 429 asking for a minute: the booking waits that long (under the profile's ceiling).
    const request = bookingRequest({ test: 'book=429&bookTimes=1&retryAfter=60' });
    const ref = request.customerReferenceNo;
    const handle = await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    try {
      const waits = await eventually(async () => {
        const page = await (await fetch(`${server.url}/booking?ref=${ref}`)).text();
        return /<ul class="waits" id="waits">[\s\S]*?<\/ul>/.exec(page)?.[0];
      }, 30_000);
      expect(waits).toMatch(
        /Next Book at <code>\d{4}-\d\d-\d\dT[^<]+<\/code> \(the last was refused before any work\)/,
      );
    } finally {
      await handle.terminate('test done');
    }
  });

  test('"check again" resolves it once the supplier lists the order confirmed, through an order run', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const ref = await unresolvedBooking(env, rig);
    const item = await listed(ref);
    // Still pending: the check says so, and the booking stays on the list.
    const pending = await post('/actions/check', { ...target(item), kind: item.kind });
    expect(pending.status).toBe(303);
    expect(pending.message).toContain(ref);
    expect(await itemFor(ref)).toBeDefined();

    await checkFinds(item, 2);
    await gone(ref);
    expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
  }, 120_000);

  test('a booking whose caller asked to cancel stays while its order is Confirmed, saying so, and leaves once Cancelled', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const request = bookingRequest({
      test: 'book=504AfterCreate&outcome=pending',
      recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1, deadlineSeconds: 5 },
    });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    const ref = request.customerReferenceNo;
    // Cancelled once Book may have reached the supplier: noted, not obeyed; the booking still ends unresolved.
    await eventually(async () => ((await getBookingState(env.client, ref)).stage === 'recovering' ? true : undefined));
    await getBookingHandle(env.client, ref).cancel();
    expect(await awaitOutcome(env.client, ref)).toMatchObject({ kind: 'unresolved', cancelRequested: true });
    const item = await listed(ref);

    // The order turns out Confirmed: final, but not what the guest asked for, so the booking stays on the list.
    await checkFinds(item, 2);
    const stays = await itemFor(ref);
    expect(stays).toMatchObject({ runId: item.runId, kind: 'unresolved-booking' });
    // Before the check it said so too, with the status the booking's own polls last read (still Confirming).
    expect(item.summary).toMatch(
      /^Caller asked to cancel; order in status 1 at the last poll, not Cancelled: check again; once it is Confirmed, quote and /,
    );
    expect(stays!.actions).toEqual(['check', 'quote-cancel', 'handled']);
    expect(stays!.summary).toMatch(
      /^Caller asked to cancel; order in status 2 at the last check, not Cancelled: if it is Confirmed, quote and cancel it here at the quoted fee\. /,
    );
    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('Caller asked to cancel; order in status 2');
    // The safe action is there: a quote of the Confirmed order (a quote sends nothing), and the booking stays.
    const quoted = await post('/actions/quote', target(item));
    expect(quoted.message).toBe(`${ref}: quoted`);
    expect(await itemFor(ref)).toBeDefined();

    // Cancelled (here by the hotel, found by a check): what the caller asked for, so it leaves.
    await checkFinds(item, 3);
    await gone(ref);
    expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
  }, 120_000);

  test('"mark handled" records a note run under the operator the console knows, and the item leaves; a second note for it is refused', async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const ref = await unresolvedBooking(env, rig);
    const item = await listed(ref);
    const handled = await post('/actions/handled', {
      ...target(item),
      note: 'called the hotel: no room held',
      by: 'Ana',
    });
    expect(handled.message).toBe(`${ref}: marked handled`);
    await gone(ref);
    const note = await env.client.workflow
      .getHandle(operatorNoteWorkflowId({ workflowId: item.workflowId, runId: item.runId, customerReferenceNo: ref }))
      .result();
    // A name typed into the form is not who did it: on loopback without a login, the console records `loopback`.
    expect(note).toEqual({
      item: { workflowId: item.workflowId, runId: item.runId, customerReferenceNo: ref },
      note: 'called the hotel: no room held',
      by: LOOPBACK_OPERATOR,
    });
    const again = await post('/actions/handled', { ...target(item), note: 'again', by: 'Bo' });
    expect(again.message).toBe('not done: this item was already marked handled');
  }, 90_000);

  test('a note without text is refused, naming the field, and nothing is recorded', async () => {
    const answer = await post('/actions/handled', {
      workflowId: 'booking:x',
      runId: 'r',
      ref: 'x',
      note: ' ',
      by: 'Ana',
    });
    expect(answer.message).toMatch(/^not done: note: /);
  });

  test('an order a cancellation left to a person is listed; a quote refused meanwhile does not hide it', async () => {
    expectWorkerWarnings(/^ERROR Order cancel-failed/);
    const request = bookingRequest({ test: 'confirmAfterMs=0&cancel=failed&cancelAfterQueries=1' });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    const ref = request.customerReferenceNo;
    expect((await awaitOutcome(env.client, ref)).kind).toBe('confirmed');
    const quote = await cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue });
    await cancelBooking(env.client, ref, { confirm: true, acceptedFee: quote.quote.fee }, { taskQueue: rig.taskQueue });
    const item = await listed(ref);
    expect(item).toMatchObject({ kind: 'order', workflowId: `order:${ref}`, stage: 'order-cancel-failed' });
    // The cancellation failed at the supplier: checking and noting are offered, cancelling again is not.
    expect(item.actions).toEqual(['check', 'handled']);

    // Someone asks for a quote anyway (CLI, helper): refused, the order is not confirmed; the item stays, as it was.
    await expect(cancelBooking(env.client, ref, { confirm: false }, { taskQueue: rig.taskQueue })).rejects.toThrow();
    const after = await listed(ref);
    expect(after).toMatchObject({ runId: item.runId, stage: 'order-cancel-failed' });
    expect(after.summary).toMatch(/later: not-cancellable/);
  }, 120_000);
});

describe('cancelling at the quoted fee', () => {
  test('quote, then "Cancel at <fee>" from the quote the page shows: the order is cancelled at that fee', async () => {
    // A confirmed booking whose policy charges now (no free cancellation), cancelled by the supplier after 2 reads.
    const request = bookingRequest({ test: 'confirmAfterMs=0&freeCancel=0&cancelAfterQueries=2' });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    const ref = request.customerReferenceNo;
    expect((await awaitOutcome(env.client, ref)).kind).toBe('confirmed');

    const quoted = await post('/actions/quote', { workflowId: `order:${ref}`, runId: 'any', ref });
    expect(quoted.message).toBe(`${ref}: quoted`);
    const page = await (await fetch(new URL(quoted.location, server.url))).text();
    const form = /<form method="post" action="\/actions\/cancel">([\s\S]*?)<\/form>/.exec(page)?.[1] ?? '';
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(form)?.[1];
    const fee = { amount: field('amount'), currency: field('currency') };
    expect(fee.amount).toMatch(/^\d+(\.\d+)?$/);
    expect(Number(fee.amount)).toBeGreaterThan(0);
    expect(page).toContain(`Cancel at ${fee.amount} ${fee.currency}`);

    const cancelled = await post('/actions/cancel', {
      ref,
      amount: fee.amount!,
      currency: fee.currency!,
      reason: 'guest asked by phone',
    });
    expect(cancelled.message).toBe(`${ref}: cancel-requested`);
    const outcome = await env.client.workflow.getHandle(`order:${ref}`).result();
    expect(outcome).toMatchObject({ kind: 'cancelled' });
    expect(rig.sandbox.orders().find((o) => o.customerReferenceNo === ref)?.status).toBe(3);
  }, 120_000);

  test('a cancel whose fee is not the quote of now is refused by the order workflow, and nothing is sent', async () => {
    const request = bookingRequest({ test: 'confirmAfterMs=0&freeCancel=0' });
    await startBooking(env.client, request, { taskQueue: rig.taskQueue });
    const ref = request.customerReferenceNo;
    expect((await awaitOutcome(env.client, ref)).kind).toBe('confirmed');
    const answer = await post('/actions/cancel', { ref, amount: '0.01', currency: 'USD', reason: 'too cheap' });
    expect(answer.message).toMatch(/^not done: /);
    expect(rig.sandbox.orders().find((o) => o.customerReferenceNo === ref)?.status).toBe(2);
  }, 120_000);
});

describe('who may use it', () => {
  test('beyond loopback it will not start without a token', async () => {
    await expect(startConsole({ client: env.client, taskQueue: rig.taskQueue, host: '0.0.0.0' })).rejects.toThrow(
      ConsoleConfigError,
    );
  });

  test('with operator tokens: refused without a login; the token typed into /login gives a session that opens the page', async () => {
    const token = 'ana-console-token-0123456789abcdef0123';
    const guarded = await startConsole({ client: env.client, taskQueue: rig.taskQueue, operators: { ana: token } });
    try {
      expect((await fetch(`${guarded.url}/`)).status).toBe(401);
      // The token opens nothing but the login form: not as a bearer header, not in the address.
      expect((await fetch(`${guarded.url}/`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await fetch(`${guarded.url}/?token=${token}`, { redirect: 'manual' })).status).toBe(401);
      const loggedIn = await fetch(`${guarded.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
      expect(loggedIn.status).toBe(303);
      const cookie = loggedIn.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
      expect(cookie).not.toContain(token);
      const page = await fetch(`${guarded.url}/`, { headers: { cookie: cookie.split(';')[0]! } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Bookings that need a person');
      expect(html).toContain('Acting as <strong id="operator">ana</strong>');
    } finally {
      await guarded.close();
    }
  });

  test('another site can neither act (Origin) nor read through a rebound name (Host)', async () => {
    const crossSite = await post(
      '/actions/handled',
      { workflowId: 'w', runId: 'r', note: 'n', by: 'b' },
      {
        origin: 'https://evil.example',
      },
    );
    expect(crossSite.status).toBe(403);
    // fetch will not send another Host; node:http will, as a browser on a rebound name would.
    const port = Number(new URL(server.url).port);
    const rebound = await new Promise<number>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path: '/', headers: { host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end(),
    );
    expect(rebound).toBe(421);
    const notAForm = await fetch(`${server.url}/actions/handled`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(notAForm.status).toBe(415);
  });
});

describe('on a cluster we did not set up', () => {
  test('a namespace without our search attributes: a 503 page naming the fix, never an empty list', async () => {
    // A namespace as an operator's own cluster might have it: registered, none of our search attributes.
    const namespace = `console-bare-${Date.now()}`;
    await env.connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    const bare = await startConsole({
      client: new Client({ connection: env.connection, namespace }),
      taskQueue: rig.taskQueue,
    });
    try {
      // The new namespace reaches the frontend's cache within a few seconds; until then the list fails otherwise.
      const page = await eventually(async () => {
        const res = await fetch(`${bare.url}/`);
        const html = await res.text();
        return html.includes('temporal:setup') ? { status: res.status, html } : undefined;
      }, 30_000);
      expect(page.status).toBe(503);
      expect(page.html).toContain(`namespace &quot;${namespace}&quot; lacks the search attributes`);
      expect(page.html).toContain('BookingStage');
      expect(page.html).toContain('WORKER_REGISTER_SEARCH_ATTRIBUTES=on');
      expect(page.html).not.toContain('Nothing needs a person');
    } finally {
      await bare.close();
    }
  }, 60_000);
});

describe('every namespace it watches', () => {
  // A partner's namespace beside `default`, as the production topology has one per partner: its own worker on the
  // same queue name and the same supplier account (the rig's sandbox), reached over the console's one connection.
  const partner = `console-partner-${Date.now()}`;
  let partnerClient: Client;
  let partnerWorker: BookingWorker;
  let partnerRun: Promise<void>;
  let both: ConsoleServer;

  beforeAll(async () => {
    await env.connection.workflowService.registerNamespace({
      namespace: partner,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // The frontend's namespace cache learns of it within a few seconds.
    await eventually(
      () =>
        ensureTemporalReady({ services: env.connection, namespace: partner, register: true }).then(
          () => true,
          () => undefined,
        ),
      30_000,
    );
    partnerClient = new Client({ connection: env.connection, namespace: partner });
    partnerWorker = await createBookingWorker({
      connection: env.nativeConnection,
      namespace: partner,
      taskQueue: rig.taskQueue,
      supplier: rig.supplier,
      profile: testProfile,
      workflowBundle: workflowBundle(),
      recoveryTesting: true,
    });
    partnerRun = partnerWorker.run();
    both = await startConsole({
      clients: [env.client, partnerClient],
      taskQueue: rig.taskQueue,
      checkWaitMs: 30_000,
    });
  }, 60_000);
  afterAll(async () => {
    await both?.close();
    if (partnerWorker?.getState() === 'RUNNING') partnerWorker.shutdown();
    await partnerRun;
  });

  /** A booking in the partner's namespace that ends unresolved (as unresolvedBooking, there). */
  async function partnerUnresolved(): Promise<string> {
    const request = bookingRequest({
      test: 'book=504AfterCreate&outcome=pending',
      recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1, deadlineSeconds: 3 },
    });
    await startBooking(partnerClient, request, { taskQueue: rig.taskQueue });
    expect((await awaitOutcome(partnerClient, request.customerReferenceNo)).kind).toBe('unresolved');
    return request.customerReferenceNo;
  }

  /** The page's row for `ref`, once listed. */
  const rowFor = (ref: string) =>
    eventually(async () => {
      const page = await (await fetch(`${both.url}/`)).text();
      return new RegExp(`<tr class="item" data-ref="${ref}"[\\s\\S]*?</tr>`).exec(page)?.[0];
    }, 30_000);

  test("a partner's unresolved booking is listed beside default's, each labelled, each acted on in its own namespace", async () => {
    expectWorkerWarnings(/^ERROR Booking unresolved/);
    const [home, away] = await Promise.all([unresolvedBooking(env, rig), partnerUnresolved()]);
    const [homeRow, awayRow] = await Promise.all([rowFor(home), rowFor(away)]);
    expect(homeRow).toContain('data-namespace="default"');
    expect(homeRow).toContain('namespace <code>default</code>');
    expect(awayRow).toContain(`data-namespace="${partner}"`);
    expect(awayRow).toContain(`namespace <code>${partner}</code>`);
    expect(awayRow).toContain(`href="/booking?ref=${away}&amp;namespace=${partner}"`);
    expect(awayRow).toContain(`<input type="hidden" name="namespace" value="${partner}">`);
    // The console of one namespace (as before) never saw it.
    expect((await (await fetch(`${server.url}/`)).text()).includes(away)).toBe(false);

    // Its page reads the partner's namespace; in default there is no such booking.
    const detail = await fetch(`${both.url}/booking?ref=${away}&namespace=${partner}`);
    expect(detail.status).toBe(200);
    expect(await detail.text()).toContain(`data-workflow-id="booking:${away}"`);
    expect((await fetch(`${both.url}/booking?ref=${away}&namespace=default`)).status).toBe(404);
    expect((await fetch(`${both.url}/booking?ref=${away}&namespace=partner-nobody`)).status).toBe(400);

    // "Check again" on the partner's item: the order run starts in the partner's namespace, none in default.
    rig.sandbox.setOrderStatus(away, 2);
    const item = { workflowId: `booking:${away}`, runId: '', ref: away, kind: 'unresolved-booking' };
    const runId = (await partnerClient.workflow.getHandle(`booking:${away}`).describe()).runId;
    const checked = await post('/actions/check', { ...item, runId, namespace: partner }, {}, both);
    expect(checked.message).toBe(`${away}: checked: the supplier lists the order in status 2`);
    expect((await partnerClient.workflow.getHandle(`order:${away}`).describe()).status.name).toBe('COMPLETED');
    await expect(env.client.workflow.getHandle(`order:${away}`).describe()).rejects.toThrow(/not found/i);
    await eventually(async () =>
      (await fetch(`${both.url}/`).then((r) => r.text())).includes(away) ? undefined : true,
    );

    // Naming a namespace the console does not watch: refused, nothing started anywhere.
    const homeRunId = (await env.client.workflow.getHandle(`booking:${home}`).describe()).runId;
    const stray = await post(
      '/actions/handled',
      { workflowId: `booking:${home}`, runId: homeRunId, ref: home, note: 'wrong place', namespace: 'partner-nobody' },
      {},
      both,
    );
    expect(stray.message).toBe('not done: namespace: not one this console watches');
    // "Mark handled" on default's item: the note is in default, and the item leaves.
    const handled = await post(
      '/actions/handled',
      { workflowId: `booking:${home}`, runId: homeRunId, ref: home, note: 'called the hotel', namespace: 'default' },
      {},
      both,
    );
    expect(handled.message).toBe(`${home}: marked handled`);
    const noteId = operatorNoteWorkflowId({
      workflowId: `booking:${home}`,
      runId: homeRunId,
      customerReferenceNo: home,
    });
    expect(await env.client.workflow.getHandle(noteId).result()).toMatchObject({ note: 'called the hotel' });
    await expect(partnerClient.workflow.getHandle(noteId).describe()).rejects.toThrow(/not found/i);
  }, 150_000);
});
