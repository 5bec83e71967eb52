/**
 * Least privilege on the production topology as `npm run stack:prod` runs it (mutual TLS, the nodes running
 * dev/temporal/authz-server): each identity's certificate (dev/prod/certs.ts) may make the calls its job needs and
 * is refused everything else with PERMISSION_DENIED; the internode ports (history, matching) take the nodes'
 * certificate only; every write and refusal is an audit line; a partner's certificate gets the subject we set; a
 * worker's and a receiver's certificate act only in the namespace their CN names; a person's operator certificate
 * (`certs.ts issue-operator`) is named in the audit log and in what the CLI records; the deploy command's `settings`
 * and `move` work with the operator's certificate there and are refused to every other.
 *
 * The probes are raw calls on ids and a task queue nobody works: the authorizer decides before the handler, so an
 * allowed call answers (NOT_FOUND for an unknown run, a poll's deadline, ...) and a refused one is code 7 whatever
 * the target. The flows below them run for real, with a worker on the workers' certificate.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import Long from 'long';
import { Client, Connection } from '@temporalio/client';
import {
  awaitOutcome,
  BookingStageKey,
  cancelBooking,
  connectClient,
  CustomerReferenceNoKey,
  queryOrdersTaskQueue,
  recordHandled,
  startBooking,
  sweepScheduleId,
} from '../../src/api/client/index';
import { loadConfig } from '../../src/runtime/config/index';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { ensureReconciliationSchedule } from '../../src/runtime/namespace/sweep-schedule';
import { temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import { sandboxWorkerEnv, startWorkerFromEnv, type RunningWorker } from '../harness/prod-worker';
import {
  ensureCertificates,
  issueClientCertificate,
  issuePartnerCertificate,
  main as certsMain,
  newKeyAndRequest,
  temporalTlsEnv,
  type CertPair,
  type ClientIdentity,
  type StackCertificates,
} from '../../dev/prod/certs';
import { startProdCluster, waitForSearchAttributes, type ProdCluster } from '../../dev/prod/cluster';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { operatorIdentity } from '../../src/operators/shared/identity';
import { parseDeployArgs } from '../../src/operators/deploy/command';
import { runDeployStep } from '../../src/operators/deploy/main';
import { lastPolls, openPinnedRunsOn, pinRunTo, setCurrentBuild } from '../../src/operators/deploy/routing';
import { settingsStep } from '../../src/operators/deploy/settings';
import { DEPLOY_OWNED_NOTE } from '../../src/runtime/namespace/sweep-schedule';
import { bookingRequest, eventually } from '../harness/booking';
import { ClusterConnections } from '../harness/prod-connections';

let dataDir: string;
let certs: StackCertificates;
let cluster: ProdCluster;
let sandbox: Sandbox;
let worker: RunningWorker | undefined;
let baseEnv: Record<string, string>;
const taskQueue = `lp-${randomUUID().slice(0, 8)}`;
/** A task queue no worker polls: what the probes start stays there, untouched. */
const probeQueue = `lp-probe-${randomUUID().slice(0, 8)}`;
/** The versioned workers' queue of the deploy test (builds A and B of one deployment). */
const deployQueue = `lp-deploy-${randomUUID().slice(0, 8)}`;
const connections = new ClusterConnections(() => ({ address: cluster.address, certs }));

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'booking-prod-lp-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the folder (mkdtemp makes it 0700).
  chmodSync(dataDir, 0o755);
  certs = ensureCertificates(path.join(dataDir, 'certs'), { caDir: path.join(dataDir, 'ca') });
  cluster = await startProdCluster({
    dataDir,
    frontendPort: 0,
    basePort: 0,
    postgresPort: 0,
    tls: certs,
    // The partner this file issues a certificate to books in the same namespace (partners apart: partners.test.ts).
    partnerNamespaces: { stack: ['default'], acme: ['default'] },
    // The queues a start may name: the worker's and the probes' (a start on any other is refused).
    bookingTaskQueues: [taskQueue, probeQueue, deployQueue],
    log() {},
  });
  const setup = await connectAs('operator');
  await ensureTemporalReady({ services: setup, namespace: cluster.namespace, register: true });
  await waitForSearchAttributes(cluster, [CustomerReferenceNoKey.name, BookingStageKey.name]);
  sandbox = await startSandbox({ port: 0 });
  baseEnv = {
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: cluster.namespace,
    BOOKING_TASK_QUEUE: taskQueue,
    PAYLOAD_ENCRYPTION_KEYS: '',
  };
}, 180_000);

