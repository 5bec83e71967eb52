/**
 * What reaches an order run from outside: the caller's cancelBooking update, the system's autoCancel and checkOrder
 * signals, supplier hints, the state query.
 */
import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import {
  autoCancelSignal,
  cancelBookingUpdate,
  checkOrderSignal,
  operatorCheckOrderSignal,
  orderStateQuery,
  supplierOrderUpdateSignal,
} from '../../api/contract/messages';
import type { AutoCancel, CancelBookingAnswer, CancelBookingRequest, OrderCheck } from '../../api/contract/index';
import type { Money } from '../../api/values/index';
import type { OrderRun, QueuedRequest } from './run';

export function listenOrder(run: OrderRun): void {
  setHandler(orderStateQuery, () => run.state);
  // Signals before the update: in a run's first task, buffered messages are delivered as their handlers are set, so
  // the system's autoCancel that came with the start is taken before a caller's update is judged, as in an open run.
  setHandler(supplierOrderUpdateSignal, () => {
    run.hints++;
  });
  // Queued, never dropped: the main loop takes it after the work in hand, or joins it to a cancellation taken.
  setHandler(autoCancelSignal, (auto) => {
    if (!isAutoCancel(auto)) {
      log.warn('autoCancel signal ignored: not an automatic cancellation', {
        customerReferenceNo: run.reference,
      });
      return;
    }
    run.autoCancels.push(auto);
  });
  // A check is also a hint: a cancellation being followed reads the order early instead.
  // What a person may say (resolvesUnresolved) is taken only from the operators' own door.
  setHandler(checkOrderSignal, (check) => takeCheck(run, check, false));
  setHandler(operatorCheckOrderSignal, (check) => takeCheck(run, check, true));
  setHandler(
    cancelBookingUpdate,
    async (request): Promise<CancelBookingAnswer> => {
      // The main loop reads the order fresh and answers; requests are taken one at a time, in arrival order.
      const queued: QueuedRequest = { request };
      run.requests.push(queued);
      await condition(() => queued.answer !== undefined || queued.refusal !== undefined);
      if (queued.refusal) {
        throw ApplicationFailure.create({
          type: queued.refusal.type,
          message: queued.refusal.message,
          nonRetryable: true,
        });
      }
      return queued.answer!;
    },
    { validator: (request) => validateCancel(run, request) },
  );
}

function takeCheck(run: OrderRun, check: OrderCheck, byOperator: boolean): void {
  if (!isCheck(check)) {
    log.warn('checkOrder signal ignored: not a check', { customerReferenceNo: run.reference });
    return;
  }
  // Only what a check may say: fields the sender added (an older receiver's `lastOrderStage`) are not kept.
  const taken: OrderCheck = {
    reason: check.reason,
    ...(check.reportedStatus !== undefined ? { reportedStatus: check.reportedStatus } : {}),
    ...(byOperator && check.resolvesUnresolved ? { resolvesUnresolved: true } : {}),
  };
  run.checks.push(taken);
  run.hints++;
}

function isCheck(value: unknown): value is OrderCheck {
  const c = value as Partial<OrderCheck> | null;
  return (
    !!c &&
    typeof c.reason === 'string' &&
    (c.reportedStatus === undefined || Number.isInteger(c.reportedStatus)) &&
    (c.resolvesUnresolved === undefined || typeof c.resolvesUnresolved === 'boolean')
  );
}

/** The signal comes from workers only; its shape is still checked, as every input a decision reads. */
function isAutoCancel(value: unknown): value is AutoCancel {
  const a = value as Partial<AutoCancel> | null;
  return (
    !!a &&
    typeof a.reason === 'string' &&
    typeof a.onlyIfFree === 'boolean' &&
    (a.origin === 'auto' || a.origin === 'reconciliation') &&
    (a.maxFee === undefined || (typeof a.maxFee?.amount === 'number' && typeof a.maxFee?.currency === 'string'))
  );
}

/**
 * Refuses (throws) a malformed request, or one this run cannot take now; the fee is checked on a fresh read.
 * One cancellation per run: once a confirm is queued, being worked on or sent, every later request is refused (a
 * double click, a caller's retry after a timeout). A second confirm would otherwise be sent as a first Cancel,
 * whose refusal ("being cancelled") would read as proof that nothing was done and replace an outcome a person must
 * see; and a request queued behind a cancellation could never be answered before the run continues as new.
 */
function validateCancel(run: OrderRun, request: CancelBookingRequest): void {
  const issues = requestIssues(request);
  if (issues.length > 0) refuseRequest('InvalidCancelRequest', `Invalid cancel request: ${issues.join('; ')}`);
  if (run.interrupted) {
    refuseRequest('OrderRunCancelled', 'The order run was cancelled by an operator: send the request again');
  }
  if (run.autoAsked || run.autoCancels.length > 0) {
    refuseRequest(
      'AutoCancelUnderWay',
      "The order is being cancelled automatically (the booking's onCancelAfterBook, or the reconciliation sweep): " +
        'follow it with the orderState query; ask again only once this run has ended',
    );
  }
  if (cancellationAskedFor(run)) {
    refuseRequest(
      'CancellationAlreadyAsked',
      'A cancellation was already asked for in this run: follow it with the orderState query ' +
        '(its outcome says what happened); ask again only once this run has ended',
    );
  }
}

/** A validator's refusal, with a stable type a caller can branch on (the message is for people). */
function refuseRequest(type: string, message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Whether this run has taken a confirmed cancellation: queued, being worked on, or sent. */
function cancellationAskedFor(run: OrderRun): boolean {
  return (
    run.state.cancellation !== undefined ||
    run.current?.request.confirm === true ||
    run.requests.some((queued) => queued.request.confirm)
  );
}

/** What is wrong with a request's shape, each issue naming its field. */
export function requestIssues(request: CancelBookingRequest): string[] {
  const r = (request ?? {}) as Partial<Record<keyof CancelBookingRequest, unknown>>;
  const issues: string[] = [];
  if (typeof r.confirm !== 'boolean') issues.push('confirm: expected boolean');
  if (r.acceptedFee !== undefined && r.acceptedFee !== null) {
    const fee = r.acceptedFee as Partial<Money>;
    if (typeof fee.currency !== 'string' || fee.currency === '') issues.push('acceptedFee.currency: expected string');
    if (typeof fee.amount !== 'number' || !Number.isFinite(fee.amount))
      issues.push('acceptedFee.amount: expected number');
  }
  if (r.reason !== undefined && (typeof r.reason !== 'string' || r.reason === '' || r.reason.length > 500)) {
    issues.push('reason: expected 1 to 500 characters');
  }
  if (r.requestedBy !== undefined && (typeof r.requestedBy !== 'string' || r.requestedBy === '')) {
    issues.push('requestedBy: expected a non-empty string');
  }
  return issues;
}
