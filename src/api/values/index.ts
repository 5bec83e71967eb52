/**
 * The values both sides of the orchestrator speak of: money, the person holding a booking, its guests
 * (spec section 2.2), and the formatting of a zod error as field paths. The public contract (src/api/contract)
 * and the supplier's wire model (src/runtime/supplier) both build on these, and neither imports the other.
 */
import { z } from 'zod';

export { describeIssues } from './issues';

export const Money = z.object({
  currency: z.string().min(1),
  amount: z.number().finite(),
});
export type Money = z.infer<typeof Money>;

/**
 * A package another supplier offers in place of the one asked for: CheckAvail's fallback ("R2") candidates, read
 * tolerantly from where the supplier profile says they are (`fallbackCandidatesField`), each kept only with a package
 * id. Nothing is booked on one: a caller who wants it starts a new booking, under a new reference, with its
 * `ratePkgId` (and its price as `expectedPrice`).
 */
export const FallbackCandidate = z.object({
  ratePkgId: z.string().min(1),
  /** The supplier's identifier of the platform that sells it (the envelope's `supplier`), when given. */
  supplier: z.union([z.number(), z.string()]).optional(),
  /** Its price (gross, else net), when given in a form the price check reads. */
  price: Money.optional(),
  /** A name to show a person (room or rate name), when given. */
  name: z.string().optional(),
});
export type FallbackCandidate = z.infer<typeof FallbackCandidate>;

/** At most this many candidates travel in an outcome: enough to choose from, and a bounded payload. */
export const MAX_FALLBACK_CANDIDATES = 20;

/** `countryNumber` is sent in requests only; responses carry `countryCode` and `number`. */
export const Phone = z.object({
  countryCode: z.string().min(1),
  countryNumber: z.number().int().optional(),
  number: z.string().min(1),
});
export type Phone = z.infer<typeof Phone>;

export const Holder = z.object({
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  email: z.email(),
  phone: Phone,
});
export type Holder = z.infer<typeof Holder>;

export const Guest = z.object({
  roomIndex: z.number().int().nonnegative(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  nationalityCode: z.string().min(1),
  age: z.number().int().nonnegative(),
  isChild: z.boolean(),
});
export type Guest = z.infer<typeof Guest>;