afterAll(async () => {
  await connections.closeAll();
  await sandbox?.close();
  await cluster?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** A raw connection as `who`, with no retry interceptor: a refusal is the answer. */
const connectAs = (who: ClientIdentity | CertPair): Promise<Connection> => connections.connectAs(who);

function clientAs(who: ClientIdentity): Promise<Client> {
  return connectClient({ ...baseEnv, ...temporalTlsEnv(certs, who) });
}

/**
 * 'denied' when the authorizer refused (PERMISSION_DENIED, gRPC 7, with its "Request unauthorized." message); 'allowed'
 * for an answer or any other error: the handler ran (NOT_FOUND for an unknown run, a poll's deadline, and the
 * handler's own PERMISSION_DENIED for an update that waits only to be admitted).
 */
async function decision(call: () => Promise<unknown>): Promise<'allowed' | 'denied'> {
  return call().then(
    () => 'allowed',
    (err: { code?: number; details?: string }) =>
      err?.code === 7 && /^Request unauthorized/.test(err.details ?? '') ? 'denied' : 'allowed',
  );
}

const ns = () => cluster.namespace;
const id = (prefix: string) => `${prefix}${randomUUID()}`;
const start = (workflowType: string, workflowId: string, extra: Record<string, unknown> = {}) => ({
  namespace: ns(),
  workflowId,
  workflowType: { name: workflowType },
  taskQueue: { name: probeQueue },
  requestId: randomUUID(),
  ...extra,
});
/** WorkflowIdConflictPolicy: what the client helper sends, and what ends a running run. */
const USE_EXISTING = 2;
const TERMINATE_EXISTING = 3;
/** WorkflowIdReusePolicy TERMINATE_IF_RUNNING: ends a running run, too. */
const TERMINATE_IF_RUNNING = 4;
/** A keyword as the SDKs encode it (search attributes, memo fields). */
const keyword = (value: string) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});
/** Update stage ADMITTED: the server answers once the update is in, without a worker to accept it. */
const admitted = { lifecycleStage: 1 };
const update = (workflowId: string, name: string) => ({
  namespace: ns(),
  workflowExecution: { workflowId },
  waitPolicy: admitted,
  request: { meta: { updateId: randomUUID() }, input: { name } },
});
/** A call that would wait (a poll): its deadline passing means it was let in. */
const briefly = (c: Connection, call: () => Promise<unknown>) => c.withDeadline(Date.now() + 2_000, call);

