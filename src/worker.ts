/**
 * The booking worker: polls the task queue, runs bookingWorkflow and the supplier activities, and
 * polls the companion QueryOrders queue (see `queryOrdersTaskQueue`), where Temporal's task-queue
 * activity rate limit caps the recovery polls of the whole fleet at the supplier's QueryOrders limit.
 *
 * `npm run worker` runs it against an existing Temporal service, configured by environment
 * (src/runtime/config) through `createWorkerFromConfig`, the one wiring `npm start` and the benchmarks use too;
 * `createBookingWorker` is the pair itself, for tests that bring their own supplier.
 */
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import type { DataConverter } from '@temporalio/common';
import { routeToAccounts, supplierActivities } from './activities/accounts';
import { accountCallbackUrl } from './runtime/config/accounts';
import { createGateActivities } from './activities/gate';
import { Client } from '@temporalio/client';
import { connectWorkerConnection } from './runtime/namespace/connect';
import { keepSchedules } from './runtime/namespace/keep-schedules';
import { queryOrdersTaskQueue, supplierTaskQueue, WORKFLOW_TYPE } from './api/contract/definitions';
import { dataConverterFor } from './api/codec/config';
import { loadConfig, type AppConfig } from './runtime/config/index';
import type { SupplierClient } from './runtime/supplier/interface';
import type { SupplierProfile } from './runtime/config/supplier-profile';
import type { QueryOrdersCoalescer } from './runtime/supplier/coalescer';
import { createSupplierStacks } from './runtime/supplier/stacks';
import { createDriftReporter, type DriftLog } from './runtime/supplier/drift';
import { reportReadiness } from './runtime/namespace/setup';
import { BookingMeters, countedDrift, createSupplierObserver, setUpObservability } from './runtime/observability/index';
import { bundleTracingMismatch } from './runtime/observability/tracing';
import { workflowBundlerOptions } from './workflow-bundle';
import type { WorkerBuild } from './runtime/config/build';

export interface BookingWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  supplier: SupplierClient;
  profile: SupplierProfile;
  /** A prebuilt bundle (tests, benchmarks); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  tuning?: Pick<
    WorkerOptions,
    'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
  >;
  /** Shares QueryOrders requests between concurrent lookups; without it each lookup is its own request. */
  orders?: QueryOrdersCoalescer;
  /** Payload encryption (src/servers/codec); clients of these workflows must use the same keys. */
  dataConverter?: DataConverter;
  /** How long a shutdown waits for in-flight activities; default shutdownGraceMs(profile). */
  shutdownGraceMs?: number;
  /** SDK plugins for both workers: tracing (src/runtime/observability/tracing.ts) when on. */
  plugins?: WorkerOptions['plugins'];
  /** Sent with every Book for order-status callbacks (SUPPLIER_CALLBACK_URL). */
  callbackUrl?: string;
  /** Accept bookings with `recovery.testing` (RECOVERY_TESTING): sandbox, tests, chaos and benchmarks only. */
  recoveryTesting?: boolean;
  /** The process's booking meters, for what activities count (the order-conflict counter). */
  meters?: BookingMeters;
  /** The build this worker is in its Worker Deployment (WORKER_DEPLOYMENT_NAME); absent: unversioned. */
  deployment?: WorkerBuild;
  /**
   * Several supplier accounts (SUPPLIER_ACCOUNTS_FILE): each gets its own queues (Book and Cancel on
   * supplierTaskQueue, QueryOrders on its companion at the account's own limit) and its own stack; `supplier` and
   * `profile` above still serve bookings that name no account and began before accounts.
   */
  accounts?: ReadonlyArray<AccountStack>;
}

/** One supplier account as a worker serves it: its stack, built from its entry in the accounts file. */
export interface AccountStack {
  id: string;
  partners: string[];
  supplier: SupplierClient;
  profile: SupplierProfile;
  orders?: QueryOrdersCoalescer;
}

/**
 * Both workers of a pair poll as one build: the QueryOrders queue is in the build's task queues, so a pinned
 * booking's polls go to a worker of its own build. Every workflow type names its behaviour beside its code
 * (all PINNED, each with its reason); the default is the one the SDK requires and applies to none of ours.
 */
export function workerDeploymentOptions(
  build: WorkerBuild | undefined,
): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!build) return {};
  return {
    workerDeploymentOptions: {
      version: { deploymentName: build.deploymentName, buildId: build.buildId },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  };
}

/**
 * How long a shutdown (SIGTERM, a deploy) waits for in-flight activities before cancelling them: the
 * Book timeout and 10 s. A Book cancelled half-way is an order that may exist, found out only by recovery;
 * one allowed to finish gives its answer. The SDK's default is no wait at all.
 */
