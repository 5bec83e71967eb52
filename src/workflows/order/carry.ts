/**
 * What an order run's work holds and hands over: a cancellation's plan, where its follow-up or an automatic
 * cancellation's wait stands, and what a run carries over continue-as-new. Types only, so the steps that use them
 * (cancel.ts, auto-cancel.ts, work.ts) and the workflow that runs them (index.ts) import one module below them all.
 */
import type {
  AutoCancel,
  CancellationRecord,
  OrderOutcome,
  OrderState,
  OrderWorkflowInput,
  PollRecord,
} from '../../api/contract/index';
import type { AcceptedFee } from '../../runtime/rules/cancel-fee';

export interface CancelPlan {
  reason: string;
  requestedBy?: string;
  origin: CancellationRecord['origin'];
  accepted: AcceptedFee;
}

/** Where a cancellation's follow-up stands; carried over continue-as-new. */
export interface FollowState {
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
  /** Whether the last send that reached the supplier ended unclear (then it may be sent again). */
  ambiguous: boolean;
}

/** Where an automatic cancellation's wait for its order stands; carried over continue-as-new. */
export interface WaitState {
  anchorMs: number;
  /** The next read's place on the recovery schedule (0: at once). */
  nextIndex: number;
  deadlineMs: number;
  /** The wait's reads, for the spacing of hint-triggered ones (absent in a wait carried by an older run). */
  reads?: PollRecord[];
}

/** What a run hands over continue-as-new (internal): the order's state and the cancellation it follows or awaits. */
export interface OrderCarry {
  state: OrderState;
  /** The system asked for the cancellation (run.autoAsked). */
  autoAsked?: AutoCancel['origin'];
  /** A cancellation sent, being followed to its end. */
  cancel?: { plan: CancelPlan; follow: FollowState };
  /** An automatic cancellation waiting for its order to be cancellable. */
  wait?: { auto: AutoCancel; from: WaitState };
  /** The outcome the run had reached (a check's changed-by-supplier, say): the new run's weighs against it. */
  outcome?: OrderOutcome;
}

/** The input, and what a run carries over continue-as-new. */
export type OrderWorkflowArgs = OrderWorkflowInput & { carry?: OrderCarry };