/** Every probe: a name and the raw call, on a connection holding one identity's certificate. */
const PROBES: Record<string, (c: Connection) => Promise<unknown>> = {
  'start bookingWorkflow (booking:<ref>)': (c) =>
    c.workflowService.startWorkflowExecution(start('bookingWorkflow', id('booking:'))),
  'start bookingWorkflow under order:<ref>': (c) =>
    c.workflowService.startWorkflowExecution(start('bookingWorkflow', id('order:'))),
  'start bookingWorkflow with eager execution': (c) =>
    c.workflowService.startWorkflowExecution(start('bookingWorkflow', id('booking:'), { requestEagerExecution: true })),
  // What a start asks for (each refused to all but operators; each was accepted from a caller before): ending a
  // running run, a deadline that cuts a booking off after Book, labels the console and the order run read back.
  'start bookingWorkflow with TERMINATE_EXISTING': (c) =>
    c.workflowService.startWorkflowExecution(
      start('bookingWorkflow', id('booking:'), { workflowIdConflictPolicy: TERMINATE_EXISTING }),
    ),
  'start bookingWorkflow with an execution timeout of 20 s': (c) =>
    c.workflowService.startWorkflowExecution(
      start('bookingWorkflow', id('booking:'), { workflowExecutionTimeout: { seconds: 20 } }),
    ),
  'start bookingWorkflow with a retry policy': (c) =>
    c.workflowService.startWorkflowExecution(
      start('bookingWorkflow', id('booking:'), { retryPolicy: { maximumAttempts: 3 } }),
    ),
  'start bookingWorkflow with a memo': (c) =>
    c.workflowService.startWorkflowExecution(
      start('bookingWorkflow', id('booking:'), { memo: { fields: { note: keyword('from the caller') } } }),
    ),
  'start bookingWorkflow with BookingStage "unresolved"': (c) =>
    c.workflowService.startWorkflowExecution(
      start('bookingWorkflow', id('booking:'), {
        searchAttributes: { indexedFields: { BookingStage: keyword('unresolved') } },
      }),
    ),
  'start bookingWorkflow on a queue that is not a booking queue': (c) =>
    c.workflowService.startWorkflowExecution({
      ...start('bookingWorkflow', id('booking:')),
      taskQueue: { name: `${probeQueue}-elsewhere` },
    }),
  'start orderWorkflow (plain start)': (c) =>
    c.workflowService.startWorkflowExecution(start('orderWorkflow', id('order:'))),
  'start reconciliationSweepWorkflow': (c) =>
    c.workflowService.startWorkflowExecution(start('reconciliationSweepWorkflow', id('reconciliation:'))),
  'start operatorNoteWorkflow': (c) =>
    c.workflowService.startWorkflowExecution(start('operatorNoteWorkflow', id('note:'))),
  'cancelBooking by Update-With-Start on orderWorkflow': (c) => {
    const workflowId = id('order:');
    return c.workflowService.executeMultiOperation({
      namespace: ns(),
      operations: [
        { startWorkflow: { ...start('orderWorkflow', workflowId), workflowIdConflictPolicy: USE_EXISTING } },
        { updateWorkflow: update(workflowId, 'cancelBooking') },
      ],
    });
  },
  'another update by Update-With-Start on orderWorkflow': (c) => {
    const workflowId = id('order:');
    return c.workflowService.executeMultiOperation({
      namespace: ns(),
      operations: [
        { startWorkflow: { ...start('orderWorkflow', workflowId), workflowIdConflictPolicy: USE_EXISTING } },
        { updateWorkflow: update(workflowId, 'approvePriceChange') },
      ],
    });
  },
  'cancelBooking as a plain update': (c) =>
    c.workflowService.updateWorkflowExecution(update(id('order:'), 'cancelBooking')),
  'approvePriceChange update on a booking': (c) =>
    c.workflowService.updateWorkflowExecution(update(id('booking:'), 'approvePriceChange')),
  'autoCancel by signal-with-start on orderWorkflow': (c) =>
    c.workflowService.signalWithStartWorkflowExecution({
      ...start('orderWorkflow', id('order:')),
      signalName: 'autoCancel',
    }),
  'autoCancel as a plain signal': (c) =>
    c.workflowService.signalWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('order:') },
      signalName: 'autoCancel',
      requestId: randomUUID(),
    }),
  'supplierOrderUpdate signal to a booking': (c) =>
    c.workflowService.signalWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
      signalName: 'supplierOrderUpdate',
      requestId: randomUUID(),
    }),
  // What receivers before the checkOrder signal sent: a hint that starts a run. A hint goes to an open run only.
  'supplierOrderUpdate by signal-with-start on orderWorkflow': (c) =>
    c.workflowService.signalWithStartWorkflowExecution({
      ...start('orderWorkflow', id('order:')),
      signalName: 'supplierOrderUpdate',
    }),
  "an operator's check: operatorCheckOrder by signal-with-start": (c) =>
    c.workflowService.signalWithStartWorkflowExecution({
      ...start('orderWorkflow', id('order:')),
      signalName: 'operatorCheckOrder',
    }),
  'order check: checkOrder by signal-with-start': (c) =>
    c.workflowService.signalWithStartWorkflowExecution({
      ...start('orderWorkflow', id('order:')),
      signalName: 'checkOrder',
    }),
  query: (c) =>
    c.workflowService.queryWorkflow({
      namespace: ns(),
      execution: { workflowId: id('booking:') },
      query: { queryType: 'bookingState' },
    }),
  describe: (c) =>
    c.workflowService.describeWorkflowExecution({ namespace: ns(), execution: { workflowId: id('booking:') } }),
  list: (c) => c.workflowService.listWorkflowExecutions({ namespace: ns(), pageSize: 1 }),
  history: (c) =>
    c.workflowService.getWorkflowExecutionHistory({ namespace: ns(), execution: { workflowId: id('booking:') } }),
  terminate: (c) =>
    c.workflowService.terminateWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
    }),
  reset: (c) =>
    c.workflowService.resetWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
      workflowTaskFinishEventId: Long.fromNumber(3),
      requestId: randomUUID(),
    }),
  delete: (c) =>
    c.workflowService.deleteWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId: id('booking:') } }),
  'request cancellation of an order run': (c) =>
    c.workflowService.requestCancelWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('order:') },
      requestId: randomUUID(),
    }),
  'request cancellation': (c) =>
    c.workflowService.requestCancelWorkflowExecution({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
      requestId: randomUUID(),
    }),
  'poll workflow tasks': (c) =>
    briefly(c, () =>
      c.workflowService.pollWorkflowTaskQueue({ namespace: ns(), taskQueue: { name: probeQueue }, identity: 'probe' }),
    ),
  'poll activity tasks (QueryOrders)': (c) =>
    briefly(c, () =>
      c.workflowService.pollActivityTaskQueue({
        namespace: ns(),
        taskQueue: { name: `${probeQueue}-query-orders` },
        identity: 'probe',
      }),
    ),
  'complete an activity task': (c) =>
    c.workflowService.respondActivityTaskCompleted({ namespace: ns(), taskToken: Buffer.from('forged') }),
  "create the worker's sweep schedule": (c) =>
    c.workflowService.createSchedule({
      namespace: ns(),
      scheduleId: id('reconciliation:'),
      requestId: randomUUID(),
      schedule: {
        spec: { interval: [{ interval: { seconds: Long.fromNumber(86_400) } }] },
        action: {
          startWorkflow: {
            workflowId: id('reconciliation:'),
            workflowType: { name: 'reconciliationSweepWorkflow' },
            taskQueue: { name: probeQueue },
          },
        },
      },
    }),
  'pause a schedule': (c) =>
    c.workflowService.patchSchedule({
      namespace: ns(),
      scheduleId: `reconciliation:${taskQueue}`,
      patch: { pause: 'probe' },
      requestId: randomUUID(),
    }),
  'delete a schedule': (c) =>
    c.workflowService.deleteSchedule({ namespace: ns(), scheduleId: `reconciliation:${probeQueue}-none` }),
  'set a task queue rate limit': (c) =>
    c.workflowService.updateTaskQueueConfig({
      namespace: ns(),
      taskQueue: `${probeQueue}-query-orders`,
      taskQueueType: 2,
      updateQueueRateLimit: { rateLimit: { requestsPerSecond: 1 }, reason: 'probe' },
    }),
  'pause an activity': (c) =>
    c.workflowService.pauseActivity({ namespace: ns(), execution: { workflowId: id('booking:') }, id: 'book' }),
  'change activity options': (c) =>
    c.workflowService.updateActivityOptions({
      namespace: ns(),
      execution: { workflowId: id('booking:') },
      id: 'book',
      activityOptions: {},
      updateMask: { paths: [] },
    }),
  'pin a run to a version': (c) =>
    c.workflowService.updateWorkflowExecutionOptions({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
      workflowExecutionOptions: { versioningOverride: { autoUpgrade: true } },
      updateMask: { paths: ['versioning_override'] },
    }),
  // What `deploy move` does to each run it moves, and how every gate run starts: a run pinned to a named build.
  'pin a run to a build (deploy move)': (c) =>
    c.workflowService.updateWorkflowExecutionOptions({
      namespace: ns(),
      workflowExecution: { workflowId: id('booking:') },
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: { behavior: 1, version: { deploymentName: `probe-${probeQueue}`, buildId: 'none' } },
        },
      },
      updateMask: { paths: ['versioning_override'] },
    }),
  'start the deploy gate run pinned to a build': (c) =>
    c.workflowService.startWorkflowExecution(
      start('deployGateWorkflow', id('deploy-gate:'), {
        versioningOverride: {
          pinned: { behavior: 1, version: { deploymentName: `probe-${probeQueue}`, buildId: 'none' } },
        },
      }),
    ),
  'make a build current (deploy)': (c) =>
    briefly(c, () =>
      c.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: ns(),
        deploymentName: `probe-${probeQueue}`,
        buildId: 'none',
        identity: 'probe',
      }),
    ),
  'ramp a build (deploy)': (c) =>
    briefly(c, () =>
      c.workflowService.setWorkerDeploymentRampingVersion({
        namespace: ns(),
        deploymentName: `probe-${probeQueue}`,
        buildId: 'none',
        percentage: 10,
        identity: 'probe',
      }),
    ),
  'register a search attribute': (c) =>
    c.operatorService.addSearchAttributes({ namespace: ns(), searchAttributes: { BookingStage: 2 } }),
};

