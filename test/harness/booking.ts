/**
 * Shared pieces of the booking tests: a sandbox supplier, a real HTTP supplier client, a worker
 * running the booking workflow, and request builders.
 */
import { randomUUID } from 'node:crypto';
import type { DataConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { BookingWorker, createBookingWorker } from '../../src/worker';
import {
  bookingWorkflowId,
  orderWorkflowId,
  type BookingOutcome,
  type BookingRequest,
} from '../../src/api/contract/index';
import type { DriftReporter } from '../../src/runtime/supplier/drift';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { SANDBOX_PROFILE, startSandbox, type Sandbox } from '../../dev/sandbox/server';
import type { bookingWorkflow } from '../../src/workflows';
import { awaitOutcome, startBooking as startBookingWithHelper } from '../../src/api/client/index';
import { workflowBundle } from './temporal';
import type { WorkerBuild } from '../../src/runtime/config/build';

/** Short client timeouts so "hang" scenarios end in about a second of real time. */
export const testProfile = SupplierProfile.parse({
  ...SANDBOX_PROFILE,
  timeoutsMs: { book: 1_500, checkAvail: 1_500, queryOrders: 1_500 },
});

export interface BookingRig {
  sandbox: Sandbox;
  supplier: SupplierClient;
  taskQueue: string;
  worker: BookingWorker;
  /** Starts the worker; the returned promise settles when it stops. */
  run(): Promise<void>;
  /** Stops the worker and waits for it. */
  stopWorker(): Promise<void>;
  /** A fresh worker on the same queue, as after a crash and restart (or a deploy: `changes` to its options). */
  restartWorker(changes?: Pick<RigOptions, 'recoveryTesting'>): Promise<void>;
  /**
   * Terminates the order workflows of the sandbox's orders (a confirmed booking leaves one open until check-in).
   * close() does it: on the Java test server, a workflow whose worker is gone and whose timer the server skips
   * to gets a task no one takes, and that stops time skipping for every later test file.
   */
  endOrderWorkflows(): Promise<void>;
  close(): Promise<void>;
}

export interface RigOptions {
  /**
   * Workflows cached per worker. 0 turns sticky execution off: the Java test server does not move a
   * workflow task off the sticky queue of a worker that shut down (a real server does after 5 s), so
   * tests that restart a worker there use 0.
   */
  maxCachedWorkflows?: number;
  /** The worker's data converter (payload encryption). */
  dataConverter?: DataConverter;
  /** Where the supplier client reports schema drift (default: its own reporter, to the console). */
  drift?: DriftReporter;
  /** The supplier profile of client and worker (default: testProfile). */
  profile?: SupplierProfile;
  /** The sandbox's clock (default: real time); see alignedClock. */
  sandboxNow?: () => number;
  /** Order-status callbacks: the URL the worker sends with Book, and the secret the sandbox signs them with. */
  callbacks?: { url: string; secret: string };
  /**
   * The worker's RECOVERY_TESTING switch (default on): tests scale the recovery schedule down with
   * `recovery.testing`. Off for a test of what a production worker refuses.
   */
  recoveryTesting?: boolean;
  /** The worker's build in a Worker Deployment (default: unversioned). */
  deployment?: WorkerBuild;
}

/**
 * A clock that reads the time-skipping server's time when called, moving on in real time after that:
 * orders' dates (check-in, cancel deadlines) then agree with workflow time, which earlier test files may
 * have skipped days ahead.
 */
export async function alignedClock(env: TestWorkflowEnvironment): Promise<() => number> {
  const offset = (await env.currentTimeMs()) - Date.now();
  return () => Date.now() + offset;
}

export async function createBookingRig(
  env: TestWorkflowEnvironment,
  name: string,
  options: RigOptions = {},
): Promise<BookingRig> {
  const sandbox = await startSandbox({
    port: 0,
    ...(options.sandboxNow ? { now: options.sandboxNow } : {}),
    ...(options.callbacks ? { callbackSecret: options.callbacks.secret } : {}),
  });
  const profile = options.profile ?? testProfile;
  const tokens = ticketTokens({
    baseUrl: sandbox.url,
    profile,
    appKey: 'sandbox-app',
    appSecret: 'sandbox-secret',
  });
  const supplier = createHttpSupplierClient({
    baseUrl: sandbox.url,
    profile,
    tokens,
    ...(options.drift ? { drift: options.drift } : {}),
  });
  const orders = createQueryOrdersCoalescer({ supplier, profile });
  const taskQueue = `${name}-${randomUUID().slice(0, 8)}`;
  const makeWorker = (changes: Pick<RigOptions, 'recoveryTesting'> = {}) =>
    // The worker pair production runs (booking queue + rate-limited QueryOrders queue), through the
    // QueryOrders coalescer: the exact poll times the tests check are its.
    createBookingWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      supplier,
      profile,
      orders,
      workflowBundle: workflowBundle(),
      ...(options.maxCachedWorkflows !== undefined
        ? { tuning: { maxCachedWorkflows: options.maxCachedWorkflows } }
        : {}),
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
      ...(options.callbacks ? { callbackUrl: options.callbacks.url } : {}),
      recoveryTesting: changes.recoveryTesting ?? options.recoveryTesting ?? true,
      ...(options.deployment ? { deployment: options.deployment } : {}),
    });
  let running: Promise<void> | undefined;
  const rig: BookingRig = {
    sandbox,
    supplier,
    taskQueue,
    worker: await makeWorker(),
    run() {
      running = rig.worker.run();
      return running;
    },
    async stopWorker() {
      if (rig.worker.getState() === 'RUNNING') rig.worker.shutdown();
      await running;
    },
    async restartWorker(changes) {
      await rig.stopWorker();
      rig.worker = await makeWorker(changes);
      void rig.run();
    },
    async endOrderWorkflows() {
      await Promise.all(
        sandbox.orders().map((o) =>
          env.client.workflow
            .getHandle(orderWorkflowId(o.customerReferenceNo))
            .terminate('test rig closed')
            .catch(() => undefined),
        ),
      );
    },
    async close() {
      await rig.endOrderWorkflows();
      await rig.stopWorker();
      orders.close();
      await supplier.close();
      await tokens.close?.();
      await sandbox.close();
    },
  };
  void rig.run();
  return rig;
}