export function shutdownGraceMs(profile: SupplierProfile): number {
  return profile.timeoutsMs.book + 10_000;
}

/**
 * What a supervisor's stop period (compose's `stop_grace_period`, a pod's termination grace) must leave beyond
 * the shutdown grace: after its activities end, the worker still closes the supplier's pools and its connection
 * and flushes telemetry. A stop period equal to the grace would SIGKILL a Book in its last seconds.
 */
export const STOP_PERIOD_MARGIN_MS = 15_000;

export async function createBookingWorker(deps: BookingWorkerDeps): Promise<BookingWorker> {
  const client = new Client({
    connection: deps.connection,
    namespace: deps.namespace,
    ...(deps.dataConverter ? { dataConverter: deps.dataConverter } : {}),
  });
  const shared = {
    client,
    temporal: { services: deps.connection, namespace: deps.namespace },
    ...(deps.callbackUrl ? { callbackUrl: deps.callbackUrl } : {}),
    ...(deps.recoveryTesting ? { recoveryTesting: true } : {}),
    ...(deps.meters ? { meters: deps.meters } : {}),
    ...(deps.accounts ? { accounts: deps.accounts.map(({ id, partners }) => ({ id, partners })) } : {}),
  };
  const mine = supplierActivities(deps, shared);
  const own = mine.booking;
  // Each account's Books carry its own callback path, where the receiver checks that account's secret.
  const accounts = (deps.accounts ?? []).map((account) => ({
    account,
    ...supplierActivities(account, {
      ...shared,
      ...(deps.callbackUrl ? { callbackUrl: accountCallbackUrl(deps.callbackUrl, account.id) } : {}),
    }),
  }));
  const activities = {
    ...own,
    // With accounts, a booking's first step chooses its account and checks it there (./activities/accounts.ts).
    ...(accounts.length > 0
      ? routeToAccounts(
          accounts.map(({ account, booking }) => ({ id: account.id, partners: account.partners, activities: booking })),
          own,
        )
      : {}),
    // Cancel, and the start of an order workflow (a booking's, the sweep's) through the worker's own connection.
    ...mine.order,
    // The reconciliation sweep's: its supplier listing on the QueryOrders queue, its look-ups here.
    ...mine.reconciliation,
    // The deploy gate's harmless probe (src/workflows/gate): calls nothing outside the worker.
    ...createGateActivities(),
  };
  const common = {
    connection: deps.connection,
    namespace: deps.namespace,
    shutdownGraceTime: deps.shutdownGraceMs ?? shutdownGraceMs(deps.profile),
    ...(deps.dataConverter ? { dataConverter: deps.dataConverter } : {}),
    ...(deps.plugins ? { plugins: deps.plugins } : {}),
    ...workerDeploymentOptions(deps.deployment),
  };
  const main = await Worker.create({
    ...common,
    taskQueue: deps.taskQueue,
    activities,
    ...(deps.workflowBundle
      ? { workflowBundle: deps.workflowBundle }
      : // Bundled here with the options every bundle gets (./workflow-bundle: the stateless modules preloaded).
        { workflowsPath: require.resolve('./workflows'), bundlerOptions: workflowBundlerOptions() }),
    ...deps.tuning,
  });
  const queryOrders = await createOrRelease([main], () =>
    Worker.create({
      ...common,
      taskQueue: queryOrdersTaskQueue(deps.taskQueue),
      activities: { queryOrder: activities.queryOrder, listOrdersBooked: activities.listOrdersBooked },
      // The server hands out at most this many QueryOrders tasks per second on this queue, whatever
      // the number of workers polling it. Each task sends at most one HTTP request (the coalescer only
      // merges), so the fleet stays under the supplier's limit for its one application key. Every
      // worker sets the same value; the server keeps the latest one it was given.
      maxTaskQueueActivitiesPerSecond: deps.profile.rateLimits.queryOrders,
      ...(deps.tuning?.maxConcurrentActivityTaskExecutions !== undefined
        ? { maxConcurrentActivityTaskExecutions: deps.tuning.maxConcurrentActivityTaskExecutions }
        : {}),
    }),
  );
  // Each account's calls on queues of its own, so one that is slow, refusing or down holds only its own slots.
  const accountWorkers: Worker[] = [];
  for (const { account, booking, order, reconciliation } of accounts) {
    const calls = supplierTaskQueue(deps.taskQueue, account.id);
    for (const options of [
      { taskQueue: calls, activities: { book: booking.book, sendCancel: order.sendCancel } },
      {
        taskQueue: queryOrdersTaskQueue(calls),
        // The account's own sweep lists it with its own credential, on its own QueryOrders queue.
        activities: { queryOrder: booking.queryOrder, listOrdersBooked: reconciliation.listOrdersBooked },
        // The account's own QueryOrders limit, for every worker that serves it (one application key).
        maxTaskQueueActivitiesPerSecond: account.profile.rateLimits.queryOrders,
      },
    ]) {
      accountWorkers.push(
        await createOrRelease([main, queryOrders, ...accountWorkers], () =>
          Worker.create({
            ...common,
            ...options,
            ...(deps.tuning?.maxConcurrentActivityTaskExecutions !== undefined
              ? { maxConcurrentActivityTaskExecutions: deps.tuning.maxConcurrentActivityTaskExecutions }
              : {}),
          }),
        ),
      );
    }
  }
  return new BookingWorker(main, queryOrders, accountWorkers);
}

