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

export interface BookingRun {
  /** Mutated in place: the query handler holds this very object. */
  state: BookingState;
  request: ParsedBookingRequest;
  recovery: RecoveryPolicy;
  /** The headers every supplier call of this booking sends. */
  context: ParsedBookingRequest['context'] & { sessionId: string; traceId: string };
  traceId: string;
  queryOrder: BookingActivities['queryOrder'];
  /**
   * What this run knows the booking's search attributes hold: the stage it last upserted (a new run: the starting
   * stage, which the start carries), and whether it has upserted the reference. Its own record, so a replay on any
   * worker sends the very same upserts.
   */
  shown: { stage?: string; reference: boolean };
  /** Supplier hints received (the `supplierOrderUpdate` signal); each one triggers a verifying poll. */
  hints: number;
  /** Hints the recovery has acted on (src/workflows/follow.ts). */
  hintsSeen: number;
  /** The price a person is asked to approve, while one is. */
  pendingPrice?: Money;
  /** The answer to that question, once given. */
  approval?: PriceApproval;
  /** Stages this booking has been counted entering (booking_stage_entered counts each once per booking). */
  enteredStages: Set<BookingStage>;
  /** Why the booking ends `unresolved` when it is not the recovery deadline: the ERROR line a person reads. */
  unresolvedBecause?: string;
}

export interface RunSetup {
  queryOrder: BookingActivities['queryOrder'];
  resumed: boolean;
}

export function newRun(
  state: BookingState,
  request: ParsedBookingRequest,
  recovery: RecoveryPolicy,
  { queryOrder, resumed }: RunSetup,
): BookingRun {
  const traceId = workflowInfo().workflowId;
  // One derivation of the session id (startingState), carried over continue-as-new in the state.
  const context = { ...request.context, sessionId: state.sessionId, traceId };
  // A resumed run (continue-as-new) is in recovery, its earlier stages counted by the run before it.
  const enteredStages = new Set<BookingStage>(resumed ? STAGES_BEFORE_RESUME : []);
  return {
    state,
    request,
    recovery,
    context,
    traceId,
    queryOrder,
    // A resumed run does not know what its predecessor's attributes were carried as: its first upsert sets both.
    shown: resumed ? { reference: false } : { stage: 'checking-availability', reference: false },
    hints: 0,
    hintsSeen: 0,
    enteredStages,
  };
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

export function setStage(run: BookingRun, stage: BookingStage, details?: string): void {
  // Once per booking, so a Book re-sent from recovery does not count the booking into recovery twice.
  if (!run.enteredStages.has(stage)) {
    run.enteredStages.add(stage);
    countStageEntered(stage);
  }
  run.state.stage = stage;
  setSearchAttributes(run, stage);
  setCurrentDetails(details ?? describe(run.state));
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
function setSearchAttributes(run: BookingRun, stage: string): void {
  if (run.shown.stage === stage) return;
  const pairs: SearchAttributeUpdatePair[] = [{ key: BookingStageKey, value: stage }];
  if (!run.shown.reference) pairs.push({ key: CustomerReferenceNoKey, value: run.state.customerReferenceNo });
  upsertSearchAttributes(pairs);
  run.shown = { stage, reference: true };
}

/** Still unknown: someone must follow up with these references, the attempts and the poll log. */
export function unresolvedOutcome(run: BookingRun): BookingOutcome {
  const { state } = run;
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
export function finish(run: BookingRun, outcome: BookingOutcome): BookingOutcome {
  const { state } = run;
  countOutcome(outcome.kind, state.stage);
  state.outcome = outcome;
  state.nextPollAt = undefined;
  state.stage = 'completed';
  // The outcome kind, not just "completed", so operators can filter for `unresolved` bookings.
  setSearchAttributes(run, outcome.kind);
  setCurrentDetails(`Outcome: ${outcome.kind}. ${describe(state)}`);
  if (outcome.kind === 'unresolved') {
    log.error(run.unresolvedBecause ?? 'Booking unresolved at the recovery deadline: needs manual follow-up', {
      customerReferenceNo: state.customerReferenceNo,
      bookingStage: outcome.kind,
    });
  }
  return outcome;
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