export const holder = {
  firstName: 'Augusta',
  lastName: 'Lovelace',
  email: 'augusta.lovelace@example.com',
  phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' },
};
export const guests = [
  { roomIndex: 0, firstName: 'Augusta', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false },
];

/** The personal values of a request, for scans that must not find them in clear. */
export function personalValues(request: BookingRequest): string[] {
  const { holder, guests } = request;
  return [
    holder.email,
    holder.firstName,
    holder.lastName,
    holder.phone.number,
    ...guests.flatMap((g) => [g.firstName, g.lastName]),
  ];
}

export function bookingRequest(overrides: Partial<BookingRequest> & { test?: string } = {}): BookingRequest {
  const { test, ...rest } = overrides;
  return {
    customerReferenceNo: randomUUID(),
    ratePkgId: 'pkg-standard-double',
    holder,
    guests,
    ...rest,
    context: { ...rest.context, ...(test !== undefined ? { test } : {}) },
  };
}

export async function startBooking(
  env: TestWorkflowEnvironment,
  rig: BookingRig,
  request: BookingRequest,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof bookingWorkflow>> {
  return env.client.workflow.start<typeof bookingWorkflow>('bookingWorkflow', {
    taskQueue: rig.taskQueue,
    workflowId: bookingWorkflowId(request.customerReferenceNo),
    args: [request],
  });
}

export async function book(
  env: TestWorkflowEnvironment,
  rig: BookingRig,
  request: BookingRequest,
): Promise<BookingOutcome> {
  const handle = await startBooking(env, rig, request);
  return handle.result();
}

/**
 * A booking that ends `unresolved`, started by the client helper: Book's answer is lost after the order was made,
 * the order stays pending, and a test schedule (the rig's worker accepts it) gives up after `deadlineSeconds`.
 * Returns its reference. The worker logs the booking's ERROR line: declare it expected.
 */
export async function unresolvedBooking(
  env: TestWorkflowEnvironment,
  rig: BookingRig,
  deadlineSeconds = 3,
): Promise<string> {
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { testing: true, delaysSeconds: [1], repeatEverySeconds: 1, deadlineSeconds },
  });
  await startBookingWithHelper(env.client, request, { taskQueue: rig.taskQueue });
  expect((await awaitOutcome(env.client, request.customerReferenceNo)).kind).toBe('unresolved');
  return request.customerReferenceNo;
}

/** The promise of the whole product: never two supplier orders for one reference. */
export function expectAtMostOneOrderPerReference(sandbox: Sandbox): void {
  const counts = new Map<string, number>();
  for (const order of sandbox.orders())
    counts.set(order.customerReferenceNo, (counts.get(order.customerReferenceNo) ?? 0) + 1);
  const duplicates = [...counts].filter(([, n]) => n > 1);
  expect(duplicates).toEqual([]);
}

/** Polls `check` until it returns a value, in real time (the time-skipping clock stays locked meanwhile). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A workflow's result on the time-skipping server, read with a plain client: while it still runs, the server's clock
 * is moved on `step` at a time (the time-skipping client's own result() lets the server jump to any workflow's next
 * timer). Fails when it has not ended after `steps` steps.
 */
export async function settledBySkipping<T>(
  env: TestWorkflowEnvironment,
  handle: WorkflowHandle<() => Promise<T>>,
  { step = '2 seconds', steps = 60 }: { step?: Duration; steps?: number } = {},
): Promise<T> {
  for (let i = 0; i < steps; i++) {
    const done = await eventually(
      async () => ((await handle.describe()).status.name !== 'RUNNING' ? true : undefined),
      1_500,
    ).catch(() => false);
    if (done) return handle.result();
    await env.sleep(step);
  }
  throw new Error(`${handle.workflowId} did not end`);
}

const EventType = temporal.api.enums.v1.EventType;
const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) + (t?.nanos ?? 0) / 1e9;

/** Seconds from the last Book's completion to each QueryOrders activity being scheduled, by the server's clock. */
export async function pollOffsetsFromHistory(env: TestWorkflowEnvironment, workflowId: string): Promise<number[]> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const activityType = new Map<number, string>();
  let bookDoneAt: number | undefined;
  const offsets: number[] = [];
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '';
      activityType.set(Number(e.eventId), name);
      if (name === 'queryOrder' && bookDoneAt !== undefined)
        offsets.push(Math.round(seconds(e.eventTime) - bookDoneAt));
    }
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const scheduledId = Number(e.activityTaskCompletedEventAttributes?.scheduledEventId);
      if (activityType.get(scheduledId) === 'book') bookDoneAt = seconds(e.eventTime);
    }
  }
  return offsets;
}
