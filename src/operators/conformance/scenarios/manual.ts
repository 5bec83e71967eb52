/**
 * The clauses a test environment cannot show without a hotel's or the supplier's help: listed in the plan and the
 * report with the steps a person takes, and what to write into the profile from what they see.
 */
import type { ManualScenario } from '../types';

export const manualScenarios: ManualScenario[] = [
  {
    id: 'manual.delayedConfirmation',
    title: 'A booking the hotel confirms late',
    expected: (p) =>
      `Book answered in status ${p.orderStatus.confirming} (Confirming), later listed ${p.orderStatus.confirmed}`,
    steps: [
      'Ask the supplier for a test hotel that confirms on request (minutes, not at once), or for the test flag that delays it.',
      'Book it; note the status Book answers and each status QueryOrders lists until it settles, with the times.',
      'Confirming must be orderStatus.confirming (or unknown): any other status the product would read as final.',
    ],
  },
  {
    id: 'manual.cancelFailed',
    title: 'A cancellation the hotel refuses',
    expected: (p) =>
      `the order listed in status ${p.orderStatus.cancelFailed} (CancelFailed) after the Cancel was taken`,
    steps: [
      'Ask the supplier for a way to have a Cancel refused by the hotel in the test environment.',
      'Book, wait for Confirmed, Cancel; note the Cancel answer and the status the order settles in.',
      'Write that status into orderStatus.cancelFailed.',
    ],
  },
  {
    id: 'manual.supplierCancellation',
    title: 'The hotel cancels a confirmed booking on its own',
    expected: (p) =>
      `the order listed in status ${p.orderStatus.cancelled} with a cancelTime, and listed by cancelledTimeWindow; a callback when configured`,
    steps: [
      'Book and wait for Confirmed; ask the supplier to cancel it from the hotel side.',
      'QueryOrders by reference and by cancelledTimeWindow around the cancellation: both must list it Cancelled.',
      'With callbacks configured, note the callback headers and body (profile callbacks.*).',
    ],
  },
  {
    id: 'manual.bookTimeout',
    title: 'Book answered with a timeout while the order is made',
    expected: () => 'HTTP 504 (or no answer), and the order listed by QueryOrders later',
    steps: [
      'Ask the supplier for the test flag or hotel that delays Book past its gateway timeout.',
      'Book with it; note the answer, then QueryOrders by the reference until it is listed: the time it took is the recovery the product waits through.',
    ],
  },
  {
    id: 'manual.creditLimit',
    title: "Book over the account's credit",
    expected: (p) => `HTTP 200 with code ${p.codes.creditLimitExceeded}, and no order`,
    steps: [
      "Ask the supplier to lower the test account's credit below one booking, or for the test flag that refuses on credit.",
      'Book; note the code, and QueryOrders by the reference: no order may be listed.',
      'Write the code into codes.creditLimitExceeded; if an order was made, remove creditLimitExceeded from book.surelyNotMadeCodes.',
    ],
  },
  {
    id: 'manual.callbacks',
    title: 'Order-status callbacks and their signature',
    expected: (p) =>
      `Book's "${p.callbacks.urlField}" field taken; callbacks signed ${p.callbacks.verification} in header ${p.callbacks.header}`,
    steps: [
      'Ask the supplier how callbacks are signed, and for the field that carries the callback URL.',
      'Book with SUPPLIER_CALLBACK_URL pointing at a receiver you can read; note the headers and the body of a callback.',
      'Write urlField, verification and header into callbacks; the secret goes to SUPPLIER_CALLBACK_SECRET, never the profile.',
    ],
  },
  {
    id: 'manual.limits',
    title: "The supplier's stated page size and rate limits",
    expected: (p) =>
      `one QueryOrders answer lists at most ${p.queryOrders.pageSize - 1} orders; limits overall ${p.rateLimits.overall}/s`,
    steps: [
      'Ask the supplier, in writing, for the most orders one QueryOrders answer lists and the production rate limits per key.',
      'Write them into queryOrders.pageSize and rateLimits; never raise pageSize on a guess (too high reads a cut listing as complete).',
    ],
  },
];