const READS = ['query', 'describe', 'list', 'history'];
/** What each identity's job needs; every other probe must be refused. */
const ALLOWED: Record<ClientIdentity, string[]> = {
  caller: [
    'start bookingWorkflow (booking:<ref>)',
    'cancelBooking by Update-With-Start on orderWorkflow',
    'approvePriceChange update on a booking',
    // onCancelAfterBook's door: a partner cancels its own booking in flight.
    'request cancellation',
    ...READS,
  ],
  receiver: ['supplierOrderUpdate signal to a booking', 'order check: checkOrder by signal-with-start', ...READS],
  worker: [
    'start orderWorkflow (plain start)',
    'autoCancel by signal-with-start on orderWorkflow',
    'poll workflow tasks',
    'poll activity tasks (QueryOrders)',
    'complete an activity task',
    "create the worker's sweep schedule",
    ...READS,
  ],
  operator: Object.keys(PROBES).filter(
    (p) =>
      ![
        'start bookingWorkflow with eager execution',
        'autoCancel by signal-with-start on orderWorkflow',
        'autoCancel as a plain signal',
        'supplierOrderUpdate signal to a booking',
        'supplierOrderUpdate by signal-with-start on orderWorkflow',
        'poll workflow tasks',
        'poll activity tasks (QueryOrders)',
        'complete an activity task',
      ].includes(p),
  ),
};

async function decisionsOf(connection: Connection): Promise<Record<string, 'allowed' | 'denied'>> {
  const out: Record<string, 'allowed' | 'denied'> = {};
  for (const [name, call] of Object.entries(PROBES)) out[name] = await decision(() => call(connection));
  return out;
}

describe.each(['caller', 'receiver', 'worker', 'operator'] as const)('the %s certificate', (who) => {
  test('may make the calls its job needs and is refused every other (PERMISSION_DENIED)', async () => {
    const expected = Object.fromEntries(
      Object.keys(PROBES).map((name) => [name, ALLOWED[who].includes(name) ? 'allowed' : 'denied']),
    );
    expect(await decisionsOf(await connectAs(who))).toEqual(expected);
  }, 90_000);
});

describe('the jobs, done for real by their own identities', () => {
  // The worker as `npm run worker` builds it, from the TEMPORAL_TLS_* variables, with the workers' certificate.
  beforeAll(async () => {
    worker = await startWorkerFromEnv({
      ...baseEnv,
      ...temporalTlsEnv(certs, 'worker'),
      ...sandboxWorkerEnv(sandbox.url),
    });
  }, 60_000);

  afterAll(() => worker?.stop(), 60_000);

  test('a caller books and quotes a cancellation; the worker (its own certificate) does the work', async () => {
    const caller = await clientAs('caller');
    try {
      const request = bookingRequest({ test: 'confirmAfterMs=0' });
      await startBooking(caller, request, { taskQueue });
      expect((await awaitOutcome(caller, request.customerReferenceNo)).kind).toBe('confirmed');
      const quote = await cancelBooking(caller, request.customerReferenceNo, { confirm: false }, { taskQueue });
      expect(quote).toMatchObject({ kind: 'quote' });
    } finally {
      await caller.connection.close();
    }
  }, 90_000);

  test('the callback receiver passes a hint to a running booking and starts an order check for a reference nobody follows', async () => {
    const caller = await clientAs('caller');
    const receiverClient = await clientAs('receiver');
    try {
      const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500' });
      await startBooking(caller, request, { taskQueue });
      const target = temporalCallbackTarget(receiverClient, { taskQueue });
      expect(await target.signal({ customerReferenceNo: request.customerReferenceNo })).toBe('booking');
      expect(await target.signal({ customerReferenceNo: randomUUID() })).toBe('order');
    } finally {
      await caller.connection.close();
      await receiverClient.connection.close();
    }
  }, 60_000);

  test('the worker keeps its reconciliation schedule (created, then updated)', async () => {
    const workerClient = await clientAs('worker');
    try {
      const config = loadConfig({ ...baseEnv, SUPPLIER_BASE_URL: sandbox.url, SUPPLIER_TOKEN: 't' });
      const options = {
        taskQueue: probeQueue,
        reconciliation: config.reconciliation!,
        profile: config.supplier.profile,
      };
      expect((await ensureReconciliationSchedule(workerClient, options)).created).toBe(true);
      expect((await ensureReconciliationSchedule(workerClient, options)).created).toBe(false);
    } finally {
      await workerClient.connection.close();
    }
  });

  test("a caller's TERMINATE_EXISTING over its running booking is refused; its own cancellation request is let in", async () => {
    const caller = await clientAs('caller');
    const raw = await connectAs('caller');
    try {
      const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500' });
      const handle = await startBooking(caller, request, { taskQueue });
      const { runId } = await handle.describe();
      const startOver = (policies: Record<string, number>) =>
        decision(() =>
          raw.workflowService.startWorkflowExecution({
            ...start('bookingWorkflow', handle.workflowId),
            taskQueue: { name: taskQueue },
            ...policies,
          }),
        );
      expect(await startOver({ workflowIdConflictPolicy: TERMINATE_EXISTING })).toBe('denied');
      expect(await startOver({ workflowIdReusePolicy: TERMINATE_IF_RUNNING })).toBe('denied');
      const after = await handle.describe();
      expect([after.runId, after.status.name]).toEqual([runId, 'RUNNING']);
      // onCancelAfterBook's door: the partner asks its own booking in flight to cancel, and the run is told.
      await handle.cancel();
      // Written once the workflow task in flight (if any) completes.
      const requested = await eventually(async () => {
        const { events } = await handle.fetchHistory();
        return events?.find((e) => e.workflowExecutionCancelRequestedEventAttributes);
      });
      expect(requested).toBeDefined();
    } finally {
      await caller.connection.close();
    }
  }, 60_000);

  test('an operator terminates a booking and records a note', async () => {
    const caller = await clientAs('caller');
    const operator = await clientAs('operator');
    try {
      const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500' });
      const handle = await startBooking(caller, request, { taskQueue });
      await operator.workflow.getHandle(handle.workflowId).terminate('an operator ends the test booking');
      expect((await operator.workflow.getHandle(handle.workflowId).describe()).status.name).toBe('TERMINATED');
      const note = await recordHandled(
        operator,
        {
          item: {
            workflowId: handle.workflowId,
            runId: (await operator.workflow.getHandle(handle.workflowId).describe()).runId,
          },
          note: 'checked with the hotel',
          by: 'operator',
        },
        { taskQueue },
      );
      expect(await note.result()).toMatchObject({ note: 'checked with the hotel' });
    } finally {
      await caller.connection.close();
      await operator.connection.close();
    }
  }, 60_000);
});

