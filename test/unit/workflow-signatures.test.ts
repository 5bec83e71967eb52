/**
 * The contract's workflow signatures (BookingWorkflow, OrderWorkflow, OperatorNoteWorkflow), which callers type their
 * handles with, match the workflows the worker runs: each workflow takes what its signature sends and returns what
 * its signature promises. A compile-time check: the file does not type-check when they drift apart.
 */
import type { BookingWorkflow, OperatorNoteWorkflow, OrderWorkflow } from '../../src/api/contract/index';
import type { bookingWorkflow, operatorNoteWorkflow, orderWorkflow } from '../../src/workflows';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The workflow accepts every input its signature sends. */
type Accepts<W extends (...args: never[]) => unknown, S extends (...args: never[]) => unknown> =
  Parameters<S> extends Parameters<W> ? true : false;

const checks: {
  bookingInput: Accepts<typeof bookingWorkflow, BookingWorkflow>;
  bookingResult: Same<ReturnType<typeof bookingWorkflow>, ReturnType<BookingWorkflow>>;
  orderInput: Accepts<typeof orderWorkflow, OrderWorkflow>;
  orderResult: Same<ReturnType<typeof orderWorkflow>, ReturnType<OrderWorkflow>>;
  noteInput: Accepts<typeof operatorNoteWorkflow, OperatorNoteWorkflow>;
  noteResult: Same<ReturnType<typeof operatorNoteWorkflow>, ReturnType<OperatorNoteWorkflow>>;
} = { bookingInput: true, bookingResult: true, orderInput: true, orderResult: true, noteInput: true, noteResult: true };

test('every workflow matches the signature callers type it with', () => {
  expect(Object.values(checks).every(Boolean)).toBe(true);
});
