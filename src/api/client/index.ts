/**
 * The client helper for backend services: start a booking, watch it, steer it, await its outcome.
 *
 * `startBooking` is safe to retry: the workflow id is derived from the caller's customerReferenceNo
 * and a start for a reference that already has a workflow returns that workflow, running or done.
 * So a caller that times out and calls again never causes a second booking.
 */
import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WithStartWorkflowOperation,
  type ClientPlugin,
  type WorkflowHandle,
} from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import {
  approvePriceChangeUpdate,
  BookingRequest,
  CancelBookingRequest,
  cancelBookingUpdate,
  checkOrderSignal,
  operatorCheckOrderSignal,
  orderStateQuery,
  orderWorkflowId,
  bookingStateQuery,
  bookingWorkflowId,
  BookingStageKey,
  BookingStages,
  CustomerReferenceNoKey,
  DEFAULT_TASK_QUEUE,
  ORDER_WORKFLOW_TYPE,
  WORKFLOW_TYPE,
  type BookingOutcome,
  type BookingWorkflow,
  type OperatorNoteWorkflow,
  type OrderWorkflow,
  type BookingState,
  type CancelBookingAnswer,
  type OrderCheck,
  type OrderOutcome,
  type OrderState,
  type OrderWorkflowInput,
  OperatorNote,
  type PriceApproval,
} from '../contract/index';
import { describeIssues } from '../values/index';
import { dataConverterFor, EncryptionEnv, encryptionFromEnv } from '../codec/config';

export * from '../contract/index';

export type BookingHandle = WorkflowHandle<BookingWorkflow>;

/** A request that fails validation; `issues` name each field. Nothing was started. */
export class InvalidBookingRequestError extends Error {
  override readonly name = 'InvalidBookingRequestError';
  readonly type = 'InvalidBookingRequest';
  constructor(readonly issues: string[]) {
    super(`Invalid booking request: ${issues.join('; ')}`);
  }
}

/** A new booking reference, for callers that have none yet. Keep it: it is the key to retry with. */
export function newReference(): string {
  return randomUUID();
}

export interface ConnectClientOptions {
  /** How long to wait for the service to answer before giving up (the SDK's default: 10 s). */
  connectTimeoutMs?: number;
  /** Client plugins, e.g. tracing (src/runtime/observability: `startTracing(...).plugin`), so a booking's trace starts here. */
  plugins?: ClientPlugin[];
}

/**
 * A Temporal client configured the ecosystem's way (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, API key, TLS),
 * with the workers' payload encryption (PAYLOAD_ENCRYPTION_KEYS, PAYLOAD_ENCRYPTION_KEY_ID).
 */
export async function connectClient(
  env: Record<string, string | undefined> = process.env,
  options: ConnectClientOptions = {},
): Promise<Client> {
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined),
  );
  const { connectionOptions, namespace } = loadClientConnectConfig({
    overrideEnvVars,
    disableFile: !env.TEMPORAL_CONFIG_FILE,
  });
  const parsed = EncryptionEnv.safeParse(env);
  const { encryption, issues } = parsed.success
    ? encryptionFromEnv(parsed.data)
    : { encryption: undefined, issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
  if (issues.length > 0) throw new Error(`Invalid configuration:\n  ${issues.join('\n  ')}`);
  const connection = Connection.lazy({
    ...connectionOptions,
    ...(options.connectTimeoutMs !== undefined ? { connectTimeout: options.connectTimeoutMs } : {}),
  });
  try {
    await connection.ensureConnected();
  } catch (err) {
    // A caller retrying until the service is back would otherwise leave a channel behind per attempt.
    await connection.close();
    throw err;
  }
  return new Client({
    connection,
    namespace: namespace ?? 'default',
    dataConverter: dataConverterFor(encryption),
    ...(options.plugins ? { plugins: options.plugins } : {}),
  });
}

