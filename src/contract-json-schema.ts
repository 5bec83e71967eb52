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
  PriceApproval,
  SupplierOrderUpdate,
} from './contract';

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
      'Argument of the cancelBooking update, sent to workflow id order:<customerReferenceNo> (workflow type orderWorkflow).',
      CancelBookingRequest,
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
      'Answer of the orderState query (orderWorkflow).',
      OrderState,
      'output',
    ),
    'order-outcome.schema.json': doc(
      'OrderOutcome',
      'Result of orderWorkflow: how the order ended (cancelled, cancel-failed, cancel-unresolved, failed, closed).',
      OrderOutcome,
      'output',
    ),
  };
}

export function renderSchema(schema: unknown): string {
  return JSON.stringify(schema, null, 2) + '\n';
}
