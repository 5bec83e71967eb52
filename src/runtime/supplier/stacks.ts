/**
 * The supplier stacks of one worker: one per account in the accounts file, and the worker's own (SUPPLIER_*), each
 * with its own client, rate limiter, tokens and QueryOrders coalescer. Nothing is shared but the process, so one
 * account's 429s, slowness or outage reach only its own bookings.
 *
 * Every account is named at start: one the file left out (a bad entry), and one that does not answer or whose Ticket
 * is refused (asked once, in the background, so an unreachable supplier delays neither the worker nor the others).
 */
import type { AccountsReading, SupplierAccount } from '../config/accounts';
import type { DriftReporter } from './drift';
import type { SupplierObserver } from './observer';
import { describeReach } from './reachability';
import { createSupplierStack, type SupplierStack, type SupplierStackConfig } from './stack';

export interface SupplierStacks {
  accounts: Array<{ account: SupplierAccount; stack: SupplierStack }>;
  /** What serves bookings that name no account: the first account's stack when the worker has no SUPPLIER_* credential. */
  own: SupplierStack;
  /** Closes every stack once. */
  close(): Promise<void>;
}

export function createSupplierStacks(
  config: {
    supplier: SupplierStackConfig & { account?: string };
    accounts?: AccountsReading;
  },
  options: {
    drift: DriftReporter;
    /** Metrics and traces for one stack; `account` absent for the worker's own. */
    observerFor(account?: string): SupplierObserver;
    log: { info(line: string): void; warn(line: string): void };
  },
): SupplierStacks {
  const { drift, observerFor, log } = options;
  for (const line of config.accounts?.leftOut ?? []) log.warn(`Supplier account left out: ${line}`);
  const accounts = (config.accounts?.accounts ?? []).map((account) => ({
    account,
    stack: createSupplierStack(
      { ...account, ...(config.supplier.queryBatch ? { queryBatch: config.supplier.queryBatch } : {}) },
      { drift, observer: observerFor(account.id) },
    ),
  }));
  // The worker's own supplier, unless it is the first account (no SUPPLIER_* credential): then that account's stack,
  // so one credential never has two rate limiters in one process.
  const shared = accounts.find(({ account }) => account.id === config.supplier.account)?.stack;
  const own = shared ?? createSupplierStack(config.supplier, { drift, observer: observerFor() });
  const probed = shared ? accounts : [...accounts, { account: { id: 'default', ...config.supplier }, stack: own }];
  for (const { account, stack } of probed)
    void stack.reach().then((reach) => {
      const line = describeReach(account.id, account.baseUrl, reach);
      if (reach.ok) log.info(line);
      else log.warn(line);
    });
  return {
    accounts,
    own,
    async close() {
      await Promise.allSettled([...(shared ? [] : [own.close()]), ...accounts.map(({ stack }) => stack.close())]);
    },
  };
}
