/**
 * The activities of the reference workflows (bench/floor-workflow.ts): the same supplier calls as a
 * booking, through the same client, returning only the status; and how the benchmarks start them.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { SupplierClient } from '../src/runtime/supplier/interface';
import { guests, holder } from '../test/harness/booking';

export interface FloorInput {
  customerReferenceNo: string;
  ratePkgId: string;
  test: string;
}

export function createFloorActivities(supplier: SupplierClient, client?: Pick<Client, 'workflow'>) {
  const context = (input: FloorInput) => ({
    sessionId: `sess-${input.customerReferenceNo}`,
    traceId: `floor-${input.customerReferenceNo}`,
    test: input.test,
  });
  return {
    async floorCheckAvail(input: FloorInput): Promise<number> {
      return (await supplier.checkAvail({ ratePkgId: input.ratePkgId }, context(input))).status;
    },
    async floorBook(input: FloorInput): Promise<number> {
      const { customerReferenceNo, ratePkgId } = input;
      return (await supplier.book({ customerReferenceNo, ratePkgId, holder, guests }, context(input))).status;
    },
    /** What the booking's order hand-off does, and nothing else: start a workflow that waits (floorOrder). */
    async floorStartOrder(input: FloorInput): Promise<void> {
      if (!client) throw new Error('floorStartOrder needs a client');
      await client.workflow.start('floorOrder', {
        taskQueue: Context.current().info.taskQueue,
        workflowId: `floor-order:${input.customerReferenceNo}`,
        args: [],
        requestEagerStart: true,
      });
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;

export const floorWorkflowId = (customerReferenceNo: string) => `floor:${customerReferenceNo}`;

/** The reference workflows of a booking's shape (bench/floor-workflow.ts). */
export type FloorShape = 'floorBooking' | 'floorBookingLocalCheck' | 'floorBookingAllLocal' | 'floorBookingHandOff';

/** Starts a reference booking (bench/floor-workflow.ts; two activities unless `shape` says) for a new reference. */
export async function startFloorBooking(
  client: Client,
  taskQueue: string,
  input: FloorInput,
  shape: FloorShape = 'floorBooking',
  eager = false,
) {
  return client.workflow.start(shape, {
    taskQueue,
    workflowId: floorWorkflowId(input.customerReferenceNo),
    args: [input],
    ...(eager ? { requestEagerStart: true } : {}),
  });
}

/** Starts a reference workflow that checks availability once, then sleeps an hour (a parked booking's shape). */
export async function startFloorParked(client: Client, taskQueue: string, input: FloorInput) {
  return client.workflow.start('floorParked', {
    taskQueue,
    workflowId: floorWorkflowId(input.customerReferenceNo),
    args: [input],
  });
}
