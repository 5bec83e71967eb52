/**
 * The contract's messages: each workflow's signature as a caller types its handles, and the query, update and signal
 * definitions. No zod here either: workflow code imports this module (types from ./schemas only, erased).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AutoCancel,
  BookingOutcome,
  BookingRequest,
  BookingState,
  CancelBookingAnswer,
  CancelBookingRequest,
  OperatorNote,
  OrderCheck,
  OrderOutcome,
  OrderState,
  OrderWorkflowInput,
  PriceApproval,
  SupplierOrderUpdate,
} from './schemas';
import type { BookingStage } from './definitions';

/**
 * Each workflow as a caller sees it: its input and its result. A caller types its handles with these, so it needs
 * the contract only, never the workflow code (test/unit/workflow-signatures.test.ts checks the workflows match).
 */
export type BookingWorkflow = (request: BookingRequest) => Promise<BookingOutcome>;
export type OrderWorkflow = (input: OrderWorkflowInput) => Promise<OrderOutcome>;
export type OperatorNoteWorkflow = (note: OperatorNote) => Promise<OperatorNote>;

// --- Messages ---------------------------------------------------------------------------------

export const bookingStateQuery = defineQuery<BookingState>('bookingState');
export const approvePriceChangeUpdate = defineUpdate<{ accepted: boolean; stage: BookingStage }, [PriceApproval]>(
  'approvePriceChange',
);
export const supplierOrderUpdateSignal = defineSignal<[SupplierOrderUpdate]>('supplierOrderUpdate');

/** The order workflow's state (see OrderState). */
export const orderStateQuery = defineQuery<OrderState>('orderState');
/**
 * On the order workflow: `confirm: false` answers the fee that applies now; `confirm: true` with that
 * very fee (`acceptedFee`) sends Cancel and answers once the supplier took it. Refused (validator) when
 * the order is not confirmed, already being cancelled, or the fee changed since the quote.
 */
export const cancelBookingUpdate = defineUpdate<CancelBookingAnswer, [CancelBookingRequest]>('cancelBooking');
/**
 * On the order workflow, from workers only (signal-with-start): a cancellation the system asks for (AutoCancel).
 * An open run takes it after the work in hand; a cancellation already taken by the run stands for it.
 */
export const autoCancelSignal = defineSignal<[AutoCancel]>('autoCancel');
/**
 * On the order workflow, from the callback receiver and operators only (signal-with-start): check the order now
 * (OrderCheck). An open run checks it after the work in hand, unless it has already followed a cancellation.
 */
export const checkOrderSignal = defineSignal<[OrderCheck]>('checkOrder');
/**
 * On the order workflow, from operators only (the authorizer lets no other identity send it): the check a person asks
 * for, whose `resolvesUnresolved` settles a booking that ended `unresolved`. Said on `checkOrder`, that flag is ignored:
 * the callback receiver's door carries the reference and a reported status, nothing only an operator may say.
 */
export const operatorCheckOrderSignal = defineSignal<[OrderCheck]>('operatorCheckOrder');
