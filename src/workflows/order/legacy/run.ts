/**
 * (legacy: runs started before order-on-demand; kept unchanged so they replay to their end, see ./index.ts)
 * One run of orderWorkflow: the order's state (what the `orderState` query answers), what the steps share,
 * and how the run reports itself (`BookingStage` = `order-<stage>`, the Web UI's details).
 */
import { log, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { BookingActivities } from '../../../activities/booking';
import { BookingStageKey } from '../../../contract/definitions';
import type {
  CancelBookingAnswer,
  CancelFeeQuote,
  OrderOutcome,
  OrderStage,
  OrderState,
  OrderSummary,
  OrderWorkflowInput,
  RecoveryPolicy,
} from '../../../contract';
import { cancelFeeAt } from '../../cancel-fee';
import { parseTimestamp } from '../../../values/timestamp';

/** How long an order whose check-in date is unknown stays open for cancellation. */
const OPEN_DAYS_WITHOUT_CHECK_IN = 30;
const DAY_MS = 24 * 3600 * 1000;

/** A cancellation asked for and not yet sent; `answer` is what the waiting update returns. */
export interface PendingCancel {
  reason: string;
  requestedBy?: string;
  origin: 'caller' | 'auto' | 'reconciliation';
  quote: CancelFeeQuote;
  answer?: CancelBookingAnswer;
}

/** The state of a run before on-demand: it always holds the order and the moment it closes. */
export type LegacyOrderState = OrderState & { order: OrderSummary; openUntil: string };
/** The input a confirmed booking handed over before on-demand. */
export type LegacyOrderInput = OrderWorkflowInput & { order: OrderSummary; sessionId: string };

export interface OrderRun {
  /** Mutated in place: the query handler holds this very object. */
  state: LegacyOrderState;
  input: LegacyOrderInput;
  recovery: RecoveryPolicy;
  context: NonNullable<LegacyOrderInput['context']> & { sessionId: string; traceId: string };
  traceId: string;
  queryOrder: BookingActivities['queryOrder'];
  /** Supplier hints received (`supplierOrderUpdate`); each triggers a verifying poll. */
  hints: number;
  pending?: PendingCancel;
}

/**
 * Open until the end of the check-in day (UTC: the order does not say the hotel's time zone); after that a
 * cancellation is a no-show matter for a person. An order without a check-in date stays open 30 days.
 */
export function openUntil(checkIn: string | undefined, nowMs: number): string {
  const checkInMs = checkIn ? parseTimestamp(checkIn) : NaN;
  const untilMs = Number.isNaN(checkInMs) ? nowMs + OPEN_DAYS_WITHOUT_CHECK_IN * DAY_MS : checkInMs + DAY_MS;
  return new Date(untilMs).toISOString();
}

export function quoteNow(run: OrderRun): CancelFeeQuote {
  return cancelFeeAt(run.state.order.cancelPolicy, Date.now());
}

export function setOrderStage(run: OrderRun, stage: OrderStage): void {
  run.state.stage = stage;
  upsertSearchAttributes([{ key: BookingStageKey, value: `order-${stage}` }]);
  setCurrentDetails(describeOrder(run.state));
}

/** Records the outcome; one a person must follow up is also an ERROR line. */
export function finishOrder(run: OrderRun, outcome: OrderOutcome): OrderOutcome {
  run.state.outcome = outcome;
  if (run.state.cancellation) run.state.cancellation.nextPollAt = undefined;
  setOrderStage(run, outcome.kind === 'failed' ? 'closed' : outcome.kind);
  if (outcome.kind === 'cancel-failed' || outcome.kind === 'cancel-unresolved') {
    log.error(`Order cancellation ${outcome.kind}: needs manual follow-up`, {
      customerReferenceNo: run.state.customerReferenceNo,
    });
  }
  return outcome;
}

/** The view an operator sees in the Web UI. References and money only, no personal data. */
export function describeOrder(s: LegacyOrderState): string {
  const c = s.cancellation;
  const lastPoll = c?.polls[c.polls.length - 1];
  return [
    `Stage: ${s.stage}`,
    `Reference: ${s.customerReferenceNo}`,
    `Order status: ${s.order.status}`,
    s.order.checkIn ? `Check-in: ${s.order.checkIn}` : undefined,
    `Open for cancellation until: ${s.openUntil}`,
    c ? `Cancel requested at ${c.requestedAt} (${c.origin}); fee quoted: ${fee(c.quote.fee)}` : undefined,
    c?.serviceFee ? `Supplier service fee: ${fee(c.serviceFee)}` : undefined,
    lastPoll
      ? `Last poll: ${lastPoll.at} → ${lastPoll.result}${lastPoll.status !== undefined ? ` (status ${lastPoll.status})` : ''}`
      : undefined,
    c?.nextPollAt ? `Next poll: ${c.nextPollAt}` : undefined,
  ]
    .filter(Boolean)
    .map((line) => `- ${line}`)
    .join('\n');
}

function fee(m: { amount: number; currency: string } | null | undefined): string {
  return m ? `${m.amount} ${m.currency}` : 'unknown';
}
