/**
 * Reference workflows for the benchmarks, with none of the booking workflow's own work (no zod,
 * no search attributes, no details, no recovery): what Temporal itself costs for the same shape.
 *
 * `floorBooking` makes the booking's two supplier calls as two activities, so it has the same
 * workflow tasks and activities as a booking that confirms at once; `floorParked` sleeps on a timer
 * like a parked booking, after one activity. Workflow code: imports only the workflow SDK and types.
 */
import { proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { FloorActivities, FloorInput } from './floor';

const { floorCheckAvail, floorBook } = proxyActivities<FloorActivities>({ startToCloseTimeout: '30 seconds' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '30 seconds' });

export async function floorBooking(input: FloorInput): Promise<number> {
  await floorCheckAvail(input);
  return floorBook(input);
}

/** The booking's shape since its fewer-tasks patch: CheckAvail local, Book an activity (two workflow tasks). */
export async function floorBookingLocalCheck(input: FloorInput): Promise<number> {
  await local.floorCheckAvail(input);
  return floorBook(input);
}

/** Both calls as local activities: one workflow task, the shape the booking would have with Book local too. */
export async function floorBookingAllLocal(input: FloorInput): Promise<number> {
  await local.floorCheckAvail(input);
  return local.floorBook(input);
}

/** One CheckAvail (so the benchmark can tell it ran), then a one-hour timer. */
export async function floorParked(input: FloorInput): Promise<void> {
  await floorCheckAvail(input);
  await sleep('1 hour');
}

/** The booking's whole shape: as floorBookingLocalCheck, then a local activity that starts a waiting workflow. */
export async function floorBookingHandOff(input: FloorInput): Promise<number> {
  await local.floorCheckAvail(input);
  const status = await floorBook(input);
  await local.floorStartOrder(input);
  return status;
}

/** The order workflow's floor: one timer, as an order waits for check-in. */
export async function floorOrder(): Promise<void> {
  await sleep('1 hour');
}
