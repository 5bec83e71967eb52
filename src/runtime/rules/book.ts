/**
 * The one rule for how a Book ended, as a value the workflow reads. Whether an order may exist is
 * decided here and nowhere else:
 *  - `order`: the supplier answered with the order;
 *  - `refused`: refused before any work (429, or the connection never opened): nothing exists, and the
 *    workflow sends Book again after `retryAfterMs` (or its own backoff);
 *  - `rejected`: surely not made: only the HTTP statuses and envelope codes the supplier profile lists
 *    (`book.surelyNotMade*`: 400, 401, 403, credit limit by default). The booking ends `failed`;
 *  - `ambiguous`: everything else (unknown codes, 404, 5xx, timeouts, resets, unreadable bodies, errors
 *    of our own): the order may exist and is looked up with QueryOrders, never assumed away.
 * When unsure, assume the supplier acted: a wrong `ambiguous` costs some polls, a wrong `rejected`
 * costs an orphan order the guest pays for and a caller who books again.
 */
import { isSupplierError, type SupplierError } from '../supplier/errors';
import type { SupplierProfile } from '../config/supplier-profile';
/** How a Book that returned no order ended (the activity's outcome is this or the order). */
export type BookFailureOutcome =
  /** Refused before any work (429, connection never opened): nothing exists; send again after the hint. */
  | { kind: 'refused'; errorType: string; message: string; retryAfterMs?: number }
  /** Surely not made (only what the profile's `book.surelyNotMade*` lists): no order can exist for this call. */
  | { kind: 'rejected'; errorType: string; message: string }
  /** The supplier may have acted: the order must be looked up. */
  | { kind: 'ambiguous'; errorType: string; message: string };

/** How a Book that did not return an order ended. */
export function classifyBookFailure(err: unknown, profile: SupplierProfile): BookFailureOutcome {
  if (!isSupplierError(err)) {
    return { kind: 'ambiguous', errorType: 'UnexpectedError', message: String((err as Error)?.message ?? err) };
  }
  const { type } = err;
  // The outcome is a payload (encrypted where payloads are), so the supplier's own words may go in it.
  const said = err.supplierMessage;
  const message = said ? `${err.message}: ${said}` : err.message;
  if (type === 'SupplierRateLimited' || type === 'SupplierNetworkBeforeSend') {
    return { kind: 'refused', errorType: type, message, ...retryAfter(err) };
  }
  if (surelyNotMade(err, profile)) return { kind: 'rejected', errorType: type, message };
  return { kind: 'ambiguous', errorType: type, message };
}

function surelyNotMade(err: SupplierError, profile: SupplierProfile): boolean {
  const { httpStatus, code } = err.details;
  // Refused by our own client before anything was sent (a missing Session-Id): nothing reached the supplier.
  if (httpStatus === undefined) return err.type === 'SupplierBadRequest';
  if (profile.book.surelyNotMadeStatuses.includes(httpStatus)) return true;
  if (httpStatus !== 200 || code === undefined) return false;
  return profile.book.surelyNotMadeCodes.some((name) => profile.codes[name] === code);
}

function retryAfter(err: SupplierError): { retryAfterMs?: number } {
  return err.details.retryAfterMs !== undefined ? { retryAfterMs: err.details.retryAfterMs } : {};
}
