/**
 * One on-demand run of orderWorkflow: the order's state (what the `orderState` query answers), what the steps
 * share, and how the run reports itself (`BookingStage` = `order-<stage>`, the Web UI's details, the metric).
 */
import { log, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities, OrderView, QueryOrderOutcome } from '../../activities/types';
import { BookingStageKey, ORDER_OUTCOMES_NEEDING_A_PERSON, RECOVERY_DEFAULTS } from '../../api/contract/definitions';
import type {
  AutoCancel,
  CancelBookingAnswer,
  CancelBookingRequest,
  CancelFeeQuote,
  OrderCheck,
  OrderOutcome,
  OrderStage,
  OrderState,
  OrderSummary,
  OrderWorkflowInput,
  PollRecord,
  RecoveryPolicy,
} from '../../api/contract/index';
import { cancelFeeAt, chargedWithin, feeAfterChange } from '../../runtime/rules/cancel-fee';
import { readRecorded } from '../follow';
import { clockForFees, orderQueryActivity } from './proxies';
import { countCancelFeeAboveAccepted, countOrderOutcome } from '../counters';
import { whose } from '../whose';

/** A cancelBooking update waiting for its turn; the handler returns `answer` or fails with `refusal`. */
export interface QueuedRequest {
  request: CancelBookingRequest;
  answer?: CancelBookingAnswer;
  refusal?: { type: string; message: string };
}

/**
 * One run of the order: its state and what its steps share, and what a step does to the run itself: take the
 * booking's account, quote a fee, enter a stage, read the order, record and finish with an outcome. The steps
 * (work.ts, cancel.ts, auto-cancel.ts) take it and call these. The reference is the state's, kept once.
 */
export class OrderRun {
  /** Mutated in place: the query handler holds this very object. */
  readonly state: OrderState;
  readonly recovery: RecoveryPolicy;
  readonly context: NonNullable<OrderWorkflowInput['context']> & { sessionId: string; traceId: string };
  readonly traceId: string;
  queryOrder: BookingActivities['queryOrder'];
  /** cancelBooking updates, in arrival order; the main loop takes them one at a time. */
  requests: QueuedRequest[] = [];
  /** The request being worked on, if any (the validator reads it: one cancellation per run). */
  current?: QueuedRequest;
  /** The system's cancellations (`autoCancel` signals) not taken yet, in arrival order. */
  autoCancels: AutoCancel[] = [];
  /**
   * Set once the system asked this run to cancel (the first auto-cancel's origin): its refusal or a not cancellable
   * order is then for a person (`cancel-not-done`), as nobody else waits for it.
   */
  autoAsked?: AutoCancel['origin'];
  /** Checks asked (`checkOrder` signals) not taken yet. */
  checks: OrderCheck[] = [];
  /** Supplier hints received (`supplierOrderUpdate`) and the count already acted on. */
  hints = 0;
  hintsSeen = 0;
  /** Why the order is not this namespace's to read or act on (checkStart); every piece of work is answered not-found. */
  notOurs?: string;
  /** An operator cancelled the run: what is in flight finishes, nothing new is sent. */
  interrupted = false;
  /** The order's state as last read (profile-independent: confirmed, cancelled, …). */
  orderState?: OrderView['state'];
  /** The run's outcome so far: a cancellation's outweighs a quote's. */
  outcome?: OrderOutcome;

  constructor(readonly input: OrderWorkflowInput) {
    this.traceId = workflowInfo().workflowId;
    this.state = { stage: 'checking', customerReferenceNo: input.customerReferenceNo };
    this.recovery = {
      ...RECOVERY_DEFAULTS,
      ...input.recovery,
      delaysSeconds: [...(input.recovery?.delaysSeconds ?? RECOVERY_DEFAULTS.delaysSeconds)],
    };
    this.context = {
      ...input.context,
      sessionId: input.sessionId ?? `order-${input.customerReferenceNo}`,
      traceId: this.traceId,
    };
    this.queryOrder = orderQueryActivity(undefined);
  }

  /** The order's reference (the booking's customerReferenceNo), kept in the state alone. */
  get reference(): string {
    return this.state.customerReferenceNo;
  }

  /** The supplier account the order is on: its Cancel and QueryOrders go to that account's queues from now on. */
  onAccount(supplier: string): void {
    this.state.supplier = supplier;
    this.queryOrder = orderQueryActivity(supplier);
  }

