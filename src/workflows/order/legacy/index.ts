/**
 * (legacy) The order workflow as it was before order-on-demand (2026-11-24): started by every confirmed booking
 * and open until check-in. No new run takes this path; runs started before the deploy (and their continue-as-new
 * successors) finish on it unchanged, which the replay tier proves with their recorded histories
 * (test/replay/histories/order/v1-open-until-check-in, recorded from the code before the deploy). Delete this folder once no such run can be open: after
 * the latest check-in date of the bookings confirmed before the deploy.
 *
 * orderWorkflow, the story of an order after its booking was confirmed: it waits, open for cancellation,
 * until the end of the check-in day; `cancelBooking` quotes the fee that applies now and, confirmed by
 * the caller with that fee, sends Cancel and follows the order to Cancelled or CancelFailed (cancel.ts);
 * a supplier callback (`supplierOrderUpdate`) triggers a verifying QueryOrders, which notices an order
 * the supplier cancelled itself. The booking workflow starts it (id `order:<reference>`, parent close
 * policy ABANDON) and ends with its outcome, so every caller awaiting a booking's result is unchanged.
 *
 * Why a second workflow and not a booking that stays open: callers in three languages await the booking's
 * result to learn it is confirmed, and an update cannot reach a closed workflow. Kept open for weeks, the
 * booking's result would come only at check-in. The order workflow's history stays small: it sleeps on
 * one timer, and continues-as-new when a long cancellation follow-up grows it.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { CustomerReferenceNoKey, RECOVERY_DEFAULTS } from '../../../contract/definitions';
import type { OrderOutcome } from '../../../contract';
import { orderQueryActivity } from './activities';
import { cancel, endingOf, follow, pollOrder, type FollowState } from './cancel';
import { listenOrder } from './messages';
import { parseTimestamp } from '../../../values/timestamp';
import {
  describeOrder,
  finishOrder,
  openUntil,
  quoteNow,
  setOrderStage,
  type LegacyOrderInput,
  type LegacyOrderState,
  type OrderRun,
} from './run';

/** The input, and what a run resumed by continue-as-new carries (internal). */
export type OrderWorkflowArgs = LegacyOrderInput & { resume?: { state: LegacyOrderState; follow?: FollowState } };

export async function legacyOrderWorkflow(input: OrderWorkflowArgs): Promise<OrderOutcome> {
  const run = newOrderRun(input);
  listenOrder(run);
  upsertSearchAttributes([{ key: CustomerReferenceNoKey, value: input.customerReferenceNo }]);
  if (input.resume?.follow) return finishOrder(run, await follow(run, input.resume.follow, input));
  setOrderStage(run, run.state.stage);
  if (input.autoCancel && !input.resume) requestAutoCancel(run, input.autoCancel);

  for (;;) {
    if (
      workflowInfo().continueAsNewSuggested ||
      workflowInfo().historyLength >= run.recovery.continueAsNewAfterEvents
    ) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof legacyOrderWorkflow>({
        ...input,
        autoCancel: undefined,
        resume: { state: run.state },
      });
    }
    const hintsSeen = run.hints;
    const untilMs = parseTimestamp(run.state.openUntil) - Date.now();
    const woke =
      untilMs > 0
        ? await condition(() => run.pending !== undefined || run.hints > hintsSeen, untilMs, {
            summary: 'Open for cancellation until check-in',
          })
        : run.pending !== undefined;
    if (!woke) {
      await condition(allHandlersFinished);
      return finishOrder(run, { kind: 'closed', order: run.state.order });
    }
    if (run.pending) {
      const ended = await cancel(run, run.pending, input);
      if (ended) return finishOrder(run, ended);
      continue;
    }
    // A supplier callback: never trusted alone, verified with QueryOrders.
    const poll = await pollOrder(run, Date.now(), 'supplier-hint');
    if (poll.kind === 'found') {
      const ended = endingOf(run, poll.order);
      if (ended) return finishOrder(run, ended);
      setCurrentDetails(describeOrder(run.state));
    }
  }
}

function newOrderRun(input: OrderWorkflowArgs): OrderRun {
  const traceId = workflowInfo().workflowId;
  const state: LegacyOrderState = input.resume?.state ?? {
    stage: 'confirmed',
    customerReferenceNo: input.customerReferenceNo,
    order: input.order,
    openUntil: openUntil(input.order.checkIn, Date.now()),
  };
  return {
    state,
    input,
    // The sweep starts orders for orphans without a booking's policy: then the defaults apply.
    recovery: {
      ...RECOVERY_DEFAULTS,
      ...input.recovery,
      delaysSeconds: [...(input.recovery?.delaysSeconds ?? RECOVERY_DEFAULTS.delaysSeconds)],
    },
    context: { ...input.context, sessionId: input.sessionId, traceId },
    traceId,
    queryOrder: orderQueryActivity(),
    hints: 0,
  };
}

/** A cancel the booking's caller asked for before confirmation (or the sweep, for an orphan). */
function requestAutoCancel(run: OrderRun, auto: NonNullable<LegacyOrderInput['autoCancel']>): void {
  const quote = quoteNow(run);
  if (auto.onlyIfFree && quote.basis !== 'free') {
    // Not free any more: the order stays, the caller (or an operator) decides with cancelBooking.
    setCurrentDetails(
      `${describeOrder(run.state)}\n- Automatic cancellation skipped: the fee is ${quote.fee ? `${quote.fee.amount} ${quote.fee.currency}` : 'unknown'}`,
    );
    return;
  }
  run.pending = { reason: auto.reason, origin: auto.origin, quote };
}
