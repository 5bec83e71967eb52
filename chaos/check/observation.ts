/**
 * What the chaos run observed of each booking (its ending, and its cancellation when one was planned), the
 * supplier profile's order statuses the checks read, and the labels the tables use.
 */
import type { BookingOutcome, BookingOutcomeKind, CancelFeeQuote } from '../../src/api/contract/index';
import type { Money } from '../../src/api/values/index';
import { type AnyCancelKind, type PlannedBooking } from '../mix';

/** Order statuses of the supplier profile (src/runtime/config/supplier-profile.ts defaults, which the sandbox uses). */
export const CONFIRMING = 1;
export const CONFIRMED = 2;
export const CANCELLED = 3;
export const FAILED = 4;
export const CANCEL_FAILED = 5;

/** How a booking's workflow ended, as the chaos client saw it after the run. */
export type Ending =
  | { state: 'completed'; outcome: BookingOutcome }
  /** Still running when the run's hard limit came. */
  | { state: 'open'; detail: string }
  /** Failed, terminated, timed out or cancelled instead of returning an outcome. */
  | { state: 'workflow-failed'; detail: string }
  /** Terminated by the run itself once Book had made its order: an orphan made on purpose, not a failure. */
  | { state: 'orphaned'; detail: string }
  /** Started (the server acknowledged it), but the server no longer knows it. */
  | { state: 'lost'; detail: string }
  /** The chaos client never got the start acknowledged. */
  | { state: 'not-started'; detail: string };

export interface Observation {
  booking: PlannedBooking;
  ending: Ending;
  /** The chaos client's cancellation of this booking, when it planned one (class cancelAfterConfirm). */
  cancellation?: CancellationObservation;
}

/**
 * A cancellation on demand as the chaos client made it: the quote, what it accepted and sent, the update's
 * answer and the order run's outcome. `state`: `done` (the run it confirmed in, or the quote's, ended),
 * `skipped` (the booking did not end confirmed: nothing asked), `open` (no ending by the hard limit), `error`.
 */
export interface CancellationObservation {
  customerReferenceNo: string;
  kind: AnyCancelKind;
  expected: string;
  state: 'done' | 'skipped' | 'open' | 'error';
  detail?: string;
  /** The quote (cancelBooking `{confirm: false}`). */
  quote?: CancelFeeQuote;
  /**
   * The fee sent with `{confirm: true}` (recorded before sending); `any`: the booking's own cancel, whose
   * `onCancelAfterBook: 'cancel'` accepts any fee; absent when nothing was asked.
   */
  acceptedFee?: Money | null | 'any';
  confirmSentAt?: string;
  /** `cancel-requested` (ambiguous or not), `cancel-refused`, or `update-failed:<type>`. */
  answer?: string;
  /** `duplicateConfirm`: both confirms' answers, the first sent first. */
  answers?: string[];
  /** Cancelled during recovery: the answer to the caller's cancelBooking through `order:<ref>` (to be refused). */
  callerAnswer?: string;
  /** The order run the caller's refused request started, when another run took the booking's cancellation: its end. */
  callerRunOutcome?: string;
  /** Cancelled during recovery: when the booking's own cancel (a workflow cancellation) was sent. */
  bookingCancelAskedAt?: string;
  /** Cancelled during recovery: the booking's outcome kind, and whether it says a cancel was asked for. */
  bookingOutcome?: string;
  cancelRequested?: boolean;
  /** Cancelled during recovery: other order runs started since (a hand-off delivered twice), their outcome kinds. */
  otherRunOutcomes?: string[];
  /** Who the order run's cancellation says asked for it (`caller`, `auto`, `reconciliation`). */
  origin?: string;
  /** The order run's outcome kind (the run the confirm went to). */
  outcome?: string;
  /** The outcome's reason or fees, for a person reading the report. */
  outcomeDetail?: string;
  /** The window kinds: whether the timing planned could be kept (the booking confirmed in time). */
  windowMissed?: boolean;
  /** Client calls retried (server restart, transport errors). */
  retries: number;
  /** The order runs it started: the quote's, the confirm's (their raw histories are scanned for secrets). */
  runIds?: string[];
}

/** The cancellation's label in tables: the order run's outcome, or its state when there is none. */
export function cancellationKind(c: CancellationObservation): string {
  if (c.state === 'done')
    return (
      c.outcome ??
      (c.bookingOutcome ? `booking ${c.bookingOutcome}` : undefined) ??
      (c.answer ? `answer ${c.answer}` : 'done')
    );
  return c.state;
}

/** An ending's label in tables: the outcome kind, or the state when there is no outcome. */
export function endingKind(ending: Ending): BookingOutcomeKind | Exclude<Ending['state'], 'completed'> {
  return ending.state === 'completed' ? ending.outcome.kind : ending.state;
}