/**
 * Creates one more worker of a booking worker; if that fails, releases those created before, which never
 * ran. The SDK has no close for such a worker: it holds its connection (which then cannot close) until
 * it has run, so it is run and shut down at once.
 */
async function createOrRelease(created: Worker[], create: () => Promise<Worker>): Promise<Worker> {
  try {
    return await create();
  } catch (err) {
    await Promise.all(created.map((w) => w.runUntil(Promise.resolve()).catch(() => undefined)));
    throw err;
  }
}

/**
 * The two workers of a booking worker process, run and stopped together: a booking worker that
 * stopped polling its QueryOrders queue would leave its bookings' recovery without polls.
 */
export class BookingWorker {
  constructor(
    /** Workflows and every activity, on the booking task queue. */
    readonly main: Worker,
    /** QueryOrders alone, on the booking queue's rate-limited companion. */
    readonly queryOrders: Worker,
    /** Each supplier account's two: its Book and Cancel queue, its QueryOrders queue. */
    readonly accounts: readonly Worker[] = [],
  ) {}

  /** Runs both until shutdown (SIGINT/SIGTERM or `shutdown()`); if one stops or fails, stops the other. */
  async run(): Promise<void> {
    const runs = [this.main, this.queryOrders, ...this.accounts].map((w) => w.run());
    try {
      await Promise.race(runs);
    } finally {
      this.shutdown();
      await Promise.allSettled(runs);
    }
    await Promise.all(runs);
  }

  /** Runs until `until` settles, then shuts down, as `Worker.runUntil` does. */
  async runUntil<R>(until: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    try {
      return await (typeof until === 'function' ? until() : until);
    } finally {
      this.shutdown();
      await running;
    }
  }

  shutdown(): void {
    for (const worker of [this.main, this.queryOrders, ...this.accounts]) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  }

  /** The booking queue worker's state (the pair stops together). */
  getState(): ReturnType<Worker['getState']> {
    return this.main.getState();
  }

  getStatus(): ReturnType<Worker['getStatus']> {
    return this.main.getStatus();
  }
}

/** A line for the person starting the worker: plain on a terminal, a JSON log line with LOG_FORMAT=json. */
export function say(config: AppConfig, line: string): void {
  if (config.observability?.logFormat === 'json') Runtime.instance().logger.info(line);
  else console.log(line);
}

const runtimeWarn = (line: string) => Runtime.instance().logger.warn(line);

/** Schema drift goes to the worker's log as a WARN, beside the SDK's own lines. */
export const runtimeDriftLog: DriftLog = (message, meta) => Runtime.instance().logger.warn(message, meta);

/** A booking worker built from the configuration, and what closes the supplier stack it uses. */
export interface ConfiguredWorker {
  worker: BookingWorker;
  /** Stops waiting lookups and closes the supplier's connection pools; call after the worker stopped. */
  closeSupplier(): Promise<void>;
}

/**
 * The one wiring of configuration to a worker, for `npm run worker`, `npm start` and the benchmarks: the
 * namespace checked (and prepared when allowed) before anything polls, the supplier stack (rate-limited
 * client, QueryOrders coalescer, drift reported to the worker log), tuning, bundle and encryption.
 * `overrides` are for callers that run several workers of one configuration (benchmarks).
 */
