/**
 * The one rule for how a Cancel send ended, as a value the order workflow reads: Book's rule (./book.ts)
 * turned towards cancelling. Whether a send may have cancelled is decided here and nowhere else:
 *  - `accepted`: the supplier answered 200 with code 0: it took the Cancel (it settles later);
 *  - `refused`: refused before any work (429, or the connection never opened): nothing was done; send again;
 *  - `rejected`: this send surely did nothing: only what the profile's `cancel.surelyNotDone*` lists (400, 401,
 *    403, 404 by default). The workflow reads it as a refusal only while no earlier send may have acted;
 *  - `ambiguous`: everything else (unknown codes, 5xx, 504, timeouts, resets, unreadable bodies): the order may be
 *    cancelled or on its way; QueryOrders settles it (status Cancelled = done).
 * When unsure, assume the supplier acted: a wrong `ambiguous` costs polls, a wrong refusal tells a caller an order
 * stands that is in fact cancelled, or leads to a second Cancel over a first that worked.
 */
import { isSupplierError, type SupplierError } from '../supplier/errors';
import type { SupplierProfile } from '../config/supplier-profile';
import type { Money } from '../../api/values/index';

export type CancelSendOutcome =
  | { kind: 'accepted'; status: number; serviceFee?: Money }
  | { kind: 'refused'; errorType: string; message: string; retryAfterMs?: number }
  | { kind: 'rejected'; errorType: string; message: string }
  | { kind: 'ambiguous'; errorType: string; message: string };

export type CancelFailureOutcome = Exclude<CancelSendOutcome, { kind: 'accepted' }>;

/** How a Cancel that did not answer 200/0 ended. */
export function classifyCancelFailure(err: unknown, profile: SupplierProfile): CancelFailureOutcome {
  if (!isSupplierError(err)) {
    return { kind: 'ambiguous', errorType: 'UnexpectedError', message: String((err as Error)?.message ?? err) };
  }
  const { type } = err;
  // The message travels in the workflow's state (a payload, encrypted where payloads are); no supplier text in it.
  const message = err.message;
  if (type === 'SupplierRateLimited' || type === 'SupplierNetworkBeforeSend') {
    return {
      kind: 'refused',
      errorType: type,
      message,
      ...(err.details.retryAfterMs !== undefined ? { retryAfterMs: err.details.retryAfterMs } : {}),
    };
  }
  if (surelyNotDone(err, profile)) return { kind: 'rejected', errorType: type, message };
  return { kind: 'ambiguous', errorType: type, message };
}

function surelyNotDone(err: SupplierError, profile: SupplierProfile): boolean {
  const { httpStatus, code } = err.details;
  // Refused by our own client before anything was sent (a missing Session-Id): nothing reached the supplier.
  if (httpStatus === undefined) return err.type === 'SupplierBadRequest';
  if (profile.cancel.surelyNotDoneStatuses.includes(httpStatus)) return true;
  if (httpStatus !== 200 || code === undefined) return false;
  return profile.cancel.surelyNotDoneCodes.some((name) => profile.codes[name] === code);
}
