/**
 * A cancellation the system asks for (onCancelAfterBook, an orphan of the sweep), with nobody waiting on it. It
 * follows the order until it can act or its deadline: a listing that lags, or an order still pending, is read again
 * on the recovery schedule, and the order is cancelled as soon as it reads Confirmed. An order already Cancelled
 * ends the run `cancelled`; anything else at the deadline (not listed, pending, CancelFailed) ends `cancel-not-done`, for
 * a person (run.ts, forTheSystem), as does a Cancel the supplier refused.
 */
import type { AutoCancel, OrderOutcome } from '../../api/contract/index';
import type { AcceptedFee } from '../../runtime/rules/cancel-fee';
import { followOrder } from '../follow';
import { cancelOrder, continueWith } from './cancel';
import type { OrderWorkflowArgs, WaitState } from './carry';
import type { OrderRun } from './run';

/** Takes one automatic cancellation: joined to the cancellation this run already took, or carried out. */
export async function takeAutoCancel(run: OrderRun, auto: AutoCancel, input: OrderWorkflowArgs): Promise<void> {
  run.autoAsked ??= auto.origin;
  // One cancellation per run: the one taken stands for this one too, and now its refusal is for a person.
  if (run.state.cancellation) return;
  run.recordOutcome(await cancelOnItsOwn(run, auto, input));
}

/**
 * Waits for the order to be cancellable (from `from` when resumed), then cancels it by the Cancel rule. It reads on
 * the schedule, and a supplier hint (or a check) brings a read forward, spaced like every follow-up's: an order that
 * becomes Confirmed is cancelled when the supplier says so, not at the next scheduled read. A check taken after the
 * wait cannot replace its ending with a lesser one (run.ts, recordOutcome).
 */
export async function cancelOnItsOwn(
  run: OrderRun,
  auto: AutoCancel,
  input: OrderWorkflowArgs,
  from?: WaitState,
): Promise<OrderOutcome> {
  const startMs = Date.now();
  const wait = from ?? { anchorMs: startMs, nextIndex: 0, deadlineMs: startMs + run.recovery.deadlineSeconds * 1000 };
  const reads = (wait.reads ??= []);
  return followOrder<Awaited<ReturnType<OrderRun['read']>>, OrderOutcome>({
    place: wait,
    schedule: run.recovery,
    hints: { of: run, log: reads },
    stop: () => run.interrupted,
    due(dueMs) {
      if (dueMs > wait.anchorMs) run.setStage('cancel-waiting');
    },
    handOver: { when: 'after-read', to: () => continueWith(run, input, { wait: { auto, from: wait } }) },
    read: (trigger) => run.read(wait.anchorMs, trigger === 'supplier-hint' ? trigger : 'request', reads),
    decide({ poll: read, atDeadline }) {
      const order = run.state.order;
      if (read.kind === 'found' && order) {
        if (run.orderState === 'confirmed') {
          return cancelOrder(run, { reason: auto.reason, origin: auto.origin, accepted: acceptedBy(auto) }, input);
        }
        // Cancelled already (by an earlier delivery of this same request, say): what was asked for is done.
        if (run.orderState === 'cancelled') return { kind: 'cancelled', order };
        if (run.orderState === 'failed') {
          const reason = `asked to cancel (${auto.reason}), but the order failed (status ${order.status})`;
          return { kind: 'changed-by-supplier', order, reason };
        }
        // An earlier cancellation the supplier ended in CancelFailed: the order stands, and only a person can say why.
        if (run.orderState === 'cancel-failed') return notCancellable(run, auto, read.kind);
      }
      if (run.interrupted || atDeadline) return notCancellable(run, auto, read.kind);
      return undefined;
    },
  });
}

function acceptedBy(auto: AutoCancel): AcceptedFee {
  if (auto.onlyIfFree) return { kind: 'free' };
  return auto.maxFee ? { kind: 'fee', fee: auto.maxFee } : { kind: 'any' };
}

/** The order never became cancellable: why, as the last read left it. */
function notCancellable(run: OrderRun, auto: AutoCancel, lastRead: string): OrderOutcome {
  const order = run.state.order;
  const why = run.interrupted
    ? 'the order run was cancelled by an operator first'
    : lastRead === 'error'
      ? 'the order could not be read by the deadline'
      : run.orderState === 'cancel-failed'
        ? `an earlier cancellation of the order failed (status ${order?.status})`
        : !order || lastRead === 'not-found'
          ? 'the supplier listed no order by the deadline'
          : `the order was still ${run.orderState} (status ${order.status}) at the deadline`;
  return {
    kind: 'not-cancellable',
    ...(order ? { order } : {}),
    reason: `asked to cancel (${auto.reason}), but ${why}`,
  };
}