export async function createWorkerFromConfig(
  connection: NativeConnection,
  config: AppConfig,
  overrides: Partial<Pick<BookingWorkerDeps, 'taskQueue' | 'namespace' | 'workflowBundle' | 'tuning' | 'plugins'>> = {},
): Promise<ConfiguredWorker> {
  if (config.workflowBundlePath) {
    const mismatch = bundleTracingMismatch(
      readFileSync(config.workflowBundlePath, 'utf8'),
      Boolean(config.observability?.tracing),
    );
    if (mismatch) throw new Error(mismatch);
  }
  await reportReadiness(
    connection,
    { namespace: config.temporal.namespace, register: config.worker.registerSearchAttributes !== false },
    { say: (line) => say(config, line), warn: runtimeWarn },
  );
  const stopSchedule = config.reconciliation?.schedule
    ? keepSchedules(connection, config, overrides, { say: (line) => say(config, line), warn: runtimeWarn })
    : () => {};
  // The runtime's meter: the Prometheus endpoint when metrics are on, else a no-op.
  const meters = new BookingMeters(Runtime.instance().metricMeter);
  meters.initialize(
    {
      namespace: overrides.namespace ?? config.temporal.namespace,
      taskQueue: overrides.taskQueue ?? config.taskQueue,
      workflowType: WORKFLOW_TYPE,
    },
    (config.accounts?.accounts ?? []).map((account) => account.id),
  );
  const drift = countedDrift(createDriftReporter(runtimeDriftLog), meters);
  const stacks = createSupplierStacks(config, {
    drift,
    observerFor: (account) => createSupplierObserver(meters, account),
    log: { info: (line) => Runtime.instance().logger.info(line), warn: runtimeWarn },
  });
  const { supplier, orders } = stacks.own;
  const accountStacks = stacks.accounts;
  try {
    const worker = await createBookingWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      supplier,
      orders,
      profile: config.supplier.profile,
      dataConverter: dataConverterFor(config.encryption),
      ...(config.supplier.callbackUrl ? { callbackUrl: config.supplier.callbackUrl } : {}),
      ...(config.recoveryTesting ? { recoveryTesting: true } : {}),
      meters,
      ...(config.worker.deployment ? { deployment: config.worker.deployment } : {}),
      ...(accountStacks.length > 0
        ? {
            accounts: accountStacks.map(({ account, stack }) => ({
              id: account.id,
              partners: account.partners,
              supplier: stack.supplier,
              profile: account.profile,
              orders: stack.orders,
            })),
          }
        : {}),
      ...(config.workflowBundlePath ? { workflowBundle: { codePath: config.workflowBundlePath } } : {}),
      tuning: {
        maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
        maxConcurrentWorkflowTaskExecutions: config.worker.maxConcurrentWorkflowTasks,
        maxCachedWorkflows: config.worker.maxCachedWorkflows,
      },
      ...overrides,
    });
    return {
      worker,
      closeSupplier: async () => {
        stopSchedule();
        await stacks.close();
      },
    };
  } catch (err) {
    stopSchedule();
    await stacks.close();
    throw err;
  }
}

/** What a started worker says about itself: where it polls, the fleet-wide cap, and whether it encrypts. */
export function describeWorker(config: AppConfig): string {
  return (
    `Worker polling task queue "${config.taskQueue}" and "${queryOrdersTaskQueue(config.taskQueue)}" ` +
    `(QueryOrders capped at ${config.supplier.profile.rateLimits.queryOrders}/s for all workers) ` +
    `on ${config.temporal.connection.address} ` +
    `(namespace ${config.temporal.namespace}); supplier ${config.supplier.baseUrl}; ` +
    (config.accounts
      ? `supplier accounts ${config.accounts.accounts.map((a) => `${a.id} (${a.baseUrl}, queue "${supplierTaskQueue(config.taskQueue, a.id)}")`).join(', ')}; `
      : '') +
    `payload encryption ${config.encryption ? `on (key ${config.encryption.activeKeyId})` : 'OFF: personal data is stored in clear'}; ` +
    (config.worker.deployment
      ? `build ${config.worker.deployment.buildId} of deployment ${config.worker.deployment.deploymentName}`
      : 'unversioned (no WORKER_DEPLOYMENT_NAME)')
  );
}

async function main(): Promise<void> {
  const config = loadConfig();
  const observability = setUpObservability(config.logLevel, config.observability);
  const connection = await connectWorkerConnection(config.temporal.connection, {
    onRetry: (err, delayMs) =>
      Runtime.instance().logger.warn(
        `Temporal at ${config.temporal.connection.address} is not reachable yet ` +
          `(${err instanceof Error ? err.message : String(err)}); trying again in ${delayMs} ms`,
      ),
  });
  try {
    const plugins = observability.tracing ? [observability.tracing.plugin] : undefined;
    const { worker, closeSupplier } = await createWorkerFromConfig(connection, config, plugins ? { plugins } : {});
    try {
      say(config, describeWorker(config));
      if (observability.metricsUrl) say(config, `Metrics: ${observability.metricsUrl}`);
      if (observability.tracing) say(config, `Traces: ${config.observability?.tracing?.exporter} exporter`);
      // Worker.run() returns after SIGINT/SIGTERM once in-flight tasks are done, waiting up to the
      // shutdown grace (shutdownGraceMs) for activities such as a Book already sent.
      await worker.run();
    } finally {
      await closeSupplier();
    }
  } finally {
    await connection.close();
    await observability.shutdown();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
