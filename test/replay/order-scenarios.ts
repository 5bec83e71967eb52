/**
 * The order and sweep workflow scenarios whose histories are recorded from real runs on the dev server
 * (test/replay/record-histories.ts) and replayed by test/replay/replay.test.ts. Each drives the workflow as its
 * callers do (Update-With-Start for cancelBooking, signal-with-start for a supplier callback, the booking's own
 * onCancelAfterBook, the sweep's orphans) and names the workflow whose latest run is recorded.
 *
 * Order runs follow a Cancel on the recovery schedule; the scenarios scale it down to seconds
 * (`recovery.testing`), as the booking scenarios do: the commands are those of the full schedule.
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import {
  autoCancelSignal,
  bookingStateQuery,
  cancelBookingUpdate,
  CustomerReferenceNoKey,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  supplierOrderUpdateSignal,
  type AutoCancel,
  type BookingRequest,
  type CancelBookingRequest,
  type OrderWorkflowInput,
} from '../../src/api/contract/index';
import { checkOrderNow, recordHandled, startBooking } from '../../src/api/client/index';
import { temporalCallbackTarget } from '../../src/servers/callbacks/temporal-target';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import type { Sandbox } from '../../dev/sandbox/server';
import type { orderWorkflow } from '../../src/workflows';
import { bookingRequest, guests, holder } from '../harness/booking';

export interface RecordingContext {
  client: Client;
  taskQueue: string;
  sandbox: Sandbox;
  supplier: SupplierClient;
  waitFor<T>(check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
}

export interface WorkflowScenario {
  name: string;
  /** The outcome kind the recording must end with; the recorder refuses to write anything else. */
  expected: string;
  /** Drives the workflow to its end and returns the workflow id whose latest run is recorded. */
  run(ctx: RecordingContext): Promise<string>;
}

/** Below the production bounds: a test schedule, which the recorder's worker accepts (RECOVERY_TESTING). */
const fast = {
  testing: true,
  delaysSeconds: [1, 1, 2],
  repeatEverySeconds: 2,
  rebookAfterSeconds: 3,
  deadlineSeconds: 60,
};

async function confirmedBooking(ctx: RecordingContext, test: string, extra: Partial<BookingRequest> = {}) {
  const request = bookingRequest({ test, recovery: fast, ...extra });
  const outcome = await (await startBooking(ctx.client, request, { taskQueue: ctx.taskQueue })).result();
  if (outcome.kind !== 'confirmed') throw new Error(`the booking ended ${outcome.kind}, not confirmed`);
  return request.customerReferenceNo;
}

/** cancelBooking as the client helper sends it (Update-With-Start), with the scaled schedule in the input. */
function cancelRequest(ctx: RecordingContext, ref: string, request: CancelBookingRequest) {
  const input: OrderWorkflowInput = { customerReferenceNo: ref, recovery: fast };
  return ctx.client.workflow.executeUpdateWithStart(cancelBookingUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof orderWorkflow>(ORDER_WORKFLOW_TYPE, {
      workflowId: orderWorkflowId(ref),
      taskQueue: ctx.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: ref }],
      staticSummary: `Order · ref ${ref}`,
    }),
  });
}

const free = { currency: 'USD', amount: 0 };

/** Waits for the latest order run under the reference to close (its result is read by the recorder). */
async function orderEnded(ctx: RecordingContext, ref: string): Promise<string> {
  await ctx.client.workflow
    .getHandle(orderWorkflowId(ref))
    .result()
    .catch(() => undefined);
  return orderWorkflowId(ref);
}

async function cancelledDuringRecovery(
  ctx: RecordingContext,
  onCancelAfterBook: BookingRequest['onCancelAfterBook'],
  test: string,
) {
  const request = bookingRequest({ onCancelAfterBook, test, recovery: fast });
  const handle = await startBooking(ctx.client, request, { taskQueue: ctx.taskQueue });
  await ctx.waitFor(async () => ((await handle.query(bookingStateQuery)).stage === 'recovering' ? true : undefined));
  await handle.cancel();
  const outcome = await handle.result();
  if (outcome.kind !== 'confirmed') throw new Error(`the booking ended ${outcome.kind}, not confirmed`);
  return orderEnded(ctx, request.customerReferenceNo);
}