  /** The fee that applies at `atMs` (feeClock), from the order as last read, in the order's own currency. */
  quoteAt(atMs: number): CancelFeeQuote {
    const order = this.state.order;
    return cancelFeeAt(order?.cancelPolicy, atMs, order?.price?.currency);
  }

  /** The fee after a change of fee within the run's margin (feeChangeMarginSeconds) of `atMs`, if one is that close. */
  feeSoon(quote: CancelFeeQuote, atMs: number): CancelFeeQuote | undefined {
    const order = this.state.order;
    const marginMs = this.recovery.feeChangeMarginSeconds * 1000;
    return feeAfterChange(order?.cancelPolicy, quote, atMs, marginMs, order?.price?.currency);
  }

  setStage(stage: OrderStage): void {
    this.state.stage = stage;
    upsertSearchAttributes([{ key: BookingStageKey, value: `order-${stage}` }]);
    setCurrentDetails(describeOrder(this.state));
  }

  /**
   * The run's outcome becomes `next` unless the one it has weighs more: one that needs a person is never replaced,
   * nor is a cancellation's ending replaced by a check's. The outcome travels over continue-as-new (OrderCarry.outcome).
   */
  recordOutcome(next: OrderOutcome): void {
    if (!this.outcome || weight(this, next) >= weight(this, this.outcome)) this.outcome = next;
  }

  /** Records the run's outcome: state, stage, metric, and an ERROR line when a person must act. */
  finish(reached: OrderOutcome): OrderOutcome {
    const outcome = forTheSystem(this, reached);
    this.state.outcome = outcome;
    if (this.state.cancellation) this.state.cancellation.nextPollAt = undefined;
    this.setStage(finalStage(this, outcome));
    countOrderOutcome(outcome.kind, this.state.supplier);
    reportFeeAboveAccepted(this, outcome);
    if (NEEDS_A_PERSON.has(outcome.kind)) {
      log.error(`Order ${outcome.kind}: needs manual follow-up`, {
        customerReferenceNo: this.reference,
        orderStage: outcome.kind,
        ...('reason' in outcome ? { reason: outcome.reason } : {}),
        ...whose(this.state.supplier),
      });
    }
    return outcome;
  }

  /** One QueryOrders of the order (follow.ts's, recorded in `polls` when given); what it found becomes the run's. */
  async read(
    anchorMs: number,
    trigger: PollRecord['trigger'],
    polls?: PollRecord[],
  ): Promise<QueryOrderOutcome | { kind: 'error'; error: string }> {
    const ids = { customerReferenceNo: this.reference, traceId: this.traceId };
    const result = await readRecorded(this.queryOrder, ids, anchorMs, trigger, polls);
    if (result.kind === 'found') {
      this.state.order = summaryOf(result.order, this.state.order);
      this.orderState = result.order.state;
    }
    return result;
  }
}

/**
 * The time a fee is judged at, recorded in history by a local activity (the later of this task's clock and the
 * worker's), never read from the workflow's clock at the decision (which a replay may see moved): whether a Cancel may
 * go out is then the same in every replay. Only if the activity cannot run at all is the task's clock used.
 */
export async function feeClock(): Promise<number> {
  const workflowNowMs = Date.now();
  try {
    return (await clockForFees({ workflowNowMs })).nowMs;
  } catch {
    return workflowNowMs;
  }
}

const NEEDS_A_PERSON = new Set<OrderOutcome['kind']>(ORDER_OUTCOMES_NEEDING_A_PERSON);

/** The endings of a cancellation asked for that a person must take up: what was asked was not done, or not known. */
const CANCELLATION_FOR_A_PERSON = new Set<OrderOutcome['kind']>([
  'cancel-not-done',
  'cancel-unresolved',
  'cancel-failed',
  'cancel-stopped',
]);

/**
 * How much an outcome weighs, as the run will end with it (forTheSystem: a system's cancellation not done is for a
 * person): a cancellation asked for and not done outweighs everything, then any other outcome for a person, then the
 * ending of a cancellation asked for (done, refused, not cancellable), then a check's, then a quote's. So a check
 * that comes after a cancellation (a supplier's callback, an operator's "check again") never replaces its ending.
 */
function weight(run: OrderRun, outcome: OrderOutcome): number {
  const ending = forTheSystem(run, outcome);
  if (CANCELLATION_FOR_A_PERSON.has(ending.kind)) return 4;
  if (NEEDS_A_PERSON.has(ending.kind)) return 3;
  if (ending.kind === 'cancelled' || ending.kind === 'cancel-refused' || ending.kind === 'not-cancellable') return 2;
  return ending.kind === 'quoted' ? 0 : 1;
}

