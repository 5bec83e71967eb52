/**
 * The booking CLI, `npm run book -- [verb] [flags]`: `book` (the default) starts a booking and follows it;
 * `status`, `approve`, `reject`, `quote`, `cancel` and `list` act on bookings that exist. `npm run book -- --help`
 * lists them (./command-line.ts declares every verb and flag); docs/cli.md has examples, exit codes and JSON.
 */
import type { Client } from '@temporalio/client';
import { connectClient } from '../../api/client/index';
import { runBook } from './book';
import { runCancel } from './cancel';
import { readCommandLine, type FlagValues } from './command-line';
import { CliError, EXIT, parseMoney, parseMoneyStrict, requireRef, usage } from './common';
import { withStackKeys } from '../shared/stack-keys';
import { runApproval, runList, runStatus, type VerbIo } from './verbs';

/** Text on stdout unless --json; with --json, exactly one JSON object on stdout. */
function verbIo(json: boolean): VerbIo {
  return {
    json,
    say: (text) => {
      if (!json) console.log(text);
    },
    print: (value) => {
      if (json) console.log(JSON.stringify(value));
    },
  };
}

/** The verbs for a booking that exists: one client, one request or a few, then closed. */
async function withClient<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(withStackKeys(process.env));
  try {
    return await run(client);
  } finally {
    await client.connection.close().catch(() => undefined);
  }
}

/** `quote` / `cancel`: one request each way, no reconnect loop (a lost connection is an error; ask again). */
function cancelVerb(verb: 'quote' | 'cancel', values: FlagValues): Promise<number> {
  const reference = requireRef(verb, values.ref);
  const maxFee = values['max-fee'] !== undefined ? parseMoney(values['max-fee'], '--max-fee') : undefined;
  const acceptFee =
    values['accept-fee'] !== undefined ? parseMoneyStrict(values['accept-fee'], '--accept-fee') : undefined;
  return withClient((client) =>
    runCancel(client, {
      verb,
      reference,
      yes: values.yes!,
      json: values.json!,
      ...(maxFee ? { maxFee } : {}),
      ...(acceptFee ? { acceptFee } : {}),
      ...(values.reason ? { reason: values.reason } : {}),
      ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}),
    }),
  );
}

/** `approve` / `reject`: bad input is refused before connecting. */
function approvalVerb(verb: 'approve' | 'reject', values: FlagValues, io: VerbIo): Promise<number> {
  const reference = requireRef(verb, values.ref);
  const command = {
    verb,
    reference,
    ...(values.price !== undefined ? { price: values.price } : {}),
    ...(values.by !== undefined ? { by: values.by } : {}),
  };
  if (command.price !== undefined) parseMoneyStrict(command.price, '--price');
  else if (verb === 'approve')
    throw usage(
      'approve: --price <amount><CURRENCY> is required, e.g. --price 250.66USD (the price awaiting approval)',
    );
  return withClient((client) => runApproval(client, command, io));
}

/** Runs what the command line asks for; resolves to the exit code. */
async function main(args: string[]): Promise<number> {
  const line = readCommandLine(args);
  if (line.kind === 'help') {
    console.log(line.text);
    return EXIT.OK;
  }
  const { verb, values } = line;
  const io = verbIo(values.json!);
  switch (verb) {
    case 'book':
      return runBook(values);
    case 'status': {
      const reference = requireRef(verb, values.ref);
      return withClient((client) => runStatus(client, reference, io));
    }
    case 'approve':
    case 'reject':
      return approvalVerb(verb, values, io);
    case 'quote':
    case 'cancel':
      return cancelVerb(verb, values);
    case 'list':
      return withClient((client) => runList(client, { stage: values.stage, limit: values.limit }, io));
  }
}

/**
 * The error and the cause it wraps: a workflow that failed says why in its cause (a booking refused for its input
 * names the field there), which "Workflow execution failed" alone hides.
 */
function withCause(err: Error): string {
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && !err.message.includes(cause) ? `${err.message}: ${cause}` : err.message;
}

const args = process.argv.slice(2);
main(args).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = err instanceof CliError ? err.exitCode : EXIT.USAGE;
    const message = err instanceof Error ? withCause(err) : String(err);
    console.error(message);
    // --json: still one object on stdout (nothing else was printed there before an error). Read from the raw
    // arguments, since a command line that did not parse has no values.
    if (args.includes('--json'))
      console.log(JSON.stringify({ error: err instanceof CliError ? err.kind : 'error', message }));
    process.exit(code);
  },
);