export interface StartBookingOptions {
  taskQueue?: string;
  /**
   * Asks the server to hand the booking's first workflow task back in the start's answer (eager start).
   * Takes effect only when this client's connection is the NativeConnection of a worker polling the
   * booking's task queue in the same process (a front end embedded in a worker); elsewhere the server
   * starts the booking as usual. Saves one trip through the task queue (README, Performance).
   */
  eager?: boolean;
}

/**
 * Starts the booking workflow, or returns the one that already exists for this reference.
 * Throws InvalidBookingRequestError, naming each field, before anything is started.
 */
export async function startBooking(
  client: Client,
  request: BookingRequest,
  options: StartBookingOptions = {},
): Promise<BookingHandle> {
  const parsed = BookingRequest.safeParse(request);
  if (!parsed.success) throw new InvalidBookingRequestError(describeIssues(parsed.error));
  const workflowId = bookingWorkflowId(parsed.data.customerReferenceNo);
  try {
    const handle = await client.workflow.start<BookingWorkflow>(WORKFLOW_TYPE, {
      workflowId,
      taskQueue: options.taskQueue ?? process.env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      // The parsed request: unknown fields (an internal `resume`, say) never reach the workflow.
      args: [parsed.data],
      // A retried start while the booking runs attaches to it; after it ended, the id is never reused.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      // Both from the start, so the workflow does not upsert them again (one event and visibility write each).
      typedSearchAttributes: [
        { key: CustomerReferenceNoKey, value: parsed.data.customerReferenceNo },
        { key: BookingStageKey, value: BookingStages[0] },
      ],
      // Shown in the Web UI's list and header; references only, never personal data.
      staticSummary: `Booking ${parsed.data.ratePkgId} · ref ${parsed.data.customerReferenceNo}`,
      ...(options.eager ? { requestEagerStart: true } : {}),
    });
    return handle;
  } catch (err) {
    // The booking ran before and ended: its workflow, not a new one, is the answer.
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return client.workflow.getHandle<BookingWorkflow>(workflowId);
    throw err;
  }
}

export function getBookingHandle(client: Client, customerReferenceNo: string): BookingHandle {
  return client.workflow.getHandle<BookingWorkflow>(bookingWorkflowId(customerReferenceNo));
}

export function getBookingState(client: Client, customerReferenceNo: string): Promise<BookingState> {
  return getBookingHandle(client, customerReferenceNo).query(bookingStateQuery);
}

/** Answers a price-change question. Rejected (with the reason) unless the booking awaits exactly this price. */
export function approvePriceChange(client: Client, customerReferenceNo: string, approval: PriceApproval) {
  // One update id for every attempt: a retry after the server took the answer finds it instead of sending it again.
  const updateId = randomUUID();
  return retriedWhenAsked(() =>
    getBookingHandle(client, customerReferenceNo).executeUpdate(approvePriceChangeUpdate, {
      args: [approval],
      updateId,
    }),
  );
}

/** Waits for the outcome, following continue-as-new. */
export function awaitOutcome(client: Client, customerReferenceNo: string): Promise<BookingOutcome> {
  return getBookingHandle(client, customerReferenceNo).result();
}

/**
 * A booking's order workflow (`order:<reference>`). It runs on demand: each cancelBooking starts a run (or joins
 * the one running), which ends when its piece of work is done; this handle follows the latest run.
 */
export function getOrderHandle(client: Client, customerReferenceNo: string): WorkflowHandle<OrderWorkflow> {
  return client.workflow.getHandle<OrderWorkflow>(orderWorkflowId(customerReferenceNo));
}

export function getOrderState(client: Client, customerReferenceNo: string): Promise<OrderState> {
  return getOrderHandle(client, customerReferenceNo).query(orderStateQuery);
}

export interface CancelBookingOptions {
  /** The task queue an order run starts on: default BOOKING_TASK_QUEUE, else `hotel-booking`. */
  taskQueue?: string;
}

