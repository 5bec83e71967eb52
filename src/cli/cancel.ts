/**
 * The booking CLI's `quote` and `cancel` verbs (`npm run book -- cancel --ref <reference>`): the fee a confirmed
 * booking's cancellation costs now, and a cancellation at exactly that fee, through the client's cancelBooking
 * (an Update-With-Start on `order:<reference>`: it works whether or not an order run is open).
 */
import { createInterface } from 'node:readline/promises';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import {
  awaitOrderOutcome,
  cancelBooking,
  type CancelBookingAnswer,
  type CancelFeeQuote,
  type OrderOutcome,
} from '../client';
import type { Money } from '../values';

export const EXIT_CANCELLED = 0;
export const EXIT_ERROR = 1;
export const EXIT_NOT_CANCELLED = 2;

export interface CancelCommand {
  verb: 'quote' | 'cancel';
  reference: string;
  /** Cancel without asking (else: asked on a terminal, refused elsewhere). */
  yes: boolean;
  /** Cancel only when the quoted fee is known, in this currency and at most this much. */
  maxFee?: Money;
  reason?: string;
  taskQueue?: string;
  json: boolean;
}

/** What the verb printed with --json: one line, the Go client's `cmd/book -cancel` shape. */
export interface CancelReport {
  quote: CancelBookingAnswer;
  answer?: CancelBookingAnswer;
  outcome?: OrderOutcome;
}

/** Asks a yes/no question on the terminal; false when there is none to ask on. */
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

/** The reason a cancelBooking update failed (order not confirmed, none, fee changed), or undefined for other errors. */
export function refusalReason(err: unknown): string | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  return err.cause instanceof Error ? err.cause.message : err.message;
}

/** Runs `quote` or `cancel`; the exit code: 0 quoted / cancelled, 2 not cancelled (printed), 1 an error. */
export async function runCancel(client: Client, command: CancelCommand, ask = askOnTerminal): Promise<number> {
  const { reference, json } = command;
  const say = (text: string) => {
    if (!json) console.log(text);
  };
  const print = (report: CancelReport) => {
    if (json) console.log(JSON.stringify(report));
  };
  try {
    const options = { taskQueue: command.taskQueue };
    const quote = await cancelBooking(client, reference, { confirm: false }, options);
    if (quote.kind !== 'quote') throw new Error(`expected a quote, got ${quote.kind}`);
    say(`Booking ${reference}: cancelling now costs ${formatFee(quote.quote)}`);
    if (command.verb === 'quote') {
      print({ quote });
      return EXIT_CANCELLED;
    }
    const fee = quote.quote.fee;
    if (!withinLimit(fee, command.maxFee)) {
      say(`Not cancelled: the fee is over --max-fee ${command.maxFee!.amount} ${command.maxFee!.currency}`);
      print({ quote });
      return EXIT_NOT_CANCELLED;
    }
    if (!command.yes) {
      const yes = await ask(`Cancel booking ${reference} at ${formatFee(quote.quote)}? [y/N] `);
      if (yes === undefined) {
        console.error('Not cancelled: confirm with --yes (no terminal to ask on)');
        print({ quote });
        return EXIT_ERROR;
      }
      if (!yes) {
        say('Not cancelled.');
        print({ quote });
        return EXIT_NOT_CANCELLED;
      }
    }
    const request = { confirm: true, acceptedFee: fee, ...(command.reason ? { reason: command.reason } : {}) };
    const answer = await cancelBooking(client, reference, request, options);
    if (answer.kind === 'cancel-refused') say(`The supplier refused the Cancel: ${answer.reason}`);
    else
      say(
        `Cancel sent${answer.kind === 'cancel-requested' && answer.ambiguous ? ' (answer unclear)' : ''}; following the order…`,
      );
    const outcome = await awaitOrderOutcome(client, reference);
    say(`Outcome: ${JSON.stringify(outcome, null, 2)}`);
    print({ quote, answer, outcome });
    return outcome.kind === 'cancelled' ? EXIT_CANCELLED : EXIT_NOT_CANCELLED;
  } catch (err) {
    const reason = refusalReason(err);
    if (reason === undefined) throw err;
    console.error(`Refused: ${reason}`);
    return EXIT_ERROR;
  }
}
