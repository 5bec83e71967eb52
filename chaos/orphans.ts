/**
 * Orphans made on purpose during the chaos run: a few bookings' workflows terminated once their Book has made
 * the order, so the reconciliation sweep at the end has orders nothing in Temporal stands for, and must find them.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { bookingWorkflowId, orderWorkflowId } from '../src/api/client/index';
import { defaultSupplierProfile } from '../src/runtime/config/supplier-profile';
import type { Sandbox } from '../dev/sandbox/server';
import { sleep } from './timing';

/** The orphans the run made on purpose, and the targets it could not make one of (with why). */
export interface Orphanage {
  made: Array<{ customerReferenceNo: string; atSeconds: number }>;
  notMade: Array<{ customerReferenceNo: string; why: string }>;
}

const TERMINATE_REASON = 'chaos run: an orphan made on purpose (terminated after Book made the order)';

/**
 * Terminates each target's booking workflow as soon as the supplier holds its order, while the order is still
 * Confirming: the workflow cannot have seen it confirmed, so it has not handed it to an order workflow, and
 * nothing Temporal knows stands for the order any more. A terminate refused while the server is down is
 * tried again on the next tick; a target whose order settled first, or whose workflow closed first, is
 * reported as not made (the sweep must then find nothing for it).
 */
export async function makeOrphans(
  raw: Client,
  sandbox: Sandbox,
  opts: {
    targets: string[];
    into: Orphanage;
    since: () => number;
    signal: AbortSignal;
    mark: (event: string) => void;
  },
): Promise<void> {
  const pending = new Set(opts.targets);
  const notMade = (ref: string, why: string) => {
    pending.delete(ref);
    opts.into.notMade.push({ customerReferenceNo: ref, why });
  };
  while (pending.size > 0 && !opts.signal.aborted) {
    await sleep(250, opts.signal);
    const orders = new Map(sandbox.orders().map((x) => [x.customerReferenceNo, x]));
    for (const ref of [...pending]) {
      const order = orders.get(ref);
      if (!order || opts.signal.aborted) continue;
      if (order.status !== defaultSupplierProfile.orderStatus.confirming) {
        notMade(ref, `its order settled (status ${order.status}) before the workflow could be terminated`);
        continue;
      }
      try {
        await raw.workflow.getHandle(bookingWorkflowId(ref)).terminate(TERMINATE_REASON);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) notMade(ref, 'its booking workflow closed before the terminate');
        // Otherwise the server is likely restarting: the next tick tries again.
        continue;
      }
      const handedOff = await raw.workflow
        .getHandle(orderWorkflowId(ref))
        .describe()
        .then(
          () => true,
          (err: unknown) => (err instanceof WorkflowNotFoundError ? false : undefined),
        );
      if (handedOff === true) {
        notMade(ref, 'terminated, but it had handed its order to an order workflow already');
        continue;
      }
      pending.delete(ref);
      opts.into.made.push({ customerReferenceNo: ref, atSeconds: opts.since() });
      opts.mark(`terminated booking ${ref} after its Book (orphan made)`);
    }
  }
  for (const ref of pending) notMade(ref, 'its order never appeared while the run went on');
}