/**
 * Cancels a confirmed booking, in two steps: `{ confirm: false }` answers the fee that applies now;
 * `{ confirm: true, acceptedFee: <that fee> }` sends Cancel and answers once the supplier took it. The order
 * workflow runs on demand, so this is an Update-With-Start: it starts `order:<reference>` (or joins the run
 * in progress) and sends the cancelBooking update in one call. Refused (WorkflowUpdateFailedError, with the
 * reason) when the order is not confirmed, missing, or the fee has changed since. The cancellation's end
 * (cancelled, cancel-failed, ...) is the order run's result: awaitOrderOutcome.
 */
export async function cancelBooking(
  client: Client,
  customerReferenceNo: string,
  request: CancelBookingRequest,
  options: CancelBookingOptions = {},
): Promise<CancelBookingAnswer> {
  const parsed = CancelBookingRequest.safeParse(request);
  if (!parsed.success) throw new InvalidBookingRequestError(describeIssues(parsed.error));
  const input: OrderWorkflowInput = { customerReferenceNo };
  // One update id for every attempt: a retry after the server did the work finds that update's outcome instead
  // of starting a second order run and sending a second cancellation.
  const updateId = randomUUID();
  return retriedWhenAsked(() =>
    client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
      args: [parsed.data],
      updateId,
      // An operation is used once: each attempt gets its own, with the same start.
      startWorkflowOperation: new WithStartWorkflowOperation<OrderWorkflow>(ORDER_WORKFLOW_TYPE, {
        ...orderRunStart(customerReferenceNo, options.taskQueue, 'Order'),
        args: [input],
      }),
    }),
  );
}

/** Attempts of a call the server asked to retry, and the pause before the first retry (doubled after each). */
const RETRY_ATTEMPTS = 5;
const RETRY_FIRST_PAUSE_MS = 200;

/**
 * True when the server answered "something went wrong, please retry" (or aborted an update, below): the frontend's mask over an internal error
 * (gRPC UNKNOWN or INTERNAL). Temporal 1.29's history service turns a persistence error (a shard that moved to
 * another node, as on a cluster that just started; a write's condition or timeout) into a retryable code only when
 * it is a call's own error; inside an Update-With-Start's per-operation errors it stays unconverted, reaches the
 * frontend as UNKNOWN and is masked. The same call made again goes through.
 */
export function serverAskedToRetry(err: unknown): boolean {
  for (let e = err as { code?: unknown; details?: unknown; message?: unknown; cause?: unknown } | undefined; e;) {
    const text = `${typeof e.details === 'string' ? e.details : ''} ${typeof e.message === 'string' ? e.message : ''}`;
    if ((e.code === 2 || e.code === 13) && /please retry/i.test(text)) return true;
    // WorkflowNotReady (FAILED_PRECONDITION): the update was aborted, never accepted, because the workflow task that
    // carried it failed (a run continuing as new as signals arrived, say). The same update id asked again reaches the
    // run as it is now.
    if (e.code === 9 && /update due to unexpected workflow task failure/i.test(text)) return true;
    // UNAVAILABLE "Workflow was not started: <outcome>": an Update-With-Start lost a race with another start of the
    // same id (a callback's check, say) between the server's look for a running run and its own start; the update
    // was not applied, and the server's own code says to retry the whole operation.
    // (Read by its text as well as its code: inside a multi-operation failure the SDK may carry it without one.)
    if ((e.code === 14 || e.code === undefined) && /workflow was not started: /i.test(text)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/**
 * Runs `call` again, a few times with growing pauses, while the server asks to retry; any other error, or the last
 * attempt's, goes to the caller. Only for calls that are safe to repeat as they are (an update with a fixed id).
 */
async function retriedWhenAsked<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= RETRY_ATTEMPTS || !serverAskedToRetry(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_FIRST_PAUSE_MS * 2 ** (attempt - 1)));
    }
  }
}

/**
 * How every order run on demand is started, by a cancellation or a check: under `order:<reference>`, joining a run
 * in progress; after a run ended, the next request starts a new one under the same id.
 */
function orderRunStart(customerReferenceNo: string, taskQueue: string | undefined, summary: string) {
  return {
    workflowId: orderWorkflowId(customerReferenceNo),
    taskQueue: taskQueue ?? process.env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
    typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: customerReferenceNo }],
    staticSummary: `${summary} · ref ${customerReferenceNo}`,
  };
}