describe('the deploy command on the production topology: settings and move as the operator, refused to the rest', () => {
  const deploymentName = `lp-${randomUUID().slice(0, 8)}`;
  const a = { deploymentName, buildId: 'lp-a' };
  const b = { deploymentName, buildId: 'lp-b' };
  const workers: RunningWorker[] = [];
  const lines: string[] = [];
  const operatorEnv = () => ({ ...baseEnv, BOOKING_TASK_QUEUE: deployQueue, ...temporalTlsEnv(certs, 'operator') });
  /** The deploy command's arguments on this deployment and queue (the bundle: the build's own, this checkout's). */
  const args = (...argv: string[]) =>
    parseDeployArgs([...argv, '--deployment', deploymentName, '--task-queue', deployQueue], {});
  const io = () => ({ say: (line: string) => lines.push(line), identity: operatorIdentity(operatorEnv()) });

  /** A worker of `build` on the deploy queue, as `npm run worker` builds it with the workers' certificate. */
  async function startBuild(build: { buildId: string }) {
    const entry = await startWorkerFromEnv({
      ...baseEnv,
      ...temporalTlsEnv(certs, 'worker'),
      ...sandboxWorkerEnv(sandbox.url),
      BOOKING_TASK_QUEUE: deployQueue,
      WORKER_DEPLOYMENT_NAME: deploymentName,
      WORKER_BUILD_ID: build.buildId,
    });
    workers.push(entry);
    return entry;
  }

  afterAll(async () => {
    for (const entry of workers) await entry.stop();
  }, 60_000);

  test('settings sets the QueryOrders limit at queue level and writes the sweep Schedule; no other identity may', async () => {
    const operator = await clientAs('operator');
    const fleet = {
      SUPPLIER_PROFILE: JSON.stringify({ rateLimits: { queryOrders: 3 } }),
      RECONCILIATION_EVERY_MINUTES: '9',
    };
    try {
      for (const who of ['worker', 'caller', 'receiver'] as const) {
        const other = await clientAs(who);
        try {
          await expect(settingsStep(other, args('settings'), io(), fleet)).rejects.toMatchObject({ code: 7 });
        } finally {
          await other.connection.close();
        }
      }
      const result = await settingsStep(operator, args('settings'), io(), fleet);
      expect(result.value).toMatchObject({
        queryOrdersLimits: [{ queue: queryOrdersTaskQueue(deployQueue), perSecond: 3 }],
        schedule: { scheduleId: sweepScheduleId(deployQueue), created: true },
      });
      const schedule = await operator.schedule.getHandle(sweepScheduleId(deployQueue)).describe();
      expect(schedule.state.note).toMatch(new RegExp(`^${DEPLOY_OWNED_NOTE} by .*OU=operators`));
      await operator.schedule.getHandle(sweepScheduleId(deployQueue)).delete();
    } finally {
      await operator.connection.close();
    }
  }, 60_000);

  test("move takes a booking pinned to a lost build to a live one; a worker's certificate may not", async () => {
    const operator = await clientAs('operator');
    const caller = await clientAs('caller');
    const workerClient = await clientAs('worker');
    try {
      await startBuild(a);
      await eventually(async () => {
        const polls = await lastPolls(operator, a);
        if (polls.length < 3 || polls.some((p) => p.lastPollMs === undefined)) return undefined;
        return setCurrentBuild(operator, a, { identity: io().identity }).then(() => true);
      });
      // A booking on A that stays open (its Book answered 504, its order pending): pinned to A.
      const request = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500' });
      const handle = await startBooking(caller, request, { taskQueue: deployQueue });
      await eventually(async () => ((await openPinnedRunsOn(operator, a)) === 1 ? true : undefined));
      // B comes up, then A is lost.
      await startBuild(b);
      await eventually(async () => {
        const polls = await lastPolls(operator, b);
        return polls.length >= 3 && polls.every((p) => p.lastPollMs !== undefined) ? true : undefined;
      });
      const lost = workers[0]!;
      lost.worker.worker.shutdown();
      await lost.running;

      const move = args('move', '--from', a.buildId, '--to', b.buildId, '--bundle', process.env.TEST_WORKFLOW_BUNDLE!);
      // A worker's certificate is refused the move (its gate run is a start pinned to a build) and the pin itself.
      // The SDK wraps the refused start (Failed to start Workflow) around the server's PERMISSION_DENIED.
      await expect(runDeployStep(workerClient, move, io())).rejects.toMatchObject({ cause: { code: 7 } });
      await expect(
        pinRunTo(workerClient, { workflowId: handle.workflowId, runId: (await handle.describe()).runId }, b, io()),
      ).rejects.toMatchObject({ code: 7 });

      expect(await runDeployStep(operator, move, io())).toMatchObject({ exitCode: 0, value: { moved: 1 } });
      const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
      expect(info?.versioningOverride?.pinned?.version?.buildId).toBe(b.buildId);
      // Its next workflow task is B's: a query on it is answered by B's worker (A's is gone).
      expect(await handle.query('bookingState')).toBeDefined();
      await operator.workflow.getHandle(handle.workflowId).terminate('deploy test done');
    } finally {
      await Promise.all([operator, caller, workerClient].map((c) => c.connection.close()));
    }
  }, 120_000);
});

