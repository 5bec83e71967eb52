/**
 * One run of bookingWorkflow: the booking's state (what the `bookingState` query answers), what the steps
 * share, and how the run reports itself: the `BookingStage` search attribute and the Web UI's details.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { log, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { BookingActivities } from '../../activities/types';
import { BookingStageKey, CustomerReferenceNoKey } from '../../api/contract/definitions';
import type {
  BookingOutcome,
  BookingRequest,
  BookingStage,
  BookingState,
  ParsedBookingRequest,
  PriceApproval,
  RecoveryPolicy,
} from '../../api/contract/index';
import type { Money } from '../../api/values/index';
import { countOutcome, countStageEntered } from '../counters';
import { whose } from '../whose';

export interface RunSetup {
  queryOrder: BookingActivities['queryOrder'];
  resumed: boolean;
}

/**
 * One run of the booking: its state and what its steps share, and the few things a step does to the run itself
 * (enter a stage, end with an outcome). The steps (availability.ts, book.ts, recovery.ts) take it and call these.
 */
export class BookingRun {
  /** The headers every supplier call of this booking sends. */
  readonly context: ParsedBookingRequest['context'] & { sessionId: string; traceId: string };
  readonly traceId: string;
  /**
   * What this run knows the booking's search attributes hold: the stage it last upserted (a new run: the starting
   * stage, which the start carries), and whether it has upserted the reference. Its own record, so a replay on any
   * worker sends the very same upserts.
   */
  private shown: { stage?: string; reference: boolean };
  /** Stages this booking has been counted entering (booking_stage_entered counts each once per booking). */
  private readonly enteredStages: Set<BookingStage>;
  readonly queryOrder: BookingActivities['queryOrder'];
  /** Supplier hints received (the `supplierOrderUpdate` signal); each one triggers a verifying poll. */
  hints = 0;
  /** Hints the recovery has acted on (src/workflows/follow.ts). */
  hintsSeen = 0;
  /** The price a person is asked to approve, while one is. */
  pendingPrice?: Money;
  /** The answer to that question, once given. */
  approval?: PriceApproval;
  /** Why the booking ends `unresolved` when it is not the recovery deadline: the ERROR line a person reads. */
  unresolvedBecause?: string;

  constructor(
    /** Mutated in place: the query handler holds this very object. */
    readonly state: BookingState,
    readonly request: ParsedBookingRequest,
    readonly recovery: RecoveryPolicy,
    { queryOrder, resumed }: RunSetup,
  ) {
    this.traceId = workflowInfo().workflowId;
    // One derivation of the session id (startingState), carried over continue-as-new in the state.
    this.context = { ...request.context, sessionId: state.sessionId, traceId: this.traceId };
    this.queryOrder = queryOrder;
    // A resumed run (continue-as-new) is in recovery, its earlier stages counted by the run before it.
    this.enteredStages = new Set<BookingStage>(resumed ? STAGES_BEFORE_RESUME : []);
    // A resumed run does not know what its predecessor's attributes were carried as: its first upsert sets both.
    this.shown = resumed ? { reference: false } : { stage: 'checking-availability', reference: false };
  }

  setStage(stage: BookingStage, details?: string): void {
    // Once per booking, so a Book re-sent from recovery does not count the booking into recovery twice.
    if (!this.enteredStages.has(stage)) {
      this.enteredStages.add(stage);
      countStageEntered(stage, this.state.supplier);
    }
    this.state.stage = stage;
    this.setSearchAttributes(stage);
    setCurrentDetails(details ?? describe(this.state));
  }

  /** Still unknown: someone must follow up with these references, the attempts and the poll log. */
  unresolved(): BookingOutcome {
    const { state } = this;
    return {
      kind: 'unresolved',
      customerReferenceNo: state.customerReferenceNo,
      sessionId: state.sessionId,
      lastStatus: state.order?.status,
      bookAttempts: state.bookAttempts,
      polls: state.polls,
      cancelRequested: state.cancelRequested,
    };
  }

