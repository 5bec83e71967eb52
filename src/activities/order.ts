/**
 * The order's activities: Cancel, sent once by the Cancel rule, and starting an order workflow.
 *
 * An order workflow (`order:<reference>`) is started from an activity rather than as a child workflow: it is a
 * workflow of its own, tied to no parent, and a second start (a retried activity, the sweep and a booking both)
 * attaches to the run already there. A run that ended leaves the id free for the next piece of work (one run per
 * cancellation or check). The client carries the worker's data converter, so the input is encrypted like every
 * other payload.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import {
  autoCancelSignal,
  BookingStageKey,
  bookingWorkflowId,
  CustomerReferenceNoKey,
  orderWorkflowId,
  ORDER_WORKFLOW_TYPE,
  type BookingOutcome,
  type BookingWorkflow,
  type OrderOutcome,
  type OrderWorkflowInput,
} from '../api/contract/index';
import { OrderWorkflowInput as OrderInputSchema, RecoveryOptions, TEST_HEADER_REFUSED } from '../api/contract/schemas';
import type { SupplierClient } from '../runtime/supplier/interface';
import type { SupplierProfile } from '../runtime/config/supplier-profile';
import { chooseAccount, type SupplierAccount } from '../runtime/config/accounts';
import { everyRunOf, type RunView } from './runs';
import { withSignal } from './shared';
import { classifyCancelFailure, type CancelSendOutcome } from '../runtime/rules/cancel';
import type { CancelOrderInput, EarlierSends, OrderActivities, OrderStart, OrderStartCheck } from './types';

export interface OrderActivityDeps {
  client: Pick<Client, 'workflow'>;
  supplier: SupplierClient;
  profile: SupplierProfile;
  /** RECOVERY_TESTING: a test worker lifts the recovery floors for an order run as for a booking. */
  recoveryTesting?: boolean;
  /** The worker's supplier accounts (SUPPLIER_ACCOUNTS_FILE), which an order's account is checked against. */
  accounts?: OrderAccounts;
}

/** The accounts a worker serves, as an order run's first step checks the booking's one against them. */
export type OrderAccounts = ReadonlyArray<Pick<SupplierAccount, 'id' | 'partners'>>;

/** The booking outcomes that sent Book: the order under the reference is the booking's. */
const BOOKED_OUTCOMES = new Set<BookingOutcome['kind']>(['confirmed', 'failed', 'unresolved']);
/** The stages a booking cut off (terminated, timed out) was in once it had sent Book. */
const BOOKED_STAGES = new Set(['booking', 'recovering', 'completed']);

