/**
 * A booking's first step on a worker with several supplier accounts: which account the booking goes to, and the
 * input check and first CheckAvail on that account. The account is chosen here, in the worker, from the request's
 * `supplier` and the partner's namespace, before anything is sent; the workflow records the choice (the outcome
 * carries it) and sends every later call to that account's own queues, so a change of configuration never moves a
 * running booking to another account.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { chooseAccount } from '../runtime/config/accounts';
import type { SupplierProfile } from '../runtime/config/supplier-profile';
import type { QueryOrdersCoalescer } from '../runtime/supplier/coalescer';
import type { SupplierClient } from '../runtime/supplier/interface';
import type { BookingMeters } from '../runtime/observability/metrics';
import type { TemporalServices } from '../runtime/namespace/setup';
import { createActivities } from './booking';
import { createOrderActivities, type OrderAccounts } from './order';
import { createReconciliationActivities } from './sweep';
import type {
  BookingActivities,
  CheckAvailInput,
  CheckRequestAndAvailInput,
  CheckRequestAndAvailOutcome,
} from './types';

/** One account's activities, as the main queue's first step reaches them. */
export interface AccountEntry {
  id: string;
  partners: string[];
  activities: Pick<BookingActivities, 'checkRequestAndAvail' | 'checkAvail'>;
}

/** The first step and CheckAvail, each routed to the account the booking is on. */
export function routeToAccounts(
  accounts: readonly AccountEntry[],
  /** The worker's own supplier (SUPPLIER_*, or the first account): bookings that name none and began before. */
  unnamed: AccountEntry['activities'],
): Pick<BookingActivities, 'checkRequestAndAvail' | 'checkAvail'> {
  const byId = new Map(accounts.map((a) => [a.id, a]));
  return {
    async checkRequestAndAvail(input: CheckRequestAndAvailInput): Promise<CheckRequestAndAvailOutcome> {
      // Not an object: the contract's check says what is wrong, and nothing is sent.
      if (typeof input.request !== 'object' || input.request === null) return unnamed.checkRequestAndAvail(input);
      const named: unknown = (input.request as { supplier?: unknown }).supplier;
      if (named !== undefined && typeof named !== 'string') return refused(MALFORMED);
      const chosen = chooseAccount(accounts, Context.current().info.namespace, named as string | undefined);
      if ('refused' in chosen) return refused(chosen.refused);
      const outcome = await chosen.account.activities.checkRequestAndAvail(input);
      return outcome.validation.valid ? { ...outcome, supplier: chosen.account.id } : outcome;
    },
    async checkAvail(input: CheckAvailInput) {
      if (input.supplier === undefined) return unnamed.checkAvail(input);
      // Only a booking whose first step chose an account names one; it may have left this worker's file since.
      const account = byId.get(input.supplier);
      if (!account) throw new Error(`supplier: no supplier account "${input.supplier}" on this worker`);
      return account.activities.checkAvail(input);
    },
  };
}

const MALFORMED = 'supplier: a supplier account id: lower-case letters, digits and -';

function refused(issue: string): CheckRequestAndAvailOutcome {
  return { validation: { valid: false, issues: [issue] } };
}

/** What every supplier's activities share in one worker: its Temporal client and connection, its switches. */
export interface SharedActivityDeps {
  client: Client;
  temporal: { services: TemporalServices; namespace: string };
  callbackUrl?: string;
  recoveryTesting?: boolean;
  meters?: BookingMeters;
  /** The worker's accounts, which an order run's account is checked against (its first step, checkOrderStart). */
  accounts?: OrderAccounts;
}

/** The activities of one supplier (the worker's own, or one account's), each factory over that supplier's stack. */
export function supplierActivities(
  stack: { supplier: SupplierClient; profile: SupplierProfile; orders?: QueryOrdersCoalescer },
  { client, temporal, callbackUrl, recoveryTesting, meters, accounts }: SharedActivityDeps,
) {
  const { supplier, profile, orders } = stack;
  const switches = { ...(recoveryTesting ? { recoveryTesting: true } : {}) };
  return {
    booking: createActivities({
      supplier,
      profile,
      orders,
      ...(callbackUrl ? { callbackUrl } : {}),
      ...switches,
      ...(meters ? { meters } : {}),
    }),
    order: createOrderActivities({ supplier, profile, client, ...switches, ...(accounts ? { accounts } : {}) }),
    reconciliation: createReconciliationActivities({ supplier, profile, temporal, ...(meters ? { meters } : {}) }),
  };
}