/**
 * Waits for the latest order run's end: for a cancellation cancelled, cancel-failed, cancel-unresolved,
 * cancel-refused or cancel-stopped; `quoted` after a quote only (schema/order-outcome.schema.json).
 */
export function awaitOrderOutcome(client: Client, customerReferenceNo: string): Promise<OrderOutcome> {
  return getOrderHandle(client, customerReferenceNo).result();
}

export interface CheckOrderOptions {
  /** The task queue an order run starts on: default BOOKING_TASK_QUEUE, else `hotel-booking`. */
  taskQueue?: string;
  /** Why the check was asked (recorded in the run's input). */
  reason?: string;
  /** A person checks a booking that ended `unresolved`: a final order status settles it (the run ends `checked`). */
  resolvesUnresolved?: boolean;
}

/**
 * Verifies the order now with QueryOrders, through `order:<reference>`: starts a run that checks the order and
 * ends (`checked`, `changed-by-supplier`, `not-cancellable`), or joins the run in progress, which is already
 * following the order. Its end is awaitOrderOutcome's answer.
 */
export async function checkOrderNow(
  client: Client,
  customerReferenceNo: string,
  options: CheckOrderOptions = {},
): Promise<WorkflowHandle<OrderWorkflow>> {
  const input: OrderWorkflowInput = { customerReferenceNo };
  const check: OrderCheck = {
    reason: options.reason ?? 'asked by an operator',
    ...(options.resolvesUnresolved ? { resolvesUnresolved: true } : {}),
  };
  // The check is a signal only operators and the callback receiver may send: a run already open takes it too.
  const { workflowIdConflictPolicy: _joins, ...start } = orderRunStart(
    customerReferenceNo,
    options.taskQueue,
    'Order check',
  );
  return client.workflow.signalWithStart<OrderWorkflow, [OrderCheck]>(ORDER_WORKFLOW_TYPE, {
    ...start,
    args: [input],
    // Settling an unresolved booking is a person's word: it goes by the operators' own signal, which the
    // authorizer lets no other identity send.
    signal: options.resolvesUnresolved ? operatorCheckOrderSignal : checkOrderSignal,
    signalArgs: [check],
  });
}

export const OPERATOR_NOTE_WORKFLOW_TYPE = 'operatorNoteWorkflow';

/** The id of the note for an item: one note per item (a workflow run that asked for a person, and its reference). */
export function operatorNoteWorkflowId(item: OperatorNote['item']): string {
  return ['note', item.workflowId, item.runId, ...(item.customerReferenceNo ? [item.customerReferenceNo] : [])].join(
    ':',
  );
}

/** The note was not recorded: the item already has one (`existing` is its workflow id). */
export class AlreadyHandledError extends Error {
  override readonly name = 'AlreadyHandledError';
  constructor(readonly existing: string) {
    super(`already marked handled: ${existing}`);
  }
}

/**
 * Records that an item needing a person was handled, with a note: an operatorNoteWorkflow run whose id names the
 * item (operatorNoteWorkflowId), ended at once with the note as its result. A second note for the same item is
 * refused (AlreadyHandledError): the first one stands.
 */
export async function recordHandled(
  client: Client,
  note: OperatorNote,
  options: { taskQueue?: string } = {},
): Promise<WorkflowHandle<OperatorNoteWorkflow>> {
  const parsed = OperatorNote.safeParse(note);
  if (!parsed.success) throw new InvalidBookingRequestError(describeIssues(parsed.error));
  const workflowId = operatorNoteWorkflowId(parsed.data.item);
  try {
    return await client.workflow.start<OperatorNoteWorkflow>(OPERATOR_NOTE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: options.taskQueue ?? process.env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      args: [parsed.data],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...(parsed.data.item.customerReferenceNo
        ? { typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: parsed.data.item.customerReferenceNo }] }
        : {}),
      staticSummary: `Handled · ${parsed.data.item.workflowId}`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new AlreadyHandledError(workflowId);
    throw err;
  }
}
