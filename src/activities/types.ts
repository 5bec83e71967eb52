/**
 * What the workflows see of the activities: each activity's input and outcome, and the three sets of activities
 * as interfaces. Workflows import types from here and never from an implementation (./booking.ts, ./order.ts,
 * ./sweep.ts), so an activity's code can change without a workflow's imports following it; each factory is
 * checked against its interface.
 */
import type {
  AutoCancel,
  FallbackCandidate,
  OrderSummary,
  OrderWorkflowInput,
  RequestValidation,
} from '../api/contract/index';
import type { BookFailureOutcome } from '../runtime/rules/book';
import type { CancelSendOutcome } from '../runtime/rules/cancel';
import type { BookingView, StatusCodes } from '../runtime/rules/sweep-classify';
import type { SweepOrder } from '../runtime/rules/sweep-listing';
import type { Guest, Holder, Money } from '../runtime/supplier/schemas';

// The booking activities (./booking.ts).

/** The request headers an activity sends, minus the abort signal it adds itself. */
export interface SupplierCallContext {
  sessionId: string;
  traceId: string;
  currency?: string;
  language?: string;
  ip?: string;
  test?: string;
}

export interface CheckAvailInput {
  ratePkgId: string;
  context: SupplierCallContext;
  /** The supplier account the booking is on; absent: the worker's own supplier (a single-account worker). */
  supplier?: string;
}
export type CheckAvailOutcome =
  /** `candidates`: what the supplier offers instead, passed on if the price is then refused. */
  | { kind: 'available'; price?: Money; candidates?: FallbackCandidate[] }
  | { kind: 'unavailable'; status: number; candidates?: FallbackCandidate[] }
  /** Price or inventory changed; `price` is absent when the supplier sent no package with it. */
  | { kind: 'ari-changed'; price?: Money };

/** A new booking's first step: its raw input, and the two headers the workflow derives for every supplier call. */
export interface CheckRequestAndAvailInput {
  request: unknown;
  sessionId: string;
  traceId: string;
}
/** The input check, and when the request is valid, the first CheckAvail's answer. */
export type CheckRequestAndAvailOutcome =
  | { validation: Extract<RequestValidation, { valid: false }> }
  | {
      validation: Extract<RequestValidation, { valid: true }>;
      availability: CheckAvailOutcome;
      /** The account chosen for the booking, on a worker with several; every later call goes to its queues. */
      supplier?: string;
    };

export interface BookInput {
  customerReferenceNo: string;
  ratePkgId: string;
  holder: Holder;
  guests: Guest[];
  context: SupplierCallContext;
}
/** How Book ended: the order, or how it failed by the Book rule (src/runtime/rules/book.ts). */
export type BookOutcome = { kind: 'order'; order: OrderView } | BookFailureOutcome;

export interface QueryOrderInput {
  customerReferenceNo: string;
  traceId: string;
}
export type QueryOrderOutcome = { kind: 'found'; order: OrderView } | { kind: 'not-found' };

/** An order as the workflow sees it: the summary plus a profile-independent reading of its status. */
export interface OrderView extends OrderSummary {
  /** `cancelled` and `cancel-failed` are endings too: a booking reads them as failed, an order workflow apart. */
  state: 'pending' | 'confirmed' | 'failed' | 'cancelled' | 'cancel-failed';
}

export interface BookingActivities {
  validateBookingRequest(input: unknown): Promise<RequestValidation>;
  checkAvail(input: CheckAvailInput): Promise<CheckAvailOutcome>;
  checkRequestAndAvail(input: CheckRequestAndAvailInput): Promise<CheckRequestAndAvailOutcome>;
  book(input: BookInput): Promise<BookOutcome>;
  queryOrder(input: QueryOrderInput): Promise<QueryOrderOutcome>;
}

// The order activities (./order.ts).

/**
 * What an order run may do, judged at its first step before anything is read from the supplier: its input within
 * the worker's bounds, and whether a booking of this namespace made the order (`ours`), by `booking:<ref>`'s own
 * record. On a supplier account shared by several partners, a reference is not proof of ownership: another
 * partner's order under it must get no quote, no Cancel and no read.
 */
export type OrderStartCheck =
  | { kind: 'invalid'; issues: string[] }
  /** `supplier`: the account the booking chose (its memo), where the worker has several. */
  | { kind: 'ours'; booking: 'running' | 'ended'; supplier?: string }
  | { kind: 'not-ours'; reason: string };

export interface CancelOrderInput {
  customerReferenceNo: string;
  supplierReferenceNo: string;
  reason: string;
  context: SupplierCallContext;
}

/** What starts an order run: its input, and the system's own cancellation when there is one. */
export type OrderStart = OrderWorkflowInput & { autoCancel?: AutoCancel };

/** Whether an earlier run of the order sent a Cancel that may have acted and never saw it settle. */
export type EarlierSends = 'none' | 'may-have-acted' | 'unknown';

export interface OrderActivities {
  checkOrderStart(input: { input: OrderWorkflowInput }): Promise<OrderStartCheck>;
  sendCancel(input: CancelOrderInput): Promise<CancelSendOutcome>;
  startOrderWorkflow(input: OrderStart): Promise<{ workflowId: string }>;
  bookingInProgress(input: { customerReferenceNo: string }): Promise<boolean>;
  earlierCancelSends(input: { customerReferenceNo: string; runId: string }): Promise<EarlierSends>;
  /** The time a fee is judged at: read as a local activity, so it is recorded in history (see the activity). */
  clockForFees(input: { workflowNowMs: number }): Promise<{ nowMs: number }>;
}

// The sweep's activities (./sweep.ts).

export interface ListOrdersInput {
  start: string;
  end: string;
  traceId: string;
  /**
   * Which time the window is of (spec §4.4): `booking` (bookingTimeWindow, the default), `cancelled`
   * (cancelledTimeWindow: cancellations, the supplier's own included) or `checkIn` (checkInTimeWindow).
   */
  filter?: SweepFilter;
}
export type SweepFilter = 'booking' | 'cancelled' | 'checkIn';

export interface ListOrdersResult {
  orders: SweepOrder[];
  unreadable: number;
}

export interface LookUpBookingsInput {
  references: string[];
  /**
   * Each reference's listed order status, and the codes the sweep judges them by: with them, a reference's order
   * workflow is described only where the sweep reads it (needsOrderView). Absent (a sweep started before): both.
   */
  listed?: { status: Record<string, number>; codes: StatusCodes };
}

export interface ReconciliationActivities {
  listOrdersBooked(input: ListOrdersInput): Promise<ListOrdersResult>;
  judgeOrder(input: {
    customerReferenceNo: string;
    status: number;
  }): Promise<{ verdict: 'ok' | 'orphan' | 'mismatch'; reason?: string }>;
  lookUpBookings(input: LookUpBookingsInput): Promise<Record<string, BookingView>>;
}
