/**
 * The order after confirmation (orderWorkflow): a caller's cancellation and its answer, the run's state and
 * outcome, and what only the system or an operator sends it (a check, an automatic cancellation, a note).
 * Node code only, like every shape of the contract (./schemas says why).
 */
import { z } from 'zod';
import { Money } from '../values/index';
import { OrderStages } from './definitions';
import { RecoveryPolicy, RequestContext } from './request';
import { OrderSummary, PollRecord } from './booking';

/** The fee that applies now: null when the policy does not say (see src/runtime/rules/cancel-fee.ts). */
export const CancelFeeQuote = z.object({
  fee: Money.nullable(),
  basis: z.enum(['free', 'policy', 'unknown']),
  /** When this fee stops applying (ISO). */
  changesAt: z.string().optional(),
});
export type CancelFeeQuote = z.infer<typeof CancelFeeQuote>;

export const CancelBookingRequest = z.object({
  /** false: only quote the fee; true: cancel, accepting `acceptedFee`. */
  confirm: z.boolean(),
  /** The fee the caller accepts: must equal the fee that applies now (null: the fee is unknown). */
  acceptedFee: Money.nullable().optional(),
  reason: z.string().min(1).max(500).optional(),
  requestedBy: z.string().min(1).optional(),
});
export type CancelBookingRequest = z.infer<typeof CancelBookingRequest>;

/** The update's answer: a quote, or Cancel accepted by the supplier (its fate: the order workflow's result). */
export const CancelBookingAnswer = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('quote'), quote: CancelFeeQuote }),
  z.object({
    kind: z.literal('cancel-requested'),
    quote: CancelFeeQuote,
    /** What the supplier says it charges, when its answer said (Cancel's `serviceFee`). */
    serviceFee: Money.optional(),
    /** The supplier's answer was not clear (timeout, 5xx): the order is followed all the same. */
    ambiguous: z.boolean(),
  }),
  /** The supplier refused the Cancel (e.g. 400): the order stays confirmed. */
  z.object({ kind: z.literal('cancel-refused'), quote: CancelFeeQuote, errorType: z.string(), reason: z.string() }),
]);
export type CancelBookingAnswer = z.infer<typeof CancelBookingAnswer>;

/** A cancellation in progress or done. */
export const CancellationRecord = z.object({
  requestedAt: z.string(),
  reason: z.string(),
  requestedBy: z.string().optional(),
  /** `caller`: the cancelBooking update; `auto`: onCancelAfterBook; `reconciliation`: an orphan, by the sweep. */
  origin: z.enum(['caller', 'auto', 'reconciliation']),
  quote: CancelFeeQuote,
  /**
   * What was accepted, checked again before every send and re-send: a fee (at most this much, in its currency;
   * null: an unknown fee was accepted), `free` (cancel-if-free), or `any` (onCancelAfterBook `cancel`).
   */
  accepted: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('fee'), fee: Money.nullable() }),
    z.object({ kind: z.literal('free') }),
    z.object({ kind: z.literal('any') }),
  ]),
  serviceFee: Money.optional(),
  cancelAttempts: z.array(
    z.object({
      at: z.string(),
      /**
       * The Cancel rule's value (src/runtime/rules/cancel.ts). `rejected`: refused in words that prove this send
       * did nothing; `refused`: never reached the supplier (429, connection refused); `ambiguous`: may have acted.
       */
      result: z.enum(['accepted', 'refused', 'rejected', 'ambiguous', 'not-sent']),
      error: z.string().optional(),
      /** The fee quoted just before this send (every send is re-quoted). */
      quote: CancelFeeQuote.optional(),
    }),
  ),
  polls: z.array(PollRecord),
  nextPollAt: z.string().optional(),
  deadlineAt: z.string().optional(),
  /**
   * Read when this run's first Cancel was refused: whether an earlier run of the order sent a Cancel that may have
   * acted and never saw it settle (`may-have-acted`: the refusal is then no proof, and the order is followed), or
   * whether that could not be found out (`unknown`: not every earlier run could be read; the refusal is then no proof
   * either, and the order is followed with QueryOrders).
   */
  earlierSends: z.enum(['none', 'may-have-acted', 'unknown']).optional(),
});
export type CancellationRecord = z.infer<typeof CancellationRecord>;

/**
 * How an order workflow run ends: its result. A run is started for one piece of work (a cancellation, a quote, a
 * check) and ends when it is done; a later request starts a new run under the same id.
 */
