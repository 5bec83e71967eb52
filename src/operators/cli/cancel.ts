/**
 * The booking CLI's `quote` and `cancel` verbs (`npm run book -- cancel --ref <reference>`): the fee a confirmed
 * booking's cancellation costs now, and a cancellation at exactly that fee, through the client's cancelBooking
 * (an Update-With-Start on `order:<reference>`: it works whether or not an order run is open).
 *
 * Exit codes (./common.ts EXIT, docs/cli.md): 0 quoted / the order ended cancelled; 1 usage (no terminal to ask
 * on and no --yes); 2 refused or not cancelled (the workflow refused, declined at the prompt, over --max-fee, a
 * fee other than --accept-fee, the supplier refused the Cancel, not cancellable); 3 no booking and no order run
 * for the reference; 4 the cancellation ended in a state a person must follow up (cancel-failed,
 * cancel-unresolved, cancel-stopped, changed-by-supplier).
 */
import { createInterface } from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import {
  awaitOrderOutcome,
  bookingWorkflowId,
  cancelBooking,
  orderWorkflowId,
  type CancelBookingAnswer,
  type CancelFeeQuote,
  type OrderOutcome,
} from '../../api/client/index';
import { ORDER_OUTCOMES_NEEDING_A_PERSON } from '../../api/contract/index';
import { operatorIdentity } from '../shared/identity';
import type { Money } from '../../api/values/index';
import { CliError, EXIT, formatMoney, isNotFound, refusalReason, sameMoney, type ExitCode } from './common';

export { refusalReason } from './common';

export const EXIT_CANCELLED = EXIT.OK;
export const EXIT_ERROR = EXIT.USAGE;
export const EXIT_NOT_CANCELLED = EXIT.REFUSED;

export interface CancelCommand {
  verb: 'quote' | 'cancel';
  reference: string;
  /** Cancel without asking (else: asked on a terminal, refused elsewhere). */
  yes: boolean;
  /** Cancel only when the quoted fee is known, in this currency and at most this much. */
  maxFee?: Money;
  /** Cancel only when the fresh quote is exactly this fee (scripts: the fee a person agreed to). */
  acceptFee?: Money;
  reason?: string;
  taskQueue?: string;
  json: boolean;
}

/** What the verb printed with --json: one line, the Go client's `cmd/book -cancel` shape (`refused` added). */
export interface CancelReport {
  quote?: CancelBookingAnswer;
  answer?: CancelBookingAnswer;
  outcome?: OrderOutcome;
  /** Why nothing was sent, or the workflow's refusal. */
  refused?: string;
}

/** Asks a yes/no question on the terminal; undefined when there is none to ask on. */
async function askOnTerminal(question: string): Promise<boolean | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export function formatFee(quote: CancelFeeQuote): string {
  if (quote.fee === null) return 'an unknown fee (the policy does not say)';
  const amount = `${quote.fee.amount} ${quote.fee.currency}`;
  const until = quote.changesAt ? `, until ${quote.changesAt}` : '';
  return quote.basis === 'free' ? `free (${amount}${until})` : `${amount}${until}`;
}

function withinLimit(fee: Money | null, limit: Money | undefined): boolean {
  return limit === undefined || (fee !== null && fee.currency === limit.currency && fee.amount <= limit.amount);
}

/** Order outcomes a person must follow up. */
const NEEDS_PERSON = new Set<OrderOutcome['kind']>(ORDER_OUTCOMES_NEEDING_A_PERSON);

function exitFor(outcome: OrderOutcome): ExitCode {
  if (outcome.kind === 'cancelled') return EXIT.OK;
  return NEEDS_PERSON.has(outcome.kind) ? EXIT.NEEDS_PERSON : EXIT.REFUSED;
}

/** Whether the reference has a booking workflow or an order run (an orphan the sweep found has only the latter). */
async function referenceExists(client: Client, reference: string): Promise<boolean> {
  for (const id of [bookingWorkflowId(reference), orderWorkflowId(reference)]) {
    const found = await client.workflow
      .getHandle(id)
      .describe()
      .then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      );
    if (found) return true;
  }
  return false;
}

/** Runs `quote` or `cancel`; the exit code as above. */
export async function runCancel(client: Client, command: CancelCommand, ask = askOnTerminal): Promise<number> {
  const { reference, json } = command;
  const say = (text: string) => {
    if (!json) console.log(text);
  };
  const print = (report: CancelReport) => {
    if (json) console.log(JSON.stringify(report));
  };
  /** Nothing sent: says why (stderr), prints the quote, and exits `code`. */
  const notSent = (quote: CancelBookingAnswer, why: string, code: ExitCode = EXIT.REFUSED): number => {
    console.error(why);
    print(code === EXIT.REFUSED ? { quote, refused: why } : { quote });
    return code;
  };
  if (!(await referenceExists(client, reference)))
    throw new CliError(EXIT.NOT_FOUND, `No booking (and no order run) for reference ${reference}`);
  try {
    const options = { taskQueue: command.taskQueue };
    const quote = await cancelBooking(client, reference, { confirm: false }, options);
    if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
    say(`Booking ${reference}: cancelling now costs ${formatFee(quote.quote)}`);
    if (command.verb === 'quote') {
      print({ quote });
      return EXIT.OK;
    }
    const fee = quote.quote.fee;
    if (!withinLimit(fee, command.maxFee)) {
      // The shape this always printed: the quote alone.
      say(`Not cancelled: the fee is over --max-fee ${formatMoney(command.maxFee!)}`);
      print({ quote });
      return EXIT.REFUSED;
    }
    if (command.acceptFee && !sameMoney(fee, command.acceptFee))
      return notSent(
        quote,
        `Not cancelled: the fee now is ${fee ? formatMoney(fee) : 'unknown'}, not --accept-fee ` +
          `${formatMoney(command.acceptFee)}; nothing was sent`,
      );
    if (!command.yes) {
      const yes = await ask(`Cancel booking ${reference} at ${formatFee(quote.quote)}? [y/N] `);
      if (yes === undefined)
        return notSent(quote, 'Not cancelled: confirm with --yes (no terminal to ask on)', EXIT.USAGE);
      if (!yes) {
        say('Not cancelled.');
        print({ quote });
        return EXIT.REFUSED;
      }
    }
    const request = {
      confirm: true,
      acceptedFee: fee,
      requestedBy: operatorIdentity(),
      ...(command.reason ? { reason: command.reason } : {}),
    };
    const answer = await cancelBooking(client, reference, request, options);
    if (answer.kind === 'cancel-refused') say(`The supplier refused the Cancel: ${answer.reason}`);
    else
      say(
        `Cancel sent${answer.kind === 'cancel-requested' && answer.ambiguous ? ' (answer unclear)' : ''}; following the order…`,
      );
    const outcome = await awaitOrderOutcome(client, reference);
    say(`Outcome: ${JSON.stringify(outcome, null, 2)}`);
    print({ quote, answer, outcome });
    return exitFor(outcome);
  } catch (err) {
    const reason = refusalReason(err);
    if (reason === undefined) throw err;
    console.error(`Refused: ${reason}`);
    print({ refused: reason });
    return EXIT.REFUSED;
  }
}
