/**
 * The contract as JSON Schema, for services in other languages. Generated from the zod schemas;
 * the committed files in schema/ are checked against this by a unit test.
 */
import { z } from 'zod';
import {
  BookingOutcome,
  BookingRequest,
  BookingState,
  CancelBookingAnswer,
  CancelBookingRequest,
  OrderOutcome,
  OrderState,
  OrderWorkflowInput,
  PriceApproval,
  SupplierOrderUpdate,
} from '.';

/** File name → JSON Schema. `io: 'input'` for what callers send (defaults make fields optional). */
export function contractJsonSchemas(): Record<string, unknown> {
  const doc = (title: string, description: string, schema: z.ZodType, io: 'input' | 'output') => ({
    title,
    description,
    ...z.toJSONSchema(schema, { io, target: 'draft-2020-12' }),
  });
  return {
    'booking-request.schema.json': doc(
      'BookingRequest',
      'Input of workflow type bookingWorkflow (task queue hotel-booking, workflow id booking:<customerReferenceNo>).',
      BookingRequest,
      'input',
    ),
    'booking-outcome.schema.json': doc(
      'BookingOutcome',
      'Result of bookingWorkflow: one of its kinds, never thrown.',
      BookingOutcome,
      'output',
    ),
    'booking-state.schema.json': doc('BookingState', 'Answer of the bookingState query.', BookingState, 'output'),
    'price-approval.schema.json': doc(
      'PriceApproval',
      'Argument of the approvePriceChange update.',
      PriceApproval,
      'input',
    ),
    'supplier-order-update.schema.json': doc(
      'SupplierOrderUpdate',
      'Argument of the supplierOrderUpdate signal (a hint).',
      SupplierOrderUpdate,
      'input',
    ),
    'cancel-booking-request.schema.json': doc(
      'CancelBookingRequest',
      'Argument of the cancelBooking update of workflow type orderWorkflow, sent with Update-With-Start (the order ' +
        'workflow runs on demand): workflow id order:<customerReferenceNo>, task queue hotel-booking (the ' +
        "bookings' queue), start input order-workflow-start.schema.json, workflow id conflict policy USE_EXISTING " +
        '(join a run in progress), workflow id reuse policy ALLOW_DUPLICATE (after a run ended, start a new one), ' +
        'search attribute CustomerReferenceNo. The update fails, with the reason, when the order is not confirmed, ' +
        'the supplier lists no order, or the fee accepted is not the fee now.',
      CancelBookingRequest,
      'input',
    ),
    'order-workflow-start.schema.json': doc(
      'OrderWorkflowStart',
      "Start input of orderWorkflow a caller sends with its cancelBooking update; the workflow's other input " +
        "field `check` is for its own starts (the system's cancellations come by the autoCancel signal, from workers).",
      OrderWorkflowInput.pick({ customerReferenceNo: true }),
      'input',
    ),
    'cancel-booking-answer.schema.json': doc(
      'CancelBookingAnswer',
      'Answer of the cancelBooking update.',
      CancelBookingAnswer,
      'output',
    ),
    'order-state.schema.json': doc(
      'OrderState',
      'Answer of the orderState query (orderWorkflow, its latest run).',
      OrderState,
      'output',
    ),
    'order-outcome.schema.json': doc(
      'OrderOutcome',
      'Result of an orderWorkflow run (one piece of work): quoted, cancelled, cancel-failed, cancel-unresolved, ' +
        'cancel-refused, cancel-stopped, checked, changed-by-supplier, not-cancellable, cancel-not-done (a ' +
        'cancellation the system asked for that could not be done: for a person).',
      OrderOutcome,
      'output',
    ),
  };
}

export function renderSchema(schema: unknown): string {
  return JSON.stringify(schema, null, 2) + '\n';
}
