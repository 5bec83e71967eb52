/**
 * Partners apart on the production topology as `npm run stack:prod` runs it: the stack's own partner books in
 * `default`, partner acme in `partner-acme` (dev/prod/partners.ts), each namespace served by its own worker with its
 * own payload key, and the authorizer (TEMPORAL_PARTNER_NAMESPACES) lets a partner's certificate act in its
 * namespace only: acme cannot list, describe, read or cancel the stack's bookings, nor the stack acme's.
 *
 * A refusal is the authorizer's PERMISSION_DENIED ("Request unauthorized."); any other answer means the handler ran.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  awaitOutcome,
  BookingStageKey,
  cancelBooking,
  connectClient,
  CustomerReferenceNoKey,
  startBooking,
} from '../../src/api/client/index';
import { ApplicationFailure } from '@temporalio/common';
import { newEncryptionKey } from '../../src/api/codec/encryption';
import { ensureTemporalReady } from '../../src/runtime/namespace/setup';
import { sandboxWorkerEnv, startWorkerFromEnv, type RunningWorker } from '../harness/prod-worker';
import { ensureCertificates, temporalTlsEnv, type CertPair, type StackCertificates } from '../../dev/prod/certs';
import { startProdCluster, waitForSearchAttributes, type ProdCluster } from '../../dev/prod/cluster';
import { ensurePartner, partnerNamespace, type StackPartner } from '../../dev/prod/partners';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';
import { bookingRequest } from '../harness/booking';
import { ClusterConnections } from '../harness/prod-connections';

let dataDir: string;
let certs: StackCertificates;
let cluster: ProdCluster;
let sandbox: Sandbox;
let acme: StackPartner;
/** Issued from the same CA but given no namespace. */
let globex: StackPartner;
const stackKeys = `stack-test:${newEncryptionKey()}`;
const taskQueue = `partners-${randomUUID().slice(0, 8)}`;
const workers: RunningWorker[] = [];
const connections = new ClusterConnections(() => ({ address: cluster.address, certs }));
const clients: Client[] = [];
/** A booking of each partner, in its own namespace, confirmed. */
const booked: Record<'stack' | 'acme', string> = { stack: '', acme: '' };

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'booking-prod-partners-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the folder (mkdtemp makes it 0700).
  chmodSync(dataDir, 0o755);
  // A worker certificate for each namespace (CN=worker:default, CN=worker:partner-acme): a worker acts in its own only.
  certs = ensureCertificates(path.join(dataDir, 'certs'), {
    caDir: path.join(dataDir, 'ca'),
    extraNamespaces: [partnerNamespace('acme')],
  });
  const partnersDir = path.join(dataDir, 'partners');
  acme = ensurePartner({ partner: 'acme', dir: partnersDir, caDir: certs.caDir });
  globex = ensurePartner({ partner: 'globex', dir: partnersDir, caDir: certs.caDir });
  cluster = await startProdCluster({
    dataDir,
    frontendPort: 0,
    basePort: 0,
    postgresPort: 0,
    tls: certs,
    partnerNamespaces: { stack: ['default'], acme: [acme.namespace] },
    extraNamespaces: [acme.namespace],
    log() {},
  });
  const setup = await connections.connectAs('operator');
  for (const namespace of [cluster.namespace, acme.namespace]) {
    await ensureTemporalReady({ services: setup, namespace, register: true });
    await waitForSearchAttributes({ ...cluster, namespace }, [CustomerReferenceNoKey.name, BookingStageKey.name]);
  }
  sandbox = await startSandbox({ port: 0 });
  // One worker per namespace (a worker polls one), each with its namespace's worker certificate and key.
  for (const [namespace, keys] of [
    [cluster.namespace, stackKeys],
    [acme.namespace, acme.payloadKeys],
  ] as const) {
    workers.push(
      await startWorkerFromEnv({
        ...env(namespace, keys),
        ...temporalTlsEnv(certs, certs.namespaces[namespace]!.worker),
        ...sandboxWorkerEnv(sandbox.url),
      }),
    );
  }
}, 240_000);

afterAll(async () => {
  for (const c of clients) await c.connection.close().catch(() => undefined);
  await connections.closeAll();
  await Promise.all(workers.map((w) => w.stop()));
  await sandbox?.close();
  await cluster?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 90_000);

function env(namespace: string, keys: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: namespace,
    BOOKING_TASK_QUEUE: taskQueue,
    PAYLOAD_ENCRYPTION_KEYS: keys,
  };
}

