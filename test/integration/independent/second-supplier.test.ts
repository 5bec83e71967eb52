/**
 * Independent check of #47 (a second supplier the project did not build), written without reading the product's code
 * or its tests. A platform written from the spec's text with its own values for what the spec leaves "not shown"
 * (OWN_VALUES: order statuses 10-15, CheckAvail 7/8, a page of 25) is onboarded as docs/suppliers.md, "From test
 * credentials to bookings", says: the conformance kit writes its profile (`--write-profile`), the profile goes as is
 * into the accounts file (`SUPPLIER_ACCOUNTS_FILE`) as a second account beside one that follows supplier-facts.md,
 * the worker starts as `npm run worker` does, and a booking naming the account (`supplier`) is confirmed there. No
 * code of the product is changed or imported beyond the client helper's public entry.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectDevServer } from '../../harness/temporal';
import { startWorkerProcess, type WorkerProcess } from '../../harness/worker-process';
import { awaitOutcome, getBookingState, startBooking } from '../../../src/api/client/index';
import { runKit, type KitRun } from './kit';
import { FACTS_VALUES, OWN_VALUES, startIndependentSupplier, type SpecSupplier } from './supplier';

jest.setTimeout(80_000);

const taskQueue = `indep-accounts-${randomUUID().slice(0, 8)}`;
// The client helper starts bookings on BOOKING_TASK_QUEUE (clients/typescript/README.md); Jest gives this file its own env.
process.env.BOOKING_TASK_QUEUE = taskQueue;

let env: TestWorkflowEnvironment;
let first: SpecSupplier;
let second: SpecSupplier;
let kit: KitRun;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  env = await connectDevServer();
  [first, second] = await Promise.all([startIndependentSupplier(FACTS_VALUES), startIndependentSupplier(OWN_VALUES)]);
  kit = await runKit(second);
});

afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await Promise.all([first?.close(), second?.close()]);
  // Closes this file's connections only; the dev server is the harness's.
  await env?.teardown();
});

test('the kit onboards the unseen supplier: no blocker, a profile written with its own numbers', () => {
  expect(kit.report.clauses.filter((c) => c.result === 'blocker')).toEqual([]);
  const profile = JSON.parse(readFileSync(kit.profileFile, 'utf8')) as {
    orderStatus?: Record<string, number>;
    checkAvailStatus?: Record<string, number>;
  };
  expect(profile.orderStatus).toMatchObject({ confirmed: 12, cancelled: 13, failed: 14 });
  expect(profile.checkAvailStatus).toEqual({ available: 7, unavailable: 8 });
});

test('its profile, as written, in the accounts file as a second account: a booking naming it is confirmed there, once', async () => {
  const dir = kit.dir;
  writeFileSync(path.join(dir, 'first.token'), first.token);
  writeFileSync(path.join(dir, 'second.token'), second.token);
  const accountsFile = path.join(dir, 'accounts.json');
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: [
        {
          id: 'indep-facts',
          baseUrl: first.url,
          credentials: { tokenFile: 'first.token' },
          profile: {},
          partners: ['*'],
        },
        {
          id: 'indep-own',
          baseUrl: second.url,
          credentials: { tokenFile: 'second.token' },
          profile: JSON.parse(readFileSync(kit.profileFile, 'utf8')) as unknown,
          partners: ['*'],
        },
      ],
    }),
  );
  worker = await startWorkerProcess(
    { temporalAddress: env.address, supplierUrl: first.url },
    {
      BOOKING_TASK_QUEUE: taskQueue,
      SUPPLIER_PROFILE: '{}',
      SUPPLIER_ACCOUNTS_FILE: accountsFile,
      RECONCILIATION_SCHEDULE: 'off',
    },
    'Worker polling task queue',
  );

  const ref = randomUUID();
  await startBooking(env.client, {
    customerReferenceNo: ref,
    ratePkgId: 'pkg-indep-own',
    supplier: 'indep-own',
    holder: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: { countryCode: 'GB', number: '2079460000' },
    },
    guests: [{ roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false }],
  });
  const outcome = await awaitOutcome(env.client, ref);
  expect(outcome.kind).toBe('confirmed');
  expect((await getBookingState(env.client, ref)).supplier).toBe('indep-own');
  expect(second.ordersFor(ref)).toEqual([expect.objectContaining({ status: OWN_VALUES.orderStatus.confirmed })]);
  const books = (s: SpecSupplier): number =>
    s.requests.filter((r) => r.path === '/api/trade/book' && r.body.customerReferenceNo === ref).length;
  expect([books(first), books(second)]).toEqual([0, 1]);
});