  /** Records the outcome; an `unresolved` one is also an ERROR line, so a person is told. */
  finish(outcome: BookingOutcome): BookingOutcome {
    const { state } = this;
    countOutcome(outcome.kind, state.stage, state.supplier);
    state.outcome = outcome;
    state.nextPollAt = undefined;
    state.stage = 'completed';
    // The outcome kind, not just "completed", so operators can filter for `unresolved` bookings.
    this.setSearchAttributes(outcome.kind);
    setCurrentDetails(`Outcome: ${outcome.kind}. ${describe(state)}`);
    if (outcome.kind === 'unresolved') {
      log.error(this.unresolvedBecause ?? 'Booking unresolved at the recovery deadline: needs manual follow-up', {
        customerReferenceNo: state.customerReferenceNo,
        bookingStage: outcome.kind,
        ...whose(state.supplier),
      });
    }
    return outcome;
  }

  /**
   * The stage and the reference as search attributes: a stage only when it differs from the one the run last set
   * (the starting stage is the start's), and the reference with the run's first upsert; so a booking costs two
   * upserts (booking, outcome), each an event and a visibility write. Decided from the run's own record, never from
   * workflowInfo().searchAttributes: that map is how the server presents the start, and a frontend node just
   * restarted can present it under other names, so a replay on another worker would send another count of upserts
   * (a nondeterminism error). A booking started without attributes (another language, the CLI) shows none while it
   * checks availability: nothing is booked yet, and its first upsert sets both.
   */
  private setSearchAttributes(stage: string): void {
    if (this.shown.stage === stage) return;
    const pairs: SearchAttributeUpdatePair[] = [{ key: BookingStageKey, value: stage }];
    if (!this.shown.reference) pairs.push({ key: CustomerReferenceNoKey, value: this.state.customerReferenceNo });
    upsertSearchAttributes(pairs);
    this.shown = { stage, reference: true };
  }
}

const STAGES_BEFORE_RESUME: BookingStage[] = [
  'checking-availability',
  'awaiting-price-approval',
  'booking',
  'recovering',
];

/** The state before anything happened; from the raw input until it is checked, then from the request. */
export function startingState(request: Partial<BookingRequest>): BookingState {
  const customerReferenceNo = String(request.customerReferenceNo ?? '');
  return {
    stage: 'checking-availability',
    customerReferenceNo,
    sessionId: request.sessionId ?? `sess-${customerReferenceNo}`,
    ratePkgId: String(request.ratePkgId ?? ''),
    ...(request.expectedPrice ? { expectedPrice: request.expectedPrice } : {}),
    bookAttempts: [],
    polls: [],
    cancelRequested: false,
  };
}

/** The view an operator sees in the Web UI ("current details", rendered as Markdown). No personal data. */
export function describe(s: BookingState): string {
  const lastPoll = s.polls[s.polls.length - 1];
  return [
    `Stage: ${s.stage}`,
    `Reference: ${s.customerReferenceNo}`,
    `Rate package: ${s.ratePkgId}`,
    s.acceptedPrice ? `Price: ${fmt(s.acceptedPrice)}` : undefined,
    `Book attempts: ${s.bookAttempts.length}`,
    s.polls.length ? `Polls: ${s.polls.length}` : undefined,
    lastPoll
      ? `Last poll: ${lastPoll.at} → ${lastPoll.result}${lastPoll.status !== undefined ? ` (status ${lastPoll.status})` : ''}`
      : undefined,
    s.nextPollAt ? `Next poll: ${s.nextPollAt}` : undefined,
    s.nextBookAt ? `Book refused before any work; next Book at: ${s.nextBookAt}` : undefined,
    s.deadlineAt ? `Gives up at: ${s.deadlineAt}` : undefined,
    s.cancelRequested ? 'Cancel requested: the booking is still being resolved' : undefined,
  ]
    .filter(Boolean)
    .map((line) => `- ${line}`)
    .join('\n');
}

export function fmt(m: Money | undefined): string {
  return m ? `${m.amount} ${m.currency}` : 'unknown';
}