/** A partner's client as its service runs it: its namespace, its certificate, its payload key. */
async function partnerClient(namespace: string, keys: string, pair: CertPair): Promise<Client> {
  const client = await connectClient({
    ...env(namespace, keys),
    TEMPORAL_TLS_CLIENT_CERT_PATH: pair.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pair.key,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  });
  clients.push(client);
  return client;
}

async function decision(call: () => Promise<unknown>): Promise<'allowed' | 'denied'> {
  return call().then(
    () => 'allowed',
    (err: { code?: number; details?: string }) =>
      err?.code === 7 && /^Request unauthorized/.test(err.details ?? '') ? 'denied' : 'allowed',
  );
}

/** What a partner's certificate tries on a namespace, against a booking there (`workflowId`). */
function probes(c: Connection, namespace: string, workflowId: string): Record<string, () => Promise<unknown>> {
  const execution = { workflowId };
  const orderId = `order:${randomUUID()}`;
  return {
    'list bookings': () => c.workflowService.listWorkflowExecutions({ namespace, query: '' }),
    'count bookings': () => c.workflowService.countWorkflowExecutions({ namespace, query: '' }),
    'describe a booking': () => c.workflowService.describeWorkflowExecution({ namespace, execution }),
    "read a booking's history": () => c.workflowService.getWorkflowExecutionHistory({ namespace, execution }),
    'query a booking': () =>
      c.workflowService.queryWorkflow({ namespace, execution, query: { queryType: '__stack_trace' } }),
    'describe the namespace': () => c.workflowService.describeNamespace({ namespace }),
    'list search attributes': () => c.operatorService.listSearchAttributes({ namespace }),
    'start a booking': () =>
      c.workflowService.startWorkflowExecution({
        namespace,
        workflowId: `booking:${randomUUID()}`,
        workflowType: { name: 'bookingWorkflow' },
        taskQueue: { name: `probe-${taskQueue}` },
        requestId: randomUUID(),
      }),
    'cancel a booking (cancelBooking by Update-With-Start)': () =>
      c.workflowService.executeMultiOperation({
        namespace,
        operations: [
          {
            startWorkflow: {
              namespace,
              workflowId: orderId,
              workflowType: { name: 'orderWorkflow' },
              taskQueue: { name: `probe-${taskQueue}` },
              requestId: randomUUID(),
              workflowIdConflictPolicy: 2, // USE_EXISTING, as the client helper sends it
            },
          },
          {
            updateWorkflow: {
              namespace,
              workflowExecution: { workflowId: orderId },
              waitPolicy: { lifecycleStage: 1 },
              request: { meta: { updateId: randomUUID() }, input: { name: 'cancelBooking' } },
            },
          },
        ],
      }),
  };
}

async function decisions(calls: Record<string, () => Promise<unknown>>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, call] of Object.entries(calls)) out[name] = await decision(call);
  return out;
}

const every = (calls: Record<string, unknown>, value: string) =>
  Object.fromEntries(Object.keys(calls).map((k) => [k, value]));

describe('each partner books in its own namespace', () => {
  test.each([
    ['stack', 'default'],
    ['acme', 'partner-acme'],
  ] as const)(
    '%s books in %s, confirmed against the sandbox',
    async (who, namespace) => {
      const client =
        who === 'acme'
          ? await partnerClient(acme.namespace, acme.payloadKeys, acme.pair)
          : await partnerClient(cluster.namespace, stackKeys, certs.clients.caller);
      expect(client.options.namespace).toBe(namespace);
      const request = bookingRequest({ test: 'confirmAfterMs=0' });
      const handle = await startBooking(client, request, { taskQueue });
      expect((await awaitOutcome(client, request.customerReferenceNo)).kind).toBe('confirmed');
      expect(sandbox.orders().filter((o) => o.customerReferenceNo === request.customerReferenceNo)).toHaveLength(1);
      booked[who] = handle.workflowId;
    },
    90_000,
  );
});

