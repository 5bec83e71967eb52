/**
 * Build B of the deploy drills (the replay gate's test, `npm run chaos -- --deploy`): src/workflows with one step
 * added to the booking and no `patched()` around it. Every booking first waits on a 1 ms timer, a command build A
 * never sends, so no history of A replays on B. With every type pinned that is allowed: A's bookings finish on A,
 * and only B's own run on B. The gate must pass it while nothing unversioned or AUTO_UPGRADE is open, and refuse
 * it when something is. It carries the gate workflow as every build does, so its gate run proves it as a real build's
 * would (without it the gate run passes B only with a warning, its activities unproven).
 */
import { setWorkflowOptions, sleep } from '@temporalio/workflow';
import { pinnedWhenVersioned } from '../../../src/workflows/versioning';
import type { BookingOutcome } from '../../../src/api/contract/index';
import { bookingWorkflow as bookingStory, type BookingWorkflowInput } from '../../../src/workflows/booking/index';

export {
  orderWorkflow,
  reconciliationSweepWorkflow,
  operatorNoteWorkflow,
  deployGateWorkflow,
} from '../../../src/workflows';

setWorkflowOptions(pinnedWhenVersioned, bookingWorkflow);

export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingOutcome> {
  await sleep(1);
  return bookingStory(input);
}
