/** What reaches a running booking from outside: a price approval, supplier hints, a cancel request. */
import { CancellationScope, setHandler } from '@temporalio/workflow';
import { approvePriceChangeUpdate, supplierOrderUpdateSignal } from '../../api/contract/messages';
import type { PriceApproval } from '../../api/contract/index';
import type { Money } from '../../api/values/index';
import { fmt, type BookingRun } from './run';

export function listen(run: BookingRun): void {
  setHandler(
    approvePriceChangeUpdate,
    (answer) => {
      run.approval = answer;
      return { accepted: answer.approved, stage: run.state.stage };
    },
    { validator: (answer) => validateApproval(run, answer) },
  );
  setHandler(supplierOrderUpdateSignal, () => {
    run.hints++;
  });
  // Cancellation is noted, not obeyed, once Book may have reached the supplier.
  CancellationScope.current().cancelRequested.catch(() => {
    run.state.cancelRequested = true;
  });
}

/** Refuses (throws) an approval that is malformed, unasked for, already given, or for another price. */
function validateApproval(run: BookingRun, answer: PriceApproval): void {
  const issues = approvalIssues(answer);
  if (issues.length > 0) throw new Error(`Invalid approval: ${issues.join('; ')}`);
  if (run.state.stage !== 'awaiting-price-approval' || !run.pendingPrice) {
    throw new Error(`No price change is awaiting approval (stage: ${run.state.stage})`);
  }
  // A second answer in the same workflow task would otherwise pass too, and its caller be told "accepted".
  if (run.approval !== undefined) throw new Error('The price change was already answered');
  if (!sameMoney(answer.price, run.pendingPrice)) {
    throw new Error(`Approval is for ${fmt(answer.price)} but the price awaiting approval is ${fmt(run.pendingPrice)}`);
  }
}

/** What is wrong with an approval, field by field (the update's input is not checked anywhere else). */
function approvalIssues(answer: PriceApproval): string[] {
  const a = (answer ?? {}) as Partial<Record<keyof PriceApproval, unknown>>;
  const issues: string[] = [];
  if (typeof a.approved !== 'boolean') issues.push('approved: expected boolean');
  const price = a.price as Partial<Money> | undefined;
  if (typeof price?.currency !== 'string' || price.currency === '') issues.push('price.currency: expected string');
  if (typeof price?.amount !== 'number' || !Number.isFinite(price.amount)) issues.push('price.amount: expected number');
  if (a.approvedBy !== undefined && (typeof a.approvedBy !== 'string' || a.approvedBy === '')) {
    issues.push('approvedBy: expected a non-empty string');
  }
  return issues;
}

function sameMoney(a: Money, b: Money): boolean {
  return a.currency === b.currency && a.amount === b.amount;
}