describe("a partner's certificate acts in its own namespace only", () => {
  test("acme cannot list, describe, read, query or cancel the stack's bookings in default", async () => {
    expect(booked.stack).toMatch(/^booking:/);
    const calls = probes(await connections.connectAs(acme.pair), cluster.namespace, booked.stack);
    expect(await decisions(calls)).toEqual(every(calls, 'denied'));
  });

  test("the stack's partner cannot list, describe, read, query or cancel acme's bookings", async () => {
    expect(booked.acme).toMatch(/^booking:/);
    const calls = probes(await connections.connectAs(certs.clients.caller), acme.namespace, booked.acme);
    expect(await decisions(calls)).toEqual(every(calls, 'denied'));
  });

  test('in its own namespace each may (the control)', async () => {
    for (const [pair, namespace, workflowId] of [
      [acme.pair, acme.namespace, booked.acme],
      [certs.clients.caller, cluster.namespace, booked.stack],
    ] as const) {
      const calls = probes(await connections.connectAs(pair), namespace, workflowId);
      expect(await decisions(calls)).toEqual(every(calls, 'allowed'));
    }
  });

  test('a partner certificate given no namespace may act nowhere', async () => {
    const c = await connections.connectAs(globex.pair);
    for (const namespace of [cluster.namespace, acme.namespace]) {
      const calls = probes(c, namespace, booked.stack);
      expect(await decisions(calls)).toEqual(every(calls, 'denied'));
    }
  });

  test('a worker serves its own namespace only, operators both', async () => {
    const describe = (c: Connection, namespace: string, workflowId: string) =>
      decision(() => c.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId } }));
    const stackWorker = await connections.connectAs(certs.namespaces[cluster.namespace]!.worker);
    const acmeWorker = await connections.connectAs(certs.namespaces[acme.namespace]!.worker);
    expect(await describe(stackWorker, cluster.namespace, booked.stack)).toBe('allowed');
    expect(await describe(stackWorker, acme.namespace, booked.acme)).toBe('denied');
    expect(await describe(acmeWorker, acme.namespace, booked.acme)).toBe('allowed');
    expect(await describe(acmeWorker, cluster.namespace, booked.stack)).toBe('denied');
    const operator = await connections.connectAs('operator');
    expect(await describe(operator, cluster.namespace, booked.stack)).toBe('allowed');
    expect(await describe(operator, acme.namespace, booked.acme)).toBe('allowed');
  });
});

describe("each namespace's payloads are encrypted with its own key", () => {
  /** The key id of every payload in a booking's raw history (read as an operator, no codec). */
  async function keyIdsOf(namespace: string, workflowId: string): Promise<Set<string>> {
    const c = await connections.connectAs('operator');
    const { history } = await c.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId },
    });
    const ids = new Set<string>();
    const visit = (value: unknown): void => {
      if (!value || typeof value !== 'object') return;
      const metadata = (value as { metadata?: Record<string, Uint8Array> }).metadata;
      if (metadata?.encoding && Buffer.from(metadata.encoding).toString() === 'binary/encrypted') {
        ids.add(Buffer.from(metadata['encryption-key-id'] ?? []).toString());
        return;
      }
      for (const v of Object.values(value)) visit(v);
    };
    // The booking's input (guests' names) is among them.
    const input = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
    visit(history?.events);
    return ids;
  }

  test('the stack key in default, acme’s own key in partner-acme', async () => {
    const stackKeyId = stackKeys.split(':')[0]!;
    const acmeKeyId = acme.payloadKeys.split(':')[0]!;
    expect(acmeKeyId).not.toBe(stackKeyId);
    expect(await keyIdsOf(cluster.namespace, booked.stack)).toEqual(new Set([stackKeyId]));
    expect(await keyIdsOf(acme.namespace, booked.acme)).toEqual(new Set([acmeKeyId]));
  });
});

describe("a partner reaches no other partner's order on the shared supplier account", () => {
  test("acme's quote and confirm for the stack's reference, in its own namespace, are refused OrderNotFound: nothing read, nothing cancelled", async () => {
    // Before: acme's order run took the reference at its word, quoted the stack's order (hotel, dates, price) and
    // cancelled it with a confirm, on the supplier account both share.
    const ref = booked.stack.replace(/^booking:/, '');
    expect(ref).not.toBe('');
    const client = await partnerClient(acme.namespace, acme.payloadKeys, acme.pair);
    const reads = () => sandbox.calls('queryOrders').filter((c) => c.customerReferenceNos?.includes(ref)).length;
    const readsBefore = reads();
    for (const request of [{ confirm: false }, { confirm: true, acceptedFee: { amount: 0, currency: 'USD' } }]) {
      const error = await cancelBooking(client, ref, request, { taskQueue }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (error as WorkflowUpdateFailedError).cause;
      expect(cause instanceof ApplicationFailure ? cause.type : cause?.name).toBe('OrderNotFound');
    }
    expect(reads()).toBe(readsBefore);
    expect(sandbox.calls('cancel').filter((c) => c.customerReferenceNos?.includes(ref))).toHaveLength(0);
    expect(sandbox.orders().find((o) => o.customerReferenceNo === ref)?.status).toBe(2);
  }, 60_000);
});
