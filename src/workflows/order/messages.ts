/** What reaches an order run from outside: the caller's cancelBooking update, supplier hints, the state query. */
import { ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import { cancelBookingUpdate, orderStateQuery, supplierOrderUpdateSignal } from '../../contract/definitions';
import type { CancelBookingAnswer, CancelBookingRequest } from '../../contract';
import type { Money } from '../../values';
import type { OrderRun, QueuedRequest } from './run';

export function listenOrder(run: OrderRun): void {
  setHandler(orderStateQuery, () => run.state);
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
  setHandler(supplierOrderUpdateSignal, () => {
    run.hints++;
  });
}

/** Refuses (throws) a malformed request, or one this run cannot take now; the fee is checked on a fresh read. */
function validateCancel(run: OrderRun, request: CancelBookingRequest): void {
  const issues = requestIssues(request);
  if (issues.length > 0) throw new Error(`Invalid cancel request: ${issues.join('; ')}`);
  if (run.interrupted) throw new Error('The order run was cancelled by an operator: send the request again');
  if (run.state.stage === 'cancelling') throw new Error('A cancellation is already being sent or followed');
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
