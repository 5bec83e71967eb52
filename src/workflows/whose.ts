/**
 * The supplier account a booking, order or sweep is on, as its log lines say it: each line a person follows up
 * (unresolved, a charge above what was accepted, a finding) names the account, so an operations team running several
 * knows whose supplier to call. Nothing where there is none (the worker's own supplier, bookings from before accounts).
 */
export function whose(account: string | undefined): { supplierAccount?: string } {
  return account ? { supplierAccount: account } : {};
}
