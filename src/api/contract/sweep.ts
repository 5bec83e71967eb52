/**
 * The reconciliation sweep (reconciliationSweepWorkflow): its input, findings and result.
 * Node code only, like every shape of the contract (./schemas says why).
 */
import { z } from 'zod';
import { Money } from '../values/index';

export const SweepInput = z.object({
  /** How far back to look at orders, by booking time. */
  lookbackMinutes: z.number().int().positive(),
  /** Orders younger than this are left to their bookings. */
  settleMinutes: z.number().int().nonnegative(),
  /** Booking time covered by one QueryOrders request. */
  sliceMinutes: z.number().int().positive(),
  /** Cancel orphans found Confirmed (through an order workflow each). */
  cancelOrphans: z.boolean(),
  /** The most an orphan's cancellation may cost (amount 0: only free). Absent: only free. */
  orphanFeeCeiling: Money.optional(),
  /** Also list orders checking in within this many hours (still Confirmed?). Absent: 48. */
  checkInHours: z.number().int().positive().optional(),
});
export type SweepInput = z.infer<typeof SweepInput>;

export const SweepFinding = z.object({
  customerReferenceNo: z.string(),
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  status: z.number().int(),
  reason: z.string(),
  /** For an orphan cancelled automatically: the order workflow that does it. */
  cancelling: z.string().optional(),
});
export type SweepFinding = z.infer<typeof SweepFinding>;

export const SweepResult = z.object({
  window: z.object({ start: z.string(), end: z.string() }),
  requests: z.number().int(),
  ordersSeen: z.number().int(),
  /** Orders whose decision fields could not be read (drift): never judged, and a finding (the sweep is not clean). */
  unreadable: z.number().int(),
  orphans: z.array(SweepFinding),
  mismatches: z.array(SweepFinding),
  /** Listings that failed for good (e.g. a 400): what they cover was not seen; a finding. */
  failedSlices: z
    .array(z.object({ filter: z.string(), start: z.string(), end: z.string(), error: z.string() }))
    .optional(),
});
export type SweepResult = z.infer<typeof SweepResult>;