export const orderScenarios: WorkflowScenario[] = [
  {
    name: 'quoted',
    expected: 'quoted',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0');
      await cancelRequest(ctx, ref, { confirm: false });
      return orderEnded(ctx, ref);
    },
  },
  {
    // Another partner's reference on a shared supplier account: no booking of this namespace made the order, so the
    // run answers not-found and reads nothing.
    name: 'not-ours-refused',
    expected: 'not-cancellable',
    async run(ctx) {
      const ref = randomUUID();
      await cancelRequest(ctx, ref, { confirm: false }).catch(() => undefined);
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-free',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancelAfterQueries=2');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free, reason: 'guest changed plans' });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-at-policy-fee',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&freeCancel=0&cancelAfterQueries=2');
      const quote = await cancelRequest(ctx, ref, { confirm: false });
      if (quote.kind !== 'quote') throw new Error('expected a quote');
      await orderEnded(ctx, ref);
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: quote.quote.fee });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'fee-changed-refused',
    expected: 'quoted',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&freeCancel=0');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: { currency: 'USD', amount: 1 } }).catch(
        () => undefined,
      );
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-lost-then-refused',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(
        ctx,
        'confirmAfterMs=0&cancel=504AfterAccept&cancelTimes=1&cancelRepeat=refuse&cancelAfterQueries=1',
      );
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      return orderEnded(ctx, ref);
    },
  },
  {
    // The first Cancel is taken but its answer lost, the hotel is slow,
    // the re-send (after rebookAfterSeconds) is refused 400; nothing more is sent, and the order is listed Cancelled.
    name: 'cancel-lost-resend-refused-listed-late',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(
        ctx,
        'confirmAfterMs=0&cancel=504AfterAccept&cancelTimes=1&cancelRepeat=refuse&cancelAfterQueries=8',
      );
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      const id = await orderEnded(ctx, ref);
      const sends = ctx.sandbox.calls('cancel').filter((c) => c.customerReferenceNos?.includes(ref)).length;
      if (sends !== 2) throw new Error(`expected the lost Cancel and one refused re-send, saw ${sends} Cancels`);
      return id;
    },
  },
  {
    // While following a taken Cancel, a hint is polled at once; the next, right
    // after, waits for the scheduled poll (due within the minute).
    name: 'hints-spaced-while-following',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancelAfterQueries=10');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      const order = ctx.client.workflow.getHandle(orderWorkflowId(ref));
      const queries = () =>
        ctx.sandbox.calls('queryOrders').filter((c) => c.customerReferenceNos?.includes(ref)).length;
      // A hint after each poll: the first wakes a poll at once, the later ones within the minute wait.
      for (let i = 0; i < 4; i++) {
        const before = queries();
        await order.signal(supplierOrderUpdateSignal, { customerReferenceNo: ref, status: 3 });
        await ctx.waitFor(async () => (queries() > before ? true : undefined));
      }
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-unknown-code',
    expected: 'cancelled',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancel=unknownCode&cancelAfterQueries=1');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-refused',
    expected: 'cancel-refused',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancel=refuse&cancelTimes=1');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'cancel-failed',
    expected: 'cancel-failed',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancel=failed&cancelAfterQueries=1');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'not-cancellable',
    expected: 'not-cancellable',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0');
      ctx.sandbox.setOrderStatus(ref, 3);
      await cancelRequest(ctx, ref, { confirm: false }).catch(() => undefined);
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'auto-cancel-after-cancelled-booking',
    expected: 'cancelled',
    run: (ctx) =>
      cancelledDuringRecovery(ctx, 'cancel', 'book=504AfterCreate&confirmAfterQueries=3&cancelAfterQueries=1'),
  },
  {
    name: 'auto-cancel-if-free-stopped',
    expected: 'cancel-stopped',
    run: (ctx) =>
      cancelledDuringRecovery(ctx, 'cancel-if-free', 'book=504AfterCreate&confirmAfterQueries=3&freeCancel=0'),
  },
  {
    name: 'auto-cancel-refused-not-done',
    expected: 'cancel-not-done',
    run: (ctx) =>
      cancelledDuringRecovery(ctx, 'cancel', 'book=504AfterCreate&confirmAfterQueries=3&cancel=refuse&cancelTimes=1'),
  },
  {
    name: 'auto-cancel-order-stays-pending-not-done',
    expected: 'cancel-not-done',
    async run(ctx) {
      // The system's cancellation, delivered as a worker does (signal-with-start), of an order the supplier shows
      // Confirming until the deadline: the run reads it on its schedule and, at the deadline, leaves it to a person.
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0');
      ctx.sandbox.setOrderStatus(ref, 1);
      const auto: AutoCancel = {
        reason: 'orphan order: no booking stands for it',
        onlyIfFree: false,
        origin: 'reconciliation',
      };
      await ctx.client.workflow.signalWithStart<typeof orderWorkflow, [AutoCancel]>(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(ref),
        taskQueue: ctx.taskQueue,
        args: [{ customerReferenceNo: ref, recovery: { ...fast, deadlineSeconds: 8 } }],
        signal: autoCancelSignal,
        signalArgs: [auto],
      });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'operator-cancels-order-run',
    expected: 'cancel-unresolved',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0&cancelAfterQueries=500');
      await cancelRequest(ctx, ref, { confirm: true, acceptedFee: free });
      await new Promise((r) => setTimeout(r, 3_000));
      await ctx.client.workflow.getHandle(orderWorkflowId(ref)).cancel();
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'callback-agrees-checked',
    expected: 'checked',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0');
      await temporalCallbackTarget(ctx.client, ctx).signal({ customerReferenceNo: ref, status: 2 });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'operator-check-resolves-unresolved',
    expected: 'checked',
    async run(ctx) {
      const ref = await unresolvedBooking(ctx);
      ctx.sandbox.setOrderStatus(ref, 2);
      await checkOrderNow(ctx.client, ref, { taskQueue: ctx.taskQueue, resolvesUnresolved: true });
      return orderEnded(ctx, ref);
    },
  },
  {
    name: 'callback-changed-by-supplier',
    expected: 'changed-by-supplier',
    async run(ctx) {
      const ref = await confirmedBooking(ctx, 'confirmAfterMs=0');
      ctx.sandbox.setOrderStatus(ref, 3);
      await temporalCallbackTarget(ctx.client, ctx).signal({ customerReferenceNo: ref, status: 3 });
      return orderEnded(ctx, ref);
    },
  },
];

