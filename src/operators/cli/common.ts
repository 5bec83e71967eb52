/**
 * What the booking CLI's verbs share: the exit codes, the errors that carry one, money parsing.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Money } from '../../api/values/index';

/**
 * The exit codes of every verb (docs/cli.md). `book` keeps its own meaning of 2 and 3 (any outcome but
 * confirmed; the connection lost while following), as it always had.
 */
export const EXIT = {
  /** Done: found and printed, approved, rejected, quoted, cancelled, listed. */
  OK: 0,
  /** Usage or bad input (the message names the flag), or an error such as no Temporal service. */
  USAGE: 1,
  /** Refused: by the workflow (the update's validator said why) or by the CLI before sending (a fee that differs). */
  REFUSED: 2,
  /** Not found: no booking (and no order run) for the reference. */
  NOT_FOUND: 3,
  /** The booking or order ended in a state a person must follow up (unresolved, cancel-failed, ...). */
  NEEDS_PERSON: 4,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with a given exit code; the message is printed on stderr. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** What --json prints for it: `error` is usage, refused or not-found. */
    readonly kind: 'usage' | 'refused' | 'not-found' = exitCode === EXIT.REFUSED
      ? 'refused'
      : exitCode === EXIT.NOT_FOUND
        ? 'not-found'
        : 'usage',
  ) {
    super(message);
  }
}

export const usage = (message: string) => new CliError(EXIT.USAGE, message, 'usage');

/** Lenient, as `--expected-price` and `--max-fee` always were: `180USD`, `180 usd`. */
export function parseMoney(text: string, flag = '--expected-price'): Money {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]{3})$/.exec(text.trim());
  if (!m) throw usage(`${flag}: expected an amount and a currency, e.g. 180USD (got "${text}")`);
  return { amount: Number(m[1]), currency: m[2]!.toUpperCase() };
}

/**
 * Strict `<amount><CURRENCY>`, for flags that must match a price or fee exactly (`--price 250.66USD`,
 * `--accept-fee 12.50EUR`): digits, an optional decimal part, three capital letters; no sign, space or exponent.
 */
export function parseMoneyStrict(text: string | undefined, flag: string): Money {
  const m = text === undefined ? null : /^(0|[1-9][0-9]*)(\.[0-9]{1,6})?([A-Z]{3})$/.exec(text);
  if (!m)
    throw usage(
      `${flag}: expected <amount><CURRENCY>, e.g. 250.66USD (digits, an optional decimal part, ` +
        `a three-letter capital currency code; got ${text === undefined ? 'nothing' : `"${text}"`})`,
    );
  return { amount: Number(`${m[1]}${m[2] ?? ''}`), currency: m[3]! };
}

export function formatMoney(money: Money): string {
  return `${money.amount} ${money.currency}`;
}

export function sameMoney(a: Money | null | undefined, b: Money | null | undefined): boolean {
  return !!a && !!b && a.currency === b.currency && a.amount === b.amount;
}

/** The reason an update's validator (or handler) refused, or undefined for other errors. */
export function refusalReason(err: unknown): string | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  return err.cause instanceof Error ? err.cause.message : err.message;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

/** `--ref`, required by every verb but book. */
export function requireRef(verb: string, ref: string | undefined): string {
  if (!ref || ref.trim() === '') throw usage(`${verb}: --ref <reference> is required`);
  return ref;
}
