/**
 * Step 2, not cancellable (Book may reach the supplier): Book with the caller's reference, as the Book
 * rule's value (src/runtime/rules/book.ts), and what an answer decides on its own.
 */
import { ActivityFailure, ApplicationFailure, log, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { BookOutcome, OrderView } from '../../activities/types';
import type { BookAttempt, BookingOutcome } from '../../api/contract/index';
import { bookActivity } from './proxies';
import { neverStarted } from '../failure';
import { countBookAttempt, countConfirmedAboveAccepted } from '../counters';
import { whose } from '../whose';
import { confirmedAboveAccepted } from '../../runtime/rules/price';
import { describe, type BookingRun } from './run';

/** Book refused before any work (429, connection refused) is sent again for at most this long. */
const BOOK_RETRY_WINDOW_MS = 10 * 60_000;

/**
 * Sends Book. With `retryRefused` (the first Book) a refusal before any work (the Book rule's `refused`) is
 * sent again for up to 10 minutes of waits, then ends as `rejected`: no send under this reference ever got past the
 * supplier's door, so nothing can exist. A re-send is one send: its refusal is returned as it is. The window is
 * counted in the waits the workflow asked for (recorded as its timers), not read from the clock: whether to send
 * again or end is the same in every replay, whatever time a task runs at.
 */
export async function sendBook(run: BookingRun, { retryRefused = true } = {}): Promise<BookOutcome> {
  run.setStage('booking');
  let waitedMs = 0;
  for (let wait = 1_000; ; wait = Math.min(wait * 2, 60_000)) {
    const at = new Date().toISOString();
    const outcome = await bookOnce(run);
    countBookAttempt(outcome.kind, run.state.supplier);
    if (outcome.kind === 'refused') {
      if (!retryRefused) {
        run.state.bookAttempts.push(attemptRecord(at, outcome));
        return outcome;
      }
      if (waitedMs >= BOOK_RETRY_WINDOW_MS) {
        run.state.bookAttempts.push(attemptRecord(at, outcome));
        return {
          kind: 'rejected',
          errorType: outcome.errorType,
          message: `Book refused for ${BOOK_RETRY_WINDOW_MS / 60_000} minutes`,
        };
      }
      // The supplier's hint (already cut to the profile's ceiling), never past the window refusals are retried in:
      // the last send then comes at the window's end.
      const pause = Math.max(Math.min(outcome.retryAfterMs ?? wait, BOOK_RETRY_WINDOW_MS - waitedMs), 1);
      waitedMs += pause;
      // The wait shows in the booking's state (the query, the CLI, the console) and the Web UI's details.
      run.state.nextBookAt = new Date(Date.now() + pause).toISOString();
      setCurrentDetails(describe(run.state));
      await sleep(pause, { summary: `Book refused (${outcome.errorType}); retrying` });
      run.state.nextBookAt = undefined;
      continue;
    }
    run.state.bookAttempts.push(attemptRecord(at, outcome));
    return outcome;
  }
}

/** One Book, its ending as the Book rule's value. */
async function bookOnce(run: BookingRun): Promise<BookOutcome> {
  const { request } = run;
  try {
    return await bookActivity(run.state.supplier)({
      customerReferenceNo: request.customerReferenceNo,
      ratePkgId: request.ratePkgId,
      holder: request.holder,
      guests: request.guests,
      context: run.context,
    });
  } catch (err) {
    // No worker started it (its account on no worker, a backlog): nothing was sent, so it is refused before any work.
    if (neverStarted(err)) {
      return {
        kind: 'refused',
        errorType: 'BookNotStarted',
        message: 'Book was not started in time (no worker took it)',
      };
    }
    // The activity itself failed or timed out (the worker died mid-call): the supplier may have acted. Refusals
    // and rejections come back as values (the Book rule), so nothing thrown is ever read as one.
    const cause = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : undefined;
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'ambiguous', errorType: cause?.type ?? 'ActivityFailure', message };
  }
}

/**
 * A final outcome from the first Book's answer, or undefined when the order must be looked up. `rejected`
 * is final only here: the first send is the only one that could have made an order. A re-send's answer is
 * read by recovery.ts (bookAgain).
 */
export function decideAfterBook(run: BookingRun, result: BookOutcome): BookingOutcome | undefined {
  if (result.kind === 'rejected') {
    return {
      kind: 'failed',
      reason: result.message,
      errorType: result.errorType,
      cancelRequested: run.state.cancelRequested,
    };
  }
  if (result.kind === 'order') return decideOnOrder(run, result.order);
  return undefined;
}

/** A final outcome from the order's state, or undefined while it is pending. */
export function decideOnOrder(run: BookingRun, order: OrderView): BookingOutcome | undefined {
  const { state } = run;
  state.order = summaryOf(order);
  if (order.state === 'confirmed') {
    reportPriceAboveAccepted(run, order);
    return { kind: 'confirmed', order: summaryOf(order), cancelRequested: state.cancelRequested };
  }
  // Nobody asked to cancel this order, so CancelFailed means the supplier's rollback failed: it may stand and be
  // charged. Not failed: a person must look.
  if (order.state === 'cancel-failed') {
    run.unresolvedBecause =
      'Booking unresolved: its order is CancelFailed (the supplier could not roll it back, so it may stand): needs manual follow-up';
    return run.unresolved();
  }
  // A booking reads every other ending as failed: Cancelled (rolled back) before it was ever confirmed.
  if (order.state === 'failed' || order.state === 'cancelled') {
    return {
      kind: 'failed',
      reason: order.statusRemark ?? `Order ended in status ${order.status}`,
      order: summaryOf(order),
      cancelRequested: state.cancelRequested,
    };
  }
  return undefined;
}

/**
 * A confirmed order is the booking, whatever its price; but a price above what was accepted may be charged to the
 * guest, so a person is told: an ERROR line, the metric, and the ConfirmedAboveAccepted alert.
 */
function reportPriceAboveAccepted(run: BookingRun, order: OrderView): void {
  const accepted = run.state.acceptedPrice;
  if (confirmedAboveAccepted(accepted, order.price, run.request.priceChangePolicy) !== true) return;
  countConfirmedAboveAccepted(run.state.supplier);
  log.error('Booking confirmed at a price above the one accepted: a person checks the charge', {
    customerReferenceNo: run.state.customerReferenceNo,
    acceptedPrice: accepted,
    confirmedPrice: order.price,
    ...whose(run.state.supplier),
  });
}

function summaryOf(order: OrderView) {
  const { state: _state, ...summary } = order;
  return summary;
}

function attemptRecord(at: string, outcome: BookOutcome): BookAttempt {
  if (outcome.kind === 'order') return { at, result: 'order', status: outcome.order.status };
  return { at, result: outcome.kind, error: outcome.errorType };
}