/** A booking whose order stays pending past its (short) deadline: it ends `unresolved`. */
async function unresolvedBooking(ctx: RecordingContext): Promise<string> {
  const request = bookingRequest({
    test: 'book=504AfterCreate&outcome=pending',
    recovery: { ...fast, deadlineSeconds: 8 },
  });
  const outcome = await (await startBooking(ctx.client, request, { taskQueue: ctx.taskQueue })).result();
  if (outcome.kind !== 'unresolved') throw new Error(`the booking ended ${outcome.kind}, not unresolved`);
  return request.customerReferenceNo;
}

/** Books at the supplier directly, as an order no booking workflow stands for. */
async function orderWithoutBooking(ctx: RecordingContext): Promise<string> {
  const ref = randomUUID();
  await ctx.supplier.book(
    { customerReferenceNo: ref, ratePkgId: 'pkg-orphan', holder, guests },
    { sessionId: `s-${ref}`, test: 'confirmAfterMs=0' },
  );
  return ref;
}

/**
 * What each sweep judges: an agreeing booking, an order nobody booked, a booking of ours terminated after its
 * Book (an orphan of ours, free to cancel), and a confirmed booking the supplier cancelled without a callback.
 */
async function sweepWorld(ctx: RecordingContext): Promise<void> {
  await confirmedBooking(ctx, 'confirmAfterMs=0');
  await orderWithoutBooking(ctx);
  const terminated = bookingRequest({ test: 'book=504AfterCreate&confirmAfterQueries=500', recovery: fast });
  const handle = await startBooking(ctx.client, terminated, { taskQueue: ctx.taskQueue });
  await ctx.waitFor(async () => ((await handle.query(bookingStateQuery)).polls.length >= 1 ? true : undefined));
  await handle.terminate('an orphan made on purpose');
  ctx.sandbox.setOrderStatus(await confirmedBooking(ctx, 'confirmAfterMs=0'), 3);
}

function sweep(name: string, cancelOrphans: boolean): WorkflowScenario {
  return {
    name,
    expected: 'sweep',
    async run(ctx) {
      await sweepWorld(ctx);
      const workflowId = `sweep-${name}-${randomUUID()}`;
      await ctx.client.workflow.execute('reconciliationSweepWorkflow', {
        taskQueue: ctx.taskQueue,
        workflowId,
        args: [
          {
            lookbackMinutes: 60,
            settleMinutes: 0,
            sliceMinutes: 15,
            cancelOrphans,
            checkInHours: 48,
            statuses: defaultSupplierProfile.orderStatus,
          },
        ],
      });
      return workflowId;
    },
  };
}

export const sweepScenarios: WorkflowScenario[] = [sweep('orphans-reported', false), sweep('orphans-cancelled', true)];

/** An operator marks an unresolved booking handled, with a note (the console's "mark handled"). */
export const noteScenarios: WorkflowScenario[] = [
  {
    name: 'handled',
    expected: 'note',
    async run(ctx) {
      const ref = randomUUID();
      const handle = await recordHandled(
        ctx.client,
        {
          item: { workflowId: `booking:${ref}`, runId: 'run-recorded', customerReferenceNo: ref },
          note: 'called the hotel: no booking under this reference; told the guest',
          by: 'operator',
        },
        { taskQueue: ctx.taskQueue },
      );
      await handle.result();
      return handle.workflowId;
    },
  },
];
