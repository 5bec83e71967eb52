/**
 * bookingWorkflow, the story: check the input, check availability and price, Book, and when Book's
 * outcome is unknown, find it out with QueryOrders until the order is confirmed or failed, or tell a
 * person (`unresolved`). Each step is a file beside this one:
 *  - input.ts          the request, checked once per run (with the first CheckAvail, one local activity), and
 *                      what a resumed run carries
 *  - availability.ts   CheckAvail and the price rule, with a person's approval when the policy asks for it
 *  - book.ts           Book with the caller's reference, as the Book rule's value
 *  - recovery.ts       the durable QueryOrders schedule, Book sent again only where safe, the deadline
 *  - run.ts            the state the `bookingState` query answers, the search attribute, the UI details
 *  - messages.ts       the price approval update, supplier hints, a cancel request
 *  - hand-off.ts       a booking its caller cancelled after Book, and then confirmed, has its order cancelled
 *  - proxies.ts        how the activities are called, each with the options its role needs
 * Until Book is sent, a cancel ends the booking as `cancelled`; from then on it is noted, not obeyed:
 * money may be at stake, so the order's fate is still found out and reported.
 */
import { CancellationScope, setCurrentDetails, setHandler, setWorkflowOptions, upsertMemo } from '@temporalio/workflow';
import { pinnedWhenVersioned } from '../versioning';
import { bookingStateQuery } from '../../api/contract/messages';
import type { BookingOutcome, BookingState } from '../../api/contract/index';
import { queryOrderActivity } from './proxies';
import { checkAvailabilityAndPrice } from './availability';
import { decideAfterBook, sendBook } from './book';
import { handOffOrder } from './hand-off';
import { checkInput, type BookingWorkflowInput } from './input';
import { listen } from './messages';
import { recover } from './recovery';
import { BookingRun, describe, startingState } from './run';

export type { BookingWorkflowInput } from './input';

/**
 * PINNED: a run finishes on the build it started on, and its continue-as-new runs stay there too. A booking may
 * poll for days; moving it to a new build mid-recovery would replay its history on code that may send other
 * commands, and a Book already sent cannot be taken back. A build is kept until its bookings are done
 * (docs/operations.md, "Deploying a new build"); a fix that must reach running bookings still needs `patched()`.
 */
setWorkflowOptions(pinnedWhenVersioned, bookingWorkflow);

export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingOutcome> {
  // The query answers from the first moment, while the input check (a local activity) is running:
  // clients such as `npm run book` ask for progress right after the start.
  const live = { state: input?.resume?.state ?? startingState(input ?? {}) };
  setHandler(bookingStateQuery, () => live.state);
  // A resumed run takes its request as its first run checked it (no activity, so no cancel can interrupt it).
  const { request, recovery, firstCheck, supplier } = await checkInput(input);
  if (!input.resume) live.state = startingState(request);
  if (supplier) onAccount(live.state, supplier);
  const run = new BookingRun(live.state, request, recovery, {
    queryOrder: queryOrderActivity(live.state.supplier),
    resumed: !!input.resume,
  });
  listen(run);

  if (input.resume) {
    const resume = input.resume;
    setCurrentDetails(describe(run.state));
    const resolved = await CancellationScope.nonCancellable(() => recover(run, resume, input));
    return run.finish(await handOffOrder(run, resolved));
  }

  const availability = await checkAvailabilityAndPrice(run, firstCheck);
  if (availability.kind === 'ended') return run.finish(availability.outcome);
  if (run.state.cancelRequested) return run.finish({ kind: 'cancelled' });

  const resolved = await CancellationScope.nonCancellable(() => bookAndResolve(run, input));
  return run.finish(await handOffOrder(run, resolved));
}

/**
 * The supplier account the first step chose: in the state (the query, what a continued run carries) and in the memo,
 * where an order run (`order:<ref>`) reads which account its Cancel and QueryOrders go to.
 */
function onAccount(state: BookingState, supplier: string): void {
  state.supplier = supplier;
  upsertMemo({ supplier });
}

/** Book, then, unless its answer decides, recovery from the moment it ended; the deadline runs from the first Book. */
async function bookAndResolve(run: BookingRun, input: BookingWorkflowInput): Promise<BookingOutcome> {
  const firstBookMs = Date.now();
  const decided = decideAfterBook(run, await sendBook(run));
  if (decided) return decided;
  return recover(
    run,
    {
      anchorMs: Date.now(),
      nextIndex: 0,
      deadlineMs: firstBookMs + run.recovery.deadlineSeconds * 1000,
    },
    input,
  );
}