/** A direct gRPC call to a node's internal service: 'answered' (any gRPC status from the service) or the failure. */
function internodeCall(port: number, method: string, pair: CertPair): Promise<string> {
  const credentials = grpc.credentials.createSsl(
    readFileSync(certs.ca.cert),
    readFileSync(pair.key),
    readFileSync(pair.cert),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, credentials, {
    'grpc.ssl_target_name_override': certs.serverName,
    'grpc.default_authority': certs.serverName,
  });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      method,
      (x: Buffer) => x,
      (x: Buffer) => x,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err) => {
        client.close();
        resolve(!err || err.code !== grpc.status.UNAVAILABLE ? 'answered' : `refused: ${err.details}`);
      },
    );
  });
}

/** A call to the frontend's admin service with an identity's certificate: the authorizer's decision (as `decision`). */
function adminCall(method: string, pair: CertPair): Promise<'allowed' | 'denied'> {
  const credentials = grpc.credentials.createSsl(
    readFileSync(certs.ca.cert),
    readFileSync(pair.key),
    readFileSync(pair.cert),
  );
  const client = new grpc.Client(cluster.address, credentials, {
    'grpc.ssl_target_name_override': certs.serverName,
    'grpc.default_authority': certs.serverName,
  });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/temporal.server.api.adminservice.v1.AdminService/${method}`,
      (x: Buffer) => x,
      (x: Buffer) => x,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err) => {
        client.close();
        resolve(
          err?.code === grpc.status.PERMISSION_DENIED && /^Request unauthorized/.test(err.details)
            ? 'denied'
            : 'allowed',
        );
      },
    );
  });
}

describe("operators' admin service: the reads a runbook may need, nothing that writes", () => {
  test('an operator describes the cluster and is refused ReapplyEvents (which injects any signal into a run)', async () => {
    expect(await adminCall('DescribeCluster', certs.clients.operator)).toBe('allowed');
    expect(await adminCall('ReapplyEvents', certs.clients.operator)).toBe('denied');
    expect(await adminCall('RefreshWorkflowTasks', certs.clients.operator)).toBe('denied');
    expect(await adminCall('DescribeCluster', certs.clients.caller)).toBe('denied');
  });
});

describe('internode ports take only the nodes’ certificate', () => {
  const HISTORY = '/temporal.server.api.historyservice.v1.HistoryService/DescribeHistoryHost';
  const MATCHING = '/temporal.server.api.matchingservice.v1.MatchingService/ListTaskQueuePartitions';

  test.each(['caller', 'worker', 'receiver', 'operator'] as const)(
    'a %s certificate is refused on a history and a matching port',
    async (who) => {
      const node = cluster.nodes[0]!;
      expect(await internodeCall(node.ports.history, HISTORY, certs.clients[who])).toMatch(/^refused/);
      expect(await internodeCall(node.ports.matching, MATCHING, certs.clients[who])).toMatch(/^refused/);
    },
  );

  test('the nodes’ certificate is answered there (the control)', async () => {
    const node = cluster.nodes[0]!;
    expect(await internodeCall(node.ports.history, HISTORY, certs.server)).toBe('answered');
    expect(await internodeCall(node.ports.matching, MATCHING, certs.server)).toBe('answered');
  });
});

describe('audit log', () => {
  test('every write and every refusal is a JSON line with subject, API, namespace and workflow id', () => {
    const lines = cluster.nodes
      .filter((n) => existsSync(n.auditLog))
      .flatMap((n) => readFileSync(n.auditLog, 'utf8').trim().split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'allow',
        identity: 'caller',
        subject: expect.stringContaining('CN=partner:stack'),
        api: 'StartWorkflowExecution',
        namespace: cluster.namespace,
        workflowId: expect.stringMatching(/^booking:/),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'deny',
        identity: 'caller',
        api: 'TerminateWorkflowExecution',
        workflowId: expect.stringMatching(/^booking:/),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ decision: 'allow', identity: 'operator', api: 'TerminateWorkflowExecution' }),
    );
    // The stack's own setup is an operator with a CN of its own, not a person's.
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'allow',
        identity: 'operator',
        subject: expect.stringContaining('CN=operator:stack-setup'),
      }),
    );
    // A task's answer names its workflow only in the task token: read from there.
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'allow',
        identity: 'worker',
        api: 'RespondWorkflowTaskCompleted',
        workflowId: expect.stringMatching(/^booking:/),
      }),
    );
    // Reads are not written.
    expect(lines.filter((l) => l.api === 'DescribeWorkflowExecution' && l.decision === 'allow')).toEqual([]);
    // A start's policies, a signal's or an update's name.
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'allow',
        identity: 'caller',
        api: 'ExecuteMultiOperation',
        workflowId: expect.stringMatching(/^order:/),
        update: 'cancelBooking',
        conflictPolicy: 'UseExisting',
        reusePolicy: 'AllowDuplicate',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'allow',
        identity: 'receiver',
        api: 'SignalWithStartWorkflowExecution',
        signal: 'checkOrder',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        decision: 'deny',
        identity: 'caller',
        api: 'StartWorkflowExecution',
        conflictPolicy: 'TerminateExisting',
        reason: expect.stringContaining('TERMINATE_EXISTING'),
      }),
    );
  });

  test('a refusal repeated by one certificate is counted, not written each time', () => {
    // The caller's probes make four starts refused for one reason (a type or id that is not its own) within seconds.
    const sameKind = cluster.nodes
      .filter((n) => existsSync(n.auditLog))
      .flatMap((n) => readFileSync(n.auditLog, 'utf8').trim().split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter(
        (l) =>
          l.identity === 'caller' &&
          l.api === 'StartWorkflowExecution' &&
          String(l.reason).startsWith('this identity starts bookingWorkflow') &&
          l.repeated === undefined,
      );
    expect(sameKind.length).toBeGreaterThan(0);
    expect(sameKind.length).toBeLessThan(4);
  });
});

describe("the CA's key and a partner's certificate", () => {
  test('the CA key is in its own folder, readable by its owner only, and not beside the certificates', () => {
    expect(path.dirname(certs.ca.key)).toBe(certs.caDir);
    expect(certs.caDir).not.toBe(certs.dir);
    expect(statSync(certs.caDir).mode & 0o777).toBe(0o700);
    expect(statSync(certs.ca.key).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(certs.dir, 'ca.key'))).toBe(false);
  });

  test('a partner asking for OU=operators gets a booking caller: it books, it cannot terminate', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'partner-'));
    try {
      const key = path.join(dir, 'partner.key');
      const csr = path.join(dir, 'partner.csr');
      newKeyAndRequest({ key, csr, subject: '/O=Partner Ltd/OU=operators/OU=workers/CN=admin' });
      const out = path.join(dir, 'partner.pem');
      const { subject } = issuePartnerCertificate({ caDir: certs.caDir, partner: 'acme', csr, out });
      expect(subject).toBe('O=Hotel booking orchestrator, OU=booking-callers, CN=partner:acme');
      const shown = spawnSync('openssl', ['x509', '-in', out, '-noout', '-subject'], { encoding: 'utf8' }).stdout;
      expect(shown).toContain('OU = booking-callers, CN = partner:acme');
      expect(shown).not.toMatch(/operators|workers|admin/);
      const partner = await connectAs({ cert: out, key });
      expect(await decision(PROBES['start bookingWorkflow (booking:<ref>)']!.bind(null, partner))).toBe('allowed');
      expect(await decision(PROBES.terminate!.bind(null, partner))).toBe('denied');
      expect(await decision(PROBES['poll workflow tasks']!.bind(null, partner))).toBe('denied');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a partner name outside the scheme is refused', () => {
    expect(() =>
      issuePartnerCertificate({ caDir: certs.caDir, partner: 'x/OU=operators', csr: 'none', out: 'none' }),
    ).toThrow(/partner name/);
  });
});

/** Every audit line the nodes have written so far. */
function auditLines(): Array<Record<string, unknown>> {
  return cluster.nodes
    .filter((n) => existsSync(n.auditLog))
    .flatMap((n) => readFileSync(n.auditLog, 'utf8').trim().split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A certificate from the stack's CA with any subject (what an older CA issued, or a mistake), made with openssl. */
function issuedWithSubject(dir: string, name: string, subject: string): CertPair {
  const pair = { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  const run = (args: string[]) => expect(spawnSync('openssl', args, { encoding: 'utf8' }).status).toBe(0);
  writeFileSync(ext, '[ext]\nextendedKeyUsage = clientAuth\n');
  const caDir = certs.caDir;
  newKeyAndRequest({ key: pair.key, csr, subject });
  run([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    `${caDir}/ca.pem`,
    '-CAkey',
    `${caDir}/ca.key`,
    '-days',
    '2',
    '-out',
    pair.cert,
    '-extfile',
    ext,
    '-extensions',
    'ext',
  ]);
  return pair;
}

describe("workers and callback receivers act in their certificate's namespace only", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bound-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const decisionsFor = async (pair: CertPair, probes: string[]) => {
    const c = await connectAs(pair);
    const out: Record<string, 'allowed' | 'denied'> = {};
    for (const name of probes) out[name] = await decision(() => PROBES[name]!(c));
    return out;
  };
  const all = (probes: string[], what: 'allowed' | 'denied') => Object.fromEntries(probes.map((p) => [p, what]));

  // A worker's whole job, each made here in `default` (the cluster's namespace): each is its own certificate's
  // (the matrix above), none is another namespace's worker's.
  const WORKER_JOB = [
    'poll workflow tasks',
    'poll activity tasks (QueryOrders)',
    'complete an activity task',
    'start orderWorkflow (plain start)',
    'autoCancel by signal-with-start on orderWorkflow',
    "create the worker's sweep schedule",
    ...READS,
  ];
  const RECEIVER_JOB = [
    'supplierOrderUpdate signal to a booking',
    'order check: checkOrder by signal-with-start',
    ...READS,
  ];

  test('a worker certificate for partner-acme (CN=worker:partner-acme) is refused in default: no poll, start, signal or read', async () => {
    const acmeWorker = issueClientCertificate({ who: 'worker', name: 'partner-acme', caDir: certs.caDir, out: dir });
    expect(acmeWorker.subject).toBe('O=Hotel booking orchestrator, OU=workers, CN=worker:partner-acme');
    expect(await decisionsFor(acmeWorker.pair, WORKER_JOB)).toEqual(all(WORKER_JOB, 'denied'));
    // The stack's own worker certificate (CN=worker:default) does that job here: the control.
    expect(await decisionsFor(certs.clients.worker, WORKER_JOB)).toEqual(all(WORKER_JOB, 'allowed'));
    const refusal = auditLines().find(
      (l) => String(l.subject).includes('CN=worker:partner-acme') && l.api === 'PollWorkflowTaskQueue',
    );
    expect(refusal).toMatchObject({
      decision: 'deny',
      namespace: cluster.namespace,
      reason: expect.stringContaining('worker:partner-acme may not act in namespace'),
    });
  }, 60_000);

  test('a receiver certificate for partner-acme cannot signal, start a check or read in default', async () => {
    const acmeReceiver = issueClientCertificate({
      who: 'receiver',
      name: 'partner-acme',
      caDir: certs.caDir,
      out: dir,
    });
    expect(acmeReceiver.subject).toBe('O=Hotel booking orchestrator, OU=callback-receivers, CN=receiver:partner-acme');
    expect(await decisionsFor(acmeReceiver.pair, RECEIVER_JOB)).toEqual(all(RECEIVER_JOB, 'denied'));
    expect(await decisionsFor(certs.clients.receiver, RECEIVER_JOB)).toEqual(all(RECEIVER_JOB, 'allowed'));
  }, 60_000);

  test('a worker or receiver certificate naming no namespace (CN=booking-worker, as issued before) is refused everything', async () => {
    const oldWorker = issuedWithSubject(
      dir,
      'old-worker',
      '/O=Hotel booking orchestrator/OU=workers/CN=booking-worker',
    );
    const oldReceiver = issuedWithSubject(
      dir,
      'old-receiver',
      '/O=Hotel booking orchestrator/OU=callback-receivers/CN=callback-receiver',
    );
    expect(await decisionsFor(oldWorker, WORKER_JOB)).toEqual(all(WORKER_JOB, 'denied'));
    expect(await decisionsFor(oldReceiver, RECEIVER_JOB)).toEqual(all(RECEIVER_JOB, 'denied'));
    const refusal = auditLines().find((l) => String(l.subject).includes('CN=booking-worker'));
    expect(refusal).toMatchObject({ decision: 'deny', reason: expect.stringContaining('names no namespace') });
  }, 60_000);
});

describe('an operator certificate per person: certs.ts issue-operator', () => {
  test("`issue-operator alice` prints a certificate that works as an operator; the audit log and the CLI's record name operator:alice", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'operator-'));
    const printed: string[] = [];
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((line) => {
      printed.push(String(line));
      return true;
    });
    let code: number;
    try {
      code = certsMain(['issue-operator', 'alice', '--ca-dir', certs.caDir, '--out', dir]);
    } finally {
      out.mockRestore();
    }
    try {
      expect(code).toBe(0);
      // The TEMPORAL_TLS_* lines it prints, as a person's shell would export them.
      const exported: Record<string, string> = {};
      for (const line of printed.join('').split('\n')) {
        const m = /^export (TEMPORAL_TLS_[A-Z_]+)=(.*)$/.exec(line);
        if (m) exported[m[1]!] = m[2]!;
      }
      expect(Object.keys(exported).sort()).toEqual([
        'TEMPORAL_TLS_CLIENT_CERT_PATH',
        'TEMPORAL_TLS_CLIENT_KEY_PATH',
        'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
        'TEMPORAL_TLS_SERVER_NAME',
      ]);
      const env = { ...baseEnv, ...exported };
      // What `npm run book -- cancel` records as requestedBy (and a price answer as approvedBy).
      expect(operatorIdentity(env)).toContain('CN=operator:alice');
      expect(operatorIdentity(env)).toContain('OU=operators');

      // An operator's own call: terminating a booking (a caller's certificate may not).
      const caller = await connectAs('caller');
      const workflowId = id('booking:');
      await caller.workflowService.startWorkflowExecution(start('bookingWorkflow', workflowId));
      const alice = await connectClient(env);
      try {
        await alice.workflow.getHandle(workflowId).terminate('alice ends a probe booking');
        expect((await alice.workflow.getHandle(workflowId).describe()).status.name).toBe('TERMINATED');
      } finally {
        await alice.connection.close();
      }
      expect(auditLines()).toContainEqual(
        expect.objectContaining({
          decision: 'allow',
          identity: 'operator',
          api: 'TerminateWorkflowExecution',
          workflowId,
          subject: expect.stringContaining('CN=operator:alice'),
        }),
      );
      // The stack's own processes' names are not a person's.
      expect(() => issueClientCertificate({ who: 'operator', name: 'console', caDir: certs.caDir, out: dir })).toThrow(
        /stack's own/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
