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
