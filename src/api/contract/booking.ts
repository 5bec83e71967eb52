/**
 * A booking's state and outcome as a caller reads them, and the messages a running booking takes (a price
 * answer, a supplier's hint).
 * Node code only, like every shape of the contract (./schemas says why).
 */
import { z } from 'zod';
import { FallbackCandidate, MAX_FALLBACK_CANDIDATES, Money } from '../values/index';

export { FallbackCandidate, MAX_FALLBACK_CANDIDATES } from '../values/index';
import { BookingStages } from './definitions';

/** One room's cancel policy, from the order's rooms: free until `refundableUntil`, then `fees` (spec CancelFee items). */
export const RoomCancelPolicy = z.object({
  refundableUntil: z.string().optional(),
  fees: z.array(z.object({ until: z.string(), fee: Money })),
});
export type RoomCancelPolicy = z.infer<typeof RoomCancelPolicy>;

/** What we keep of a supplier order: references, status and price. No personal data. */
export const OrderSummary = z.object({
  customerReferenceNo: z.string(),
  status: z.number().int(),
  statusRemark: z.string().optional(),
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  hotelConfirmNo: z.string().optional(),
  hotelId: z.string().optional(),
  checkIn: z.string().optional(),
  checkOut: z.string().optional(),
  price: Money.optional(),
  /** Per room, what cancelling costs when (the order workflow quotes from it). */
  cancelPolicy: z.array(RoomCancelPolicy).optional(),
});
export type OrderSummary = z.infer<typeof OrderSummary>;

/** One QueryOrders poll of the recovery loop. */
export const PollRecord = z.object({
  /** Workflow time of the poll (ISO). */
  at: z.string(),
  /** Seconds since the Book this poll verifies. */
  sinceBookSeconds: z.number(),
  trigger: z.enum(['schedule', 'supplier-hint', 'request']),
  result: z.enum(['found', 'not-found', 'error']),
  status: z.number().int().optional(),
  error: z.string().optional(),
});
export type PollRecord = z.infer<typeof PollRecord>;

export const BookAttempt = z.object({
  at: z.string(),
  /** `refused`: a re-send refused before any work (429, connection refused): nothing made by it, not counted. */
  result: z.enum(['order', 'refused', 'rejected', 'ambiguous']),
  status: z.number().int().optional(),
  error: z.string().optional(),
});
export type BookAttempt = z.infer<typeof BookAttempt>;

const candidates = z.array(FallbackCandidate).max(MAX_FALLBACK_CANDIDATES).optional();

/** Whether a cancel request arrived after Book was sent (the booking was still resolved). */
const cancelRequested = z.boolean();

/** Every way a booking ends. Returned, never thrown; only invalid input fails the workflow. */
export const BookingOutcome = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('confirmed'), order: OrderSummary, cancelRequested }),
  z.object({
    kind: z.literal('failed'),
    reason: z.string(),
    order: OrderSummary.optional(),
    errorType: z.string().optional(),
    cancelRequested,
  }),
  /** Not available; `candidates`: what the supplier offers instead, when it said. */
  z.object({ kind: z.literal('unavailable'), candidates }),
  z.object({
    kind: z.literal('price-rejected'),
    expectedPrice: Money,
    currentPrice: Money.optional(),
    reason: z.enum(['policy', 'refused', 'approval-timeout']),
    candidates,
  }),
  z.object({ kind: z.literal('cancelled') }),
  /** Still unknown at the deadline: someone must follow up with these references. */
  z.object({
    kind: z.literal('unresolved'),
    customerReferenceNo: z.string(),
    sessionId: z.string(),
    lastStatus: z.number().int().optional(),
    bookAttempts: z.array(BookAttempt),
    polls: z.array(PollRecord),
    cancelRequested,
  }),
]);
export type BookingOutcome = z.infer<typeof BookingOutcome>;
export type BookingOutcomeKind = BookingOutcome['kind'];

/** What the `bookingState` query answers. */
export const BookingState = z.object({
  stage: z.enum(BookingStages),
  customerReferenceNo: z.string(),
  sessionId: z.string(),
  ratePkgId: z.string(),
  expectedPrice: Money.optional(),
  currentPrice: Money.optional(),
  acceptedPrice: Money.optional(),
  bookAttempts: z.array(BookAttempt),
  polls: z.array(PollRecord),
  /** Workflow time of the next scheduled poll (ISO), while recovering. */
  nextPollAt: z.string().optional(),
  /** When recovery gives up (ISO), while recovering. */
  deadlineAt: z.string().optional(),
  /**
   * Workflow time of the next Book (ISO), while the supplier refused the last one before any work (429, connection
   * refused) and the booking waits to send it again: its Retry-After, cut to the profile's ceiling and to the 10
   * minutes refusals are retried for.
   */
  nextBookAt: z.string().optional(),
  cancelRequested: z.boolean(),
  /** The supplier account the booking is on, once its first step chose it (absent: a single-account worker). */
  supplier: z.string().optional(),
  order: OrderSummary.optional(),
  outcome: BookingOutcome.optional(),
});
export type BookingState = z.infer<typeof BookingState>;

// --- Messages ---------------------------------------------------------------------------------

export const PriceApproval = z.object({
  approved: z.boolean(),
  /** The price being approved; must equal the price the workflow is waiting on, so a stale approval fails. */
  price: Money,
  approvedBy: z.string().min(1).optional(),
});
export type PriceApproval = z.infer<typeof PriceApproval>;

/** A hint from the supplier's order-status callback. Never trusted alone: it triggers a verifying poll. */
export const SupplierOrderUpdate = z.object({
  customerReferenceNo: z.string().optional(),
  status: z.number().int().optional(),
});
export type SupplierOrderUpdate = z.infer<typeof SupplierOrderUpdate>;