export const OrderOutcome = z.discriminatedUnion('kind', [
  /** Cancelled (status Cancelled), by us or by the supplier. */
  z.object({ kind: z.literal('cancelled'), order: OrderSummary, cancellation: CancellationRecord.optional() }),
  /** The supplier ended the cancellation in CancelFailed: the order stands; a person follows up. */
  z.object({ kind: z.literal('cancel-failed'), order: OrderSummary, cancellation: CancellationRecord }),
  /** No final status by the cancellation's deadline (or the run was cancelled mid-way): a person follows up. */
  z.object({
    kind: z.literal('cancel-unresolved'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    /** Set when an operator cancelled the run (Web UI "Request cancellation") before the order settled. */
    interrupted: z.boolean().optional(),
  }),
  /** Only a quote was asked for: nothing was sent. */
  z.object({ kind: z.literal('quoted'), order: OrderSummary, quote: CancelFeeQuote }),
  /** The supplier refused the Cancel in words that prove nothing was done: the order stays confirmed. */
  z.object({
    kind: z.literal('cancel-refused'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    errorType: z.string(),
    reason: z.string(),
  }),
  /**
   * Before a send or re-send the fee was above what was accepted (or no longer free): nothing more was sent and a
   * person decides. `feeNow` is the fee that applied then; the accepted one is `cancellation.accepted`.
   */
  z.object({
    kind: z.literal('cancel-stopped'),
    order: OrderSummary,
    cancellation: CancellationRecord,
    feeNow: Money.nullable(),
    reason: z.string(),
  }),
  /** A check (a supplier callback for a reference no workflow followed) found the order as we reported it. */
  z.object({ kind: z.literal('checked'), order: OrderSummary }),
  /**
   * A check, or a cancel request, found that the supplier changed a booking we reported confirmed (cancelled it,
   * failed it) or that the order disagrees with its booking: ERROR line, metric, a person follows up.
   */
  z.object({ kind: z.literal('changed-by-supplier'), order: OrderSummary.optional(), reason: z.string() }),
  /** A cancellation or check was asked for a reference the supplier has no order for, or one not confirmed. */
  z.object({ kind: z.literal('not-cancellable'), order: OrderSummary.optional(), reason: z.string() }),
  /**
   * A cancellation the system asked for (`autoCancel`: onCancelAfterBook, the sweep's orphans) could not be done:
   * the supplier refused its Cancel, or the order was not cancellable (not listed, pending, CancelFailed) by the
   * deadline. Nobody else is waiting for it, so a person is told: ERROR line, metric, console item.
   */
  z.object({
    kind: z.literal('cancel-not-done'),
    origin: z.enum(['auto', 'reconciliation']),
    order: OrderSummary.optional(),
    cancellation: CancellationRecord.optional(),
    reason: z.string(),
  }),
]);
export type OrderOutcome = z.infer<typeof OrderOutcome>;

export const OrderState = z.object({
  stage: z.enum(OrderStages),
  customerReferenceNo: z.string(),
  /** The supplier account the order is on, as its booking chose it (absent: a single-account worker). */
  supplier: z.string().optional(),
  /** The order as last read; absent until the run's first QueryOrders answered. */
  order: OrderSummary.optional(),
  cancellation: CancellationRecord.optional(),
  outcome: OrderOutcome.optional(),
});
export type OrderState = z.infer<typeof OrderState>;

/**
 * The order workflow's input: a reference, and how a cancellation is sent and followed. What to do arrives with the
 * start: a caller's cancelBooking update, or a signal only the system sends (`autoCancel`, `checkOrder`); the order
 * is read fresh with QueryOrders. A cancellation followed over continue-as-new travels beside it (internal `carry`).
 */
export const OrderWorkflowInput = z.object({
  customerReferenceNo: z.string(),
  /** The Session-Id Cancel sends; derived from the reference when absent. */
  sessionId: z.string().optional(),
  context: RequestContext.optional(),
  /** The recovery policy a cancellation follows the order with; defaults when absent. */
  recovery: RecoveryPolicy.partial().optional(),
});
export type OrderWorkflowInput = z.infer<typeof OrderWorkflowInput>;

/**
 * A check of the order now: the callback receiver's, for a supplier callback no open workflow took, or an operator's
 * (the console's "check again"). The `checkOrder` signal by signal-with-start, from those two only: what it says
 * (that a final status settles an unresolved booking) is not for a caller's start to claim.
 */
export const OrderCheck = z.object({
  reason: z.string(),
  /** The status the callback claimed: a hint, never trusted. */
  reportedStatus: z.number().int().optional(),
  /**
   * Asked by an operator for a booking that ended `unresolved` (the console's "check again"): an order in a final
   * status (confirmed, failed, cancelled) settles what the booking could not find out, and the run ends `checked`
   * with it; a pending order, or none, is still for a person. Honoured only on the operators' own signal
   * (`operatorCheckOrder`), never on the receiver's `checkOrder`.
   */
  resolvesUnresolved: z.boolean().optional(),
});
export type OrderCheck = z.infer<typeof OrderCheck>;

/**
 * A cancellation the system asks for, with no caller waiting: onCancelAfterBook (`auto`) or an orphan the sweep
 * cancels (`reconciliation`). Workers deliver it with the `autoCancel` signal by signal-with-start, so it reaches
 * the run already open for the reference (which takes it after the work in hand) or starts one; it is never an
 * input a caller's start could carry.
 */
export const AutoCancel = z.object({
  reason: z.string(),
  onlyIfFree: z.boolean(),
  origin: z.enum(['auto', 'reconciliation']),
  /** The most it may cost (the sweep's orphan fee ceiling); absent: any fee (onlyIfFree aside). */
  maxFee: Money.optional(),
});
export type AutoCancel = z.infer<typeof AutoCancel>;

/**
 * An operator's note that an item needing a person was handled (the console's "mark handled"): recorded as an
 * operatorNoteWorkflow run of its own, which ends at once with its input, so the note is in a history like
 * everything else, and the item leaves the console's list. Its id names the item: noteWorkflowId(item).
 */
export const OperatorNote = z.object({
  /** The item: the workflow (and run) that asked for a person, and the reference it concerns. */
  item: z.object({
    workflowId: z.string().min(1),
    runId: z.string().min(1),
    customerReferenceNo: z.string().optional(),
  }),
  note: z.string().min(1).max(2000),
  /** Who handled it, as the console knows them (free text: the console trusts its access rule, not this). */
  by: z.string().min(1).max(200),
});
export type OperatorNote = z.infer<typeof OperatorNote>;
