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
 *  - hand-off.ts       a confirmed booking hands its order to orderWorkflow (cancellation until check-in)
 *  - activities.ts, patches.ts   how the activities are called; the patch ids, with their dates
 * Until Book is sent, a cancel ends the booking as `cancelled`; from then on it is noted, not obeyed:
 * money may be at stake, so the order's fate is still found out and reported.
 */
import {
  CancellationScope,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { bookingStateQuery, CustomerReferenceNoKey } from '../../contract/definitions';
import type { BookingOutcome } from '../../contract';
import { checkAvailActivity, queryOrderActivity } from './activities';
import { checkAvailabilityAndPrice } from './availability';
import { decideAfterBook, sendBook } from './book';
import { handOffOrder } from './hand-off';
import { checkInput, type BookingWorkflowInput } from './input';
import { listen } from './messages';
import { PATCHES } from './patches';
import { recover } from './recovery';
import { describe, finish, newRun, startingState, type BookingRun } from './run';

export type { BookingWorkflowInput } from './input';

export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingOutcome> {
  // The query answers from the first moment, while the input check (a local activity) is running:
  // clients such as `npm run book` ask for progress right after the start.
  const live = { state: input?.resume?.state ?? startingState(input ?? {}) };
  setHandler(bookingStateQuery, () => live.state);
  // First, before any other patch is asked: a new run records this one marker and asks no older patch; a run
  // from before it asks them exactly where it did (see patches.ts).
  const current = patched(PATCHES.current);
  const oneMarker = current || patched(PATCHES.oneMarker);
  // A run with this marker skips the patches before it.
  const fewerTasks = oneMarker || patched(PATCHES.fewerTasks);
  // A run started before this patch keeps handing its order over at confirmation.
  const orderOnDemand = oneMarker || (fewerTasks && patched(PATCHES.orderOnDemand));
  const queryOrder = queryOrderActivity(fewerTasks);

  // A resumed run is past Book: a cancel arriving while its input is re-checked must not end it.
  const paths = { fewerTasks, oneMarker };
  const { request, recovery, firstCheck } = await (input?.resume
    ? CancellationScope.nonCancellable(() => checkInput(input, paths))
    : checkInput(input, paths));
  if (!input.resume) live.state = startingState(request);
  const checkAvail = checkAvailActivity(fewerTasks);
  const run = newRun(live.state, request, recovery, {
    queryOrder,
    checkAvail,
    fewerTasks,
    orderOnDemand,
    oneMarker,
    current,
    resumed: !!input.resume,
  });
  listen(run);
  // Also set here, not only by the client helper, for bookings started from other languages or the CLI;
  // since PATCHES.fewerTasks, by the first stage's upsert (see setSearchAttributes in ./run.ts).
  if (!fewerTasks) upsertSearchAttributes([{ key: CustomerReferenceNoKey, value: request.customerReferenceNo }]);

  if (input.resume) {
    const resume = input.resume;
    setCurrentDetails(describe(run.state));
    const resolved = await CancellationScope.nonCancellable(() => recover(run, resume, input));
    return finish(run, await handOffOrder(run, resolved));
  }

  const availability = await checkAvailabilityAndPrice(run, firstCheck);
  if (availability.kind === 'ended') return finish(run, availability.outcome);
  if (run.state.cancelRequested) return finish(run, { kind: 'cancelled' });

  const resolved = await CancellationScope.nonCancellable(() => bookAndResolve(run, input));
  return finish(run, await handOffOrder(run, resolved));
}

/** Book, then, unless its answer decides, recovery from the moment it ended; the deadline runs from the first Book. */
async function bookAndResolve(run: BookingRun, input: BookingWorkflowInput): Promise<BookingOutcome> {
  const firstBookMs = Date.now();
  const decided = decideAfterBook(run, await sendBook(run));
  if (decided) return decided;
  return recover(
    run,
    {
      state: run.state,
      anchorMs: Date.now(),
      nextIndex: 0,
      deadlineMs: firstBookMs + run.recovery.deadlineSeconds * 1000,
    },
    input,
  );
}