export function createOrderActivities({
  client,
  supplier,
  profile,
  recoveryTesting,
  accounts,
}: OrderActivityDeps): OrderActivities {
  return {
    /**
     * The order run's first step (after its own pure guard): the input against the contract's schema and the
     * worker's recovery bounds, then whose order it is. Reads Temporal only, never the supplier.
     */
    async checkOrderStart({ input }: { input: OrderWorkflowInput }): Promise<OrderStartCheck> {
      const issues = orderInputSchemaIssues(input, recoveryTesting === true, profile.testHeader);
      if (issues.length > 0) return { kind: 'invalid', issues };
      return bookingOfOrder(client, input.customerReferenceNo, accounts);
    },

    /**
     * One Cancel, never retried by Temporal (the order workflow decides what follows, by the Cancel rule in
     * src/runtime/rules/cancel.ts): every ending is a value, so the workflow knows whether this send may have acted.
     */
    async sendCancel({
      customerReferenceNo,
      supplierReferenceNo,
      reason,
      context,
    }: CancelOrderInput): Promise<CancelSendOutcome> {
      try {
        const data = await supplier.cancel({ customerReferenceNo, supplierReferenceNo, reason }, withSignal(context));
        return { kind: 'accepted', status: data.status, ...(data.serviceFee ? { serviceFee: data.serviceFee } : {}) };
      } catch (err) {
        return classifyCancelFailure(err, profile);
      }
    },

    /**
     * Starts the order workflow on this worker's task queue, or finds it running; never two at once. The system's
     * own cancellation (`autoCancel`) goes by signal-with-start: a run already open for the reference (a quote, a
     * check, a caller's cancellation) takes it after the work in hand, where an input would be ignored.
     */
    async startOrderWorkflow({ autoCancel, ...input }: OrderStart): Promise<{ workflowId: string }> {
      const workflowId = orderWorkflowId(input.customerReferenceNo);
      const options = {
        workflowId,
        taskQueue: Context.current().info.taskQueue,
        args: [input] as [OrderWorkflowInput],
        // Each run does one piece of work: a closed run does not stand in the way of the next.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
        typedSearchAttributes: [{ key: CustomerReferenceNoKey, value: input.customerReferenceNo }],
        staticSummary: `Order · ref ${input.customerReferenceNo}`,
      };
      if (autoCancel) {
        await client.workflow.signalWithStart(ORDER_WORKFLOW_TYPE, {
          ...options,
          signal: autoCancelSignal,
          signalArgs: [autoCancel],
        });
        return { workflowId };
      }
      await client.workflow
        .start(ORDER_WORKFLOW_TYPE, {
          ...options,
          workflowIdConflictPolicy: 'USE_EXISTING',
          // The worker's own connection: the server may hand the first workflow task straight back to this
          // worker in the start's answer, sparing a trip through the task queue (ignored where it cannot).
          requestEagerStart: true,
        })
        .catch((err: unknown) => {
          if ((err as Error)?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        });
      return { workflowId };
    },

    /**
     * Whether the booking of a reference (`booking:<reference>`) is still running: still finding out its order. A
     * describe of the latest run, so no visibility is needed; a reference no booking ever ran for is not running.
     */
    async bookingInProgress({ customerReferenceNo }: { customerReferenceNo: string }): Promise<boolean> {
      try {
        const described = await client.workflow.getHandle(bookingWorkflowId(customerReferenceNo)).describe();
        return described.status.name === 'RUNNING';
      } catch (err) {
        if ((err as Error)?.name === 'WorkflowNotFoundError') return false;
        throw err;
      }
    },

    /**
     * The time a cancellation fee is judged at: the later of the workflow's clock and the worker's. The fee changes at
     * the supplier's deadlines, so whether a Cancel may go out (free, or at the accepted fee) depends on the time; as
     * this activity's result it is recorded in the run's history, and every replay judges the fee at the same time
     * whatever its own clock says. The later of two clocks, because a fee judged too early may let out a Cancel the
     * guest pays for, and one judged too late only refuses a Cancel that is asked again.
     */
    async clockForFees({ workflowNowMs }: { workflowNowMs: number }) {
      return { nowMs: Math.max(workflowNowMs, Date.now()) };
    },

    /**
     * Read when a run's first Cancel is refused: did an earlier run of this order send a Cancel that may have acted
     * and never see the order settle (it ended cancel-unresolved, was stopped or cut off while cancelling)? Then
     * "cannot be cancelled" may mean "already being cancelled", and the refusal proves nothing. Every earlier run of
     * `order:<ref>` is read, newest first (runs.ts); `unknown` when they cannot all be read, which the workflow never
     * takes for "nothing sent".
     */
    async earlierCancelSends({ customerReferenceNo, runId }: { customerReferenceNo: string; runId: string }) {
      const workflowId = orderWorkflowId(customerReferenceNo);
      let runs: RunView[];
      try {
        runs = await everyRunOf(client.workflow.workflowService, client.workflow.options.namespace, workflowId, {
          exceptRunId: runId,
        });
      } catch {
        return 'unknown' satisfies EarlierSends;
      }
      let unknown = false;
      for (const run of runs) {
        const sends = await sendsOf(client, workflowId, run);
        if (sends === 'may-have-acted') return sends;
        if (sends === 'unknown') unknown = true;
      }
      return unknown ? 'unknown' : ('none' satisfies EarlierSends);
    },
  };
}

/**
 * The order input against the contract's schema; its recovery policy within RECOVERY_BOUNDS unless on a test worker;
 * no test flags where the supplier profile refuses them.
 */
function orderInputSchemaIssues(
  input: OrderWorkflowInput,
  testing: boolean,
  testHeader: SupplierProfile['testHeader'],
): string[] {
  const issues: string[] = [];
  const parsed = OrderInputSchema.safeParse(input);
  if (!parsed.success) issues.push(...parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`));
  if (testHeader === 'refuse' && input?.context?.test !== undefined) issues.push(TEST_HEADER_REFUSED);
  if (!testing && input?.recovery) {
    const bounded = RecoveryOptions.safeParse({ ...input.recovery, testing: false });
    if (!bounded.success) {
      issues.push(...bounded.error.issues.map((i) => `recovery.${i.path.join('.')}: ${i.message}`));
    }
  }
  return issues;
}

/**
 * Whether `booking:<ref>` of this namespace made the order: still running (its own hand-off, or a caller's request
 * the run refuses while it runs), ended with an outcome that sent Book (from its result, which no starter can
 * forge), or cut off once it had sent Book. No booking, or one that ended before Book: not ours.
 */
async function bookingOfOrder(
  client: Pick<Client, 'workflow'>,
  ref: string,
  accounts: OrderAccounts | undefined,
): Promise<OrderStartCheck> {
  const handle = client.workflow.getHandle<BookingWorkflow>(bookingWorkflowId(ref));
  let described;
  try {
    described = await handle.describe();
  } catch (err) {
    if ((err as Error)?.name === 'WorkflowNotFoundError') {
      return { kind: 'not-ours', reason: 'no booking of this namespace has this reference' };
    }
    throw err;
  }
  const status = described.status.name;
  const chosen = accountOfBooking(await described.memo, accounts);
  if ('refused' in chosen) return { kind: 'not-ours', reason: chosen.refused };
  const account = chosen.supplier ? { supplier: chosen.supplier } : {};
  if (status === 'RUNNING') return { kind: 'ours', booking: 'running', ...account };
  if (status === 'COMPLETED') {
    const outcome = await handle.result();
    if (BOOKED_OUTCOMES.has(outcome.kind)) return { kind: 'ours', booking: 'ended', ...account };
    return { kind: 'not-ours', reason: `the booking of this reference ended ${outcome.kind}, before any Book` };
  }
  const stage = described.typedSearchAttributes.get(BookingStageKey);
  if (stage !== undefined && BOOKED_STAGES.has(stage)) return { kind: 'ours', booking: 'ended', ...account };
  return { kind: 'not-ours', reason: `the booking of this reference was cut off before any Book (stage ${stage})` };
}

/**
 * The supplier account the order's Cancel and QueryOrders go to: the one the booking chose (its first step wrote it
 * in the booking's memo, and its continued runs carry it there), checked against this worker's own accounts file, as
 * a memo is only as good as whoever wrote it: a starter may set one. On a worker without accounts there is one
 * supplier and the memo is not read; with accounts, an account this worker does not have, or does not open to this
 * namespace, is refused, so a Cancel never goes out on another account's credential. No account in the memo: the
 * worker's own supplier, as for bookings that began before accounts.
 */
function accountOfBooking(
  memo: Record<string, unknown> | undefined,
  accounts: OrderAccounts = [],
): { supplier?: string } | { refused: string } {
  const named = memo?.['supplier'];
  if (accounts.length === 0 || named === undefined) return {};
  if (typeof named !== 'string')
    return { refused: 'the booking names its supplier account in a form no worker writes' };
  const chosen = chooseAccount(accounts, Context.current().info.workflowNamespace ?? '', named);
  return 'refused' in chosen ? { refused: `the booking's ${chosen.refused}` } : { supplier: chosen.account.id };
}

/**
 * What one ended run's Cancels leave open: from its result when it completed; from its last stage when it was cut
 * off (terminated, timed out), where `order-cancelling` means a send may have gone out.
 */
async function sendsOf(client: Pick<Client, 'workflow'>, workflowId: string, run: RunView): Promise<EarlierSends> {
  // A run continued as new handed what it followed to the next run, which is read in its turn.
  if (run.status === 'continued-as-new') return 'none';
  if (run.status !== 'completed') {
    if (run.stage === undefined) return 'unknown';
    return run.stage === 'order-cancelling' ? 'may-have-acted' : 'none';
  }
  let outcome: OrderOutcome;
  try {
    outcome = await client.workflow
      .getHandle<(i: OrderWorkflowInput) => Promise<OrderOutcome>>(workflowId, run.runId)
      .result();
  } catch {
    return 'unknown';
  }
  const cancellation = 'cancellation' in outcome ? outcome.cancellation : undefined;
  if (!cancellation) return 'none';
  const mayHaveActed = cancellation.cancelAttempts.some((a) => a.result === 'accepted' || a.result === 'ambiguous');
  const settled = outcome.kind === 'cancelled' || outcome.kind === 'cancel-failed';
  return mayHaveActed && !settled ? 'may-have-acted' : 'none';
}
