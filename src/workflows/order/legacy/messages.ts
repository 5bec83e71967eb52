/** What reaches an order from outside: the caller's cancelBooking update and supplier hints. */
import { condition, setHandler } from '@temporalio/workflow';
import { cancelBookingUpdate, orderStateQuery, supplierOrderUpdateSignal } from '../../../contract/definitions';
import type { CancelBookingAnswer, CancelBookingRequest } from '../../../contract';
import type { Money } from '../../../values';
import { sameFee } from '../../cancel-fee';
import { requestIssues } from '../messages';
import { quoteNow, type OrderRun, type PendingCancel } from './run';

export function listenOrder(run: OrderRun): void {
  setHandler(orderStateQuery, () => run.state);
  setHandler(
    cancelBookingUpdate,
    async (request): Promise<CancelBookingAnswer> => {
      const quote = quoteNow(run);
      if (!request.confirm) return { kind: 'quote', quote };
      const pending: PendingCancel = {
        reason: request.reason ?? 'cancelled by the caller',
        ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
        origin: 'caller',
        quote,
      };
      run.pending = pending;
      // The main loop sends Cancel; the caller hears back once the supplier answered it (or it stayed unclear).
      await condition(() => pending.answer !== undefined);
      return pending.answer!;
    },
    { validator: (request) => validateCancel(run, request) },
  );
  setHandler(supplierOrderUpdateSignal, () => {
    run.hints++;
  });
}

/** Refuses (throws) a malformed request, one for an order not open for it, or one for a fee no longer current. */
function validateCancel(run: OrderRun, request: CancelBookingRequest): void {
  const issues = requestIssues(request);
  if (issues.length > 0) throw new Error(`Invalid cancel request: ${issues.join('; ')}`);
  if (run.state.stage !== 'confirmed') throw new Error(`The order cannot be cancelled now (stage: ${run.state.stage})`);
  if (run.pending) throw new Error('A cancellation is already being sent');
  if (!request.confirm) return;
  const { fee } = quoteNow(run);
  if (request.acceptedFee === undefined) throw new Error('acceptedFee: required to cancel (ask for a quote first)');
  // A deadline may have passed since the quote: the caller must agree to the fee that applies now.
  if (!sameFee(request.acceptedFee, fee)) {
    throw new Error(`The cancellation fee now is ${show(fee)}, not ${show(request.acceptedFee)}: quote again`);
  }
}

function show(m: Money | null | undefined): string {
  return m ? `${m.amount} ${m.currency}` : 'unknown';
}