/**
 * A cancellation the system asked for that was refused or found nothing to cancel is `cancel-not-done`: a caller
 * told "refused" decides for themselves, but nobody waits on onCancelAfterBook or the sweep, so a person must.
 */
function forTheSystem(run: OrderRun, outcome: OrderOutcome): OrderOutcome {
  if (!run.autoAsked || (outcome.kind !== 'cancel-refused' && outcome.kind !== 'not-cancellable')) return outcome;
  return {
    kind: 'cancel-not-done',
    origin: run.autoAsked,
    ...(outcome.order ? { order: outcome.order } : {}),
    ...('cancellation' in outcome ? { cancellation: outcome.cancellation } : {}),
    reason: outcome.reason,
  };
}

/**
 * A cancellation is done however much the supplier charged; but a service fee above the fee accepted (any fee, for
 * a cancellation accepted only while free) is money nobody agreed to: an ERROR line with both fees, the metric, and
 * the CancelFeeAboveAccepted alert, for a person to take up with the supplier.
 */
function reportFeeAboveAccepted(run: OrderRun, outcome: OrderOutcome): void {
  const cancellation = outcome.kind === 'cancelled' ? outcome.cancellation : undefined;
  const charged = cancellation?.serviceFee;
  if (!cancellation || !charged || chargedWithin(cancellation.accepted, charged)) return;
  countCancelFeeAboveAccepted(run.state.supplier);
  log.error('Order cancelled at a service fee above the one accepted: a person checks the charge', {
    customerReferenceNo: run.state.customerReferenceNo,
    accepted: cancellation.accepted,
    serviceFee: charged,
    ...whose(run.state.supplier),
  });
}

/**
 * The stage a run ends in. A check that found the order cancelled (or cancel-failed) as expected ends in that
 * stage, so the sweep and the next check, which read the last run's stage, still see that we know of it.
 */
function finalStage(run: OrderRun, outcome: OrderOutcome): OrderStage {
  if (outcome.kind === 'checked' && (run.orderState === 'cancelled' || run.orderState === 'cancel-failed')) {
    return run.orderState;
  }
  return outcome.kind;
}

/** The new status and references over what we knew; the cancel policy is kept when a poll lacks it. */
function summaryOf(order: OrderView, before: OrderSummary | undefined): OrderSummary {
  const { state: _state, ...summary } = order;
  return { ...before, ...summary };
}

/** The view an operator sees in the Web UI. References and money only, no personal data. */
export function describeOrder(s: OrderState): string {
  const c = s.cancellation;
  const lastPoll = c?.polls[c.polls.length - 1];
  return [
    `Stage: ${s.stage}`,
    `Reference: ${s.customerReferenceNo}`,
    s.order ? `Order status: ${s.order.status}` : 'Order: not read yet',
    s.order?.checkIn ? `Check-in: ${s.order.checkIn}` : undefined,
    c ? `Cancel requested at ${c.requestedAt} (${c.origin}); fee quoted: ${fee(c.quote.fee)}` : undefined,
    c?.accepted ? `Accepted: ${accepted(c.accepted)}` : undefined,
    c?.serviceFee ? `Supplier service fee: ${fee(c.serviceFee)}` : undefined,
    c ? `Cancel sends: ${c.cancelAttempts.map((a) => a.result).join(', ') || 'none yet'}` : undefined,
    lastPoll
      ? `Last poll: ${lastPoll.at} → ${lastPoll.result}${lastPoll.status !== undefined ? ` (status ${lastPoll.status})` : ''}`
      : undefined,
    c?.nextPollAt ? `Next poll: ${c.nextPollAt}` : undefined,
    s.outcome ? `Outcome: ${s.outcome.kind}` : undefined,
  ]
    .filter(Boolean)
    .map((line) => `- ${line}`)
    .join('\n');
}

export function fee(m: { amount: number; currency: string } | null | undefined): string {
  return m ? `${m.amount} ${m.currency}` : 'unknown';
}

function accepted(a: NonNullable<NonNullable<OrderState['cancellation']>['accepted']>): string {
  return a.kind === 'fee' ? `up to ${fee(a.fee)}` : a.kind === 'free' ? 'only while free' : 'any fee';
}
