/**
 * `npm run book -- [book] [options]`: start a booking against the running stack and follow it live; and the
 * verbs for a booking that exists (docs/cli.md has each verb's flags, an example, its exit codes and JSON):
 *
 *   status  --ref R                         the booking's state (or outcome) and its latest order run's (./verbs.ts)
 *   approve --ref R --price 250.66USD       answer the booking's price question: yes, at exactly that price
 *   reject  --ref R [--price 250.66USD]     ... no (the price defaults to the one awaiting approval)
 *   quote   --ref R                         the cancellation fee now (./cancel.ts)
 *   cancel  --ref R [--yes] [--accept-fee 12.50EUR] [--max-fee 20USD] [--reason TEXT]
 *                                           quote, ask (a terminal, or --yes), cancel at that fee
 *   list    --stage unresolved [--limit N]  workflows whose BookingStage is that stage (a visibility query)
 *
 * Every verb takes --json (one JSON object on stdout; notices on stderr) and --task-queue.
 *
 * book's options:
 *   --ref <uuid>            the booking reference (default: a new one; printed so you can retry with it).
 *                           A reference that already has a workflow attaches to it: nothing is booked twice.
 *   --rate-pkg <id>         rate package id (default: pkg-demo-deluxe)
 *   --expected-price <amount><currency>, e.g. 180USD: the price the user saw
 *   --on-price-exceeded reject|ask   and --max-increase-percent <n>
 *   --scenario <Test header>, e.g. 'book=504AfterCreate&confirmAfterQueries=3' (sandbox supplier)
 *   --task-queue <name>     default BOOKING_TASK_QUEUE or hotel-booking
 *   --reconnect-seconds <n> how long to keep trying when the Temporal service goes away (default 60)
 *   --json                  print only the outcome, as JSON (connection notices go to stderr)
 *
 * Exit codes of the other verbs (./common.ts EXIT): 0 done, 1 usage or bad input (the message names the flag)
 * or an error, 2 refused (by the workflow, or by the CLI before sending), 3 not found, 4 ended in a state a
 * person must follow up. book's, as they always were:
 *   0  the outcome is `confirmed`
 *   1  an error: bad options, no Temporal service at the start, a request refused
 *   2  any other outcome (printed)
 *   3  the connection to Temporal was lost and not back within --reconnect-seconds. The booking is not
 *      affected (it runs on the server and its workers); `npm run book -- --ref <ref>` follows it again.
 */
import { parseArgs } from 'node:util';
import { Connection, isGrpcServiceError, type Client } from '@temporalio/client';
import {
  awaitOutcome,
  connectClient,
  getBookingState,
  newReference,
  startBooking,
  type BookingOutcome,
  type BookingRequest,
  type BookingState,
  type ConnectClientOptions,
} from '../client';
import { clientTracingFromEnv } from '../observability/tracing';
import { runCancel } from './cancel';
import { CliError, EXIT, parseMoney, parseMoneyStrict, requireRef, usage, withStackKeys } from './common';
import { runApproval, runList, runStatus, type VerbIo } from './verbs';

const EXIT_CONFIRMED = 0;
const EXIT_NOT_CONFIRMED = 2;
const EXIT_CONNECTION_LOST = 3;

/** Progress is read this often; a lost service is noticed within this plus PROBE_MS. */
const TICK_MS = 1_000;
/** A service that does not answer a trivial call in this long counts as gone. */
const PROBE_MS = 2_000;
/** A query that takes longer means the worker is busy or away, not the service. */
const QUERY_MS = 5_000;

const OPTIONS = {
  ref: { type: 'string' },
  'rate-pkg': { type: 'string', default: 'pkg-demo-deluxe' },
  'expected-price': { type: 'string' },
  'on-price-exceeded': { type: 'string' },
  'max-increase-percent': { type: 'string' },
  scenario: { type: 'string' },
  'task-queue': { type: 'string' },
  'reconnect-seconds': { type: 'string', default: '60' },
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', default: false },
  'max-fee': { type: 'string' },
  'accept-fee': { type: 'string' },
  reason: { type: 'string' },
  price: { type: 'string' },
  by: { type: 'string' },
  stage: { type: 'string' },
  limit: { type: 'string' },
} as const;

/** The command line; a bad one is a usage error naming the flag (parseArgs says "Unknown option '--x'"). */
function parseCommandLine() {
  try {
    return parseArgs({ allowPositionals: true, options: OPTIONS });
  } catch (err) {
    throw usage(err instanceof Error ? err.message : String(err));
  }
}

/** Set by main() once the command line parsed (module scope for the book verb's helpers). */
let values: ReturnType<typeof parseCommandLine>['values'] = {
  'rate-pkg': 'pkg-demo-deluxe',
  'reconnect-seconds': '60',
  json: process.argv.includes('--json'),
  yes: false,
};

function progressLine(s: BookingState): string {
  const next = s.nextPollAt ? Math.max(0, Math.round((Date.parse(s.nextPollAt) - Date.now()) / 1000)) : undefined;
  const last = s.polls[s.polls.length - 1];
  return [
    `stage=${s.stage}`,
    `book attempts=${s.bookAttempts.length}`,
    `polls=${s.polls.length}`,
    last ? `last poll=${last.result}${last.status !== undefined ? `(${last.status})` : ''}` : undefined,
    next !== undefined && s.stage === 'recovering' ? `next poll in ${next}s` : undefined,
  ]
    .filter(Boolean)
    .join('  ');
}

const sleep = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));

/** gRPC status codes (@grpc/grpc-js is the SDK's dependency, not ours). */
const grpcStatus = { DEADLINE_EXCEEDED: 4, UNAVAILABLE: 14 } as const;

/** The service did not answer (down, unreachable, or too slow to tell): the kind of failure a reconnect can fix. */
function isConnectionError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (isGrpcServiceError(e)) return e.code === grpcStatus.UNAVAILABLE || e.code === grpcStatus.DEADLINE_EXCEEDED;
  }
  return false;
}

/**
 * The CLI's client, replaced by a new connection when the service comes back: gRPC's own reconnect backs off
 * for up to two minutes after repeated failures, so a fresh connection notices a returned service sooner.
 */
class Session {
  readonly address: string;
  private released = false;
  constructor(
    public client: Client,
    private readonly env: NodeJS.ProcessEnv,
    private readonly options: ConnectClientOptions = {},
  ) {
    // connectClient always makes a Connection; the type is wider for other SDK connection kinds.
    this.address =
      client.connection instanceof Connection ? client.connection.options.address : 'the configured address';
  }

  /** Whether the service answers a trivial call now. */
  reachable(): Promise<boolean> {
    return this.client
      .withDeadline(Date.now() + PROBE_MS, () => this.client.workflowService.getSystemInfo({}))
      .then(
        () => true,
        () => false,
      );
  }

  /**
   * One attempt at a new connection, of at most `timeoutMs`; true when it is in use. The old one is closed
   * once `pending` (the result() call on it) settles: closed under the SDK's gRPC retry timer, that timer
   * throws 'Channel has been shut down' where nothing can catch it.
   */
  async reconnect(timeoutMs: number, pending: Promise<unknown>): Promise<boolean> {
    const fresh = await connectClient(this.env, { ...this.options, connectTimeoutMs: timeoutMs }).catch(
      () => undefined,
    );
    if (!fresh) return false;
    closeAfter(this.client, pending);
    this.client = fresh;
    return true;
  }

  /** Closes the client once `pending` settles (see reconnect); close() then leaves it alone. */
  release(pending: Promise<unknown>): void {
    closeAfter(this.client, pending);
    this.released = true;
  }

  close(): Promise<void> {
    return this.released ? Promise.resolve() : this.client.connection.close();
  }
}

function closeAfter(client: Client, pending: Promise<unknown>): void {
  void pending.then(() => client.connection.close()).catch(() => undefined);
}

type Watch = { outcome: BookingOutcome } | { error: unknown };

/** The outcome, or why waiting for it stopped; never rejects, so a watch left behind on a dead connection is harmless. */
function watchOutcome(client: Client, reference: string): Promise<Watch> {
  return awaitOutcome(client, reference).then(
    (outcome) => ({ outcome }),
    (error: unknown) => ({ error }),
  );
}

/**
 * Follows the booking to its outcome. When the service goes away it says so once, keeps trying for
 * `reconnectMs`, and says when it is back; returns undefined if it never came back in that time.
 */
async function follow(session: Session, reference: string, reconnectMs: number): Promise<BookingOutcome | undefined> {
  const notice = (text: string) => console.error(text);
  let watch = watchOutcome(session.client, reference);
  let lastLine = '';
  let lostAt: number | undefined;
  for (;;) {
    if (lostAt === undefined) {
      const ended = await Promise.race([watch, sleep(TICK_MS)]);
      if (ended && 'outcome' in ended) return ended.outcome;
      if (await session.reachable()) {
        if (ended) {
          // result() stopped on a connection that answers again: wait anew. Anything else is a real error.
          if (!isConnectionError(ended.error)) throw ended.error;
          watch = watchOutcome(session.client, reference);
        }
        if (!values.json) {
          const state = await session.client
            .withDeadline(Date.now() + QUERY_MS, () => getBookingState(session.client, reference))
            .catch(() => undefined);
          const line = state ? progressLine(state) : 'waiting for the worker…';
          if (line !== lastLine) console.log(`  ${line}`);
          lastLine = line;
        }
        continue;
      }
      lostAt = Date.now();
      notice(
        `lost the connection to Temporal at ${session.address}; retrying for up to ${reconnectMs / 1000} s. ` +
          `The booking continues on the server: \`npm run book -- --ref ${reference}\` follows it again.`,
      );
    }
    const left = lostAt + reconnectMs - Date.now();
    if (left <= 0) {
      session.release(watch);
      notice(
        `gave up: Temporal at ${session.address} has not answered for ${reconnectMs / 1000} s. The booking ` +
          `continues on the server; follow it with \`npm run book -- --ref ${reference}\`.`,
      );
      return undefined;
    }
    await sleep(Math.min(TICK_MS, left));
    if (await session.reconnect(Math.max(1, Math.min(PROBE_MS, lostAt + reconnectMs - Date.now())), watch)) {
      notice(
        `connection to Temporal at ${session.address} is back after ${Math.round((Date.now() - lostAt) / 1000)} s`,
      );
      lostAt = undefined;
      lastLine = '';
      watch = watchOutcome(session.client, reference);
    }
  }
}

function reconnectSeconds(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw usage(`--reconnect-seconds: expected a number of seconds (got "${text}")`);
  return n;
}

const VERBS = ['book', 'status', 'approve', 'reject', 'quote', 'cancel', 'list'] as const;
type Verb = (typeof VERBS)[number];

/** The flags each verb takes beyond --json and --task-queue; any other is a usage error naming it. */
const VERB_FLAGS: Record<Verb, readonly string[]> = {
  book: [
    'ref',
    'rate-pkg',
    'expected-price',
    'on-price-exceeded',
    'max-increase-percent',
    'scenario',
    'reconnect-seconds',
  ],
  status: ['ref'],
  approve: ['ref', 'price', 'by'],
  reject: ['ref', 'price', 'by'],
  quote: ['ref'],
  cancel: ['ref', 'yes', 'max-fee', 'accept-fee', 'reason'],
  list: ['stage', 'limit'],
};

function checkFlags(verb: Verb, given: string[]): void {
  const allowed = new Set([...VERB_FLAGS[verb], 'json', 'task-queue']);
  const defaults = new Set(['rate-pkg', 'reconnect-seconds', 'json', 'yes']);
  const wrong = given.filter((flag) => !allowed.has(flag) && !defaults.has(flag));
  // Defaulted flags count only when written on the command line.
  const written = given.filter(
    (flag) => defaults.has(flag) && !allowed.has(flag) && process.argv.some((a) => a.split('=')[0] === `--${flag}`),
  );
  const bad = [...wrong, ...written];
  if (bad.length > 0) throw usage(`${verb}: --${bad[0]} is not one of its flags (docs/cli.md)`);
}

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
function cancelVerb(verb: 'quote' | 'cancel'): Promise<number> {
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

async function main(): Promise<number> {
  const parsed = parseCommandLine();
  values = parsed.values;
  const [verbText = 'book', ...extra] = parsed.positionals;
  if (extra.length > 0) throw usage(`unexpected arguments: ${extra.join(' ')}`);
  if (!(VERBS as readonly string[]).includes(verbText))
    throw usage(`unknown command "${verbText}": one of ${VERBS.join(', ')} (book is the default)`);
  const verb = verbText as Verb;
  checkFlags(verb, Object.keys(values));
  const io = verbIo(values.json!);
  switch (verb) {
    case 'quote':
    case 'cancel':
      return cancelVerb(verb);
    case 'status': {
      const reference = requireRef(verb, values.ref);
      return withClient((client) => runStatus(client, reference, io));
    }
    case 'approve':
    case 'reject': {
      const reference = requireRef(verb, values.ref);
      const command = {
        verb,
        reference,
        ...(values.price !== undefined ? { price: values.price } : {}),
        ...(values.by !== undefined ? { by: values.by } : {}),
      };
      // Bad input is refused before connecting.
      if (command.price !== undefined) parseMoneyStrict(command.price, '--price');
      else if (verb === 'approve')
        throw usage(
          'approve: --price <amount><CURRENCY> is required, e.g. --price 250.66USD (the price awaiting approval)',
        );
      return withClient((client) => runApproval(client, command, io));
    }
    case 'list': {
      const command = { stage: values.stage, limit: values.limit };
      return withClient((client) => runList(client, command, io));
    }
    case 'book':
      return bookVerb();
  }
}

async function bookVerb(): Promise<number> {
  const reconnectMs = reconnectSeconds(values['reconnect-seconds']!) * 1000;
  const reference = values.ref ?? newReference();
  const request: BookingRequest = {
    customerReferenceNo: reference,
    ratePkgId: values['rate-pkg']!,
    // Demo traveller: the sandbox supplier accepts any well-formed holder and guests.
    holder: {
      firstName: 'Demo',
      lastName: 'Traveller',
      email: 'demo@example.com',
      phone: { countryCode: 'US', countryNumber: 1, number: '5550100' },
    },
    guests: [
      { roomIndex: 0, firstName: 'Demo', lastName: 'Traveller', nationalityCode: 'US', age: 30, isChild: false },
    ],
    ...(values['expected-price'] ? { expectedPrice: parseMoney(values['expected-price']) } : {}),
    ...(values['on-price-exceeded'] || values['max-increase-percent']
      ? {
          priceChangePolicy: {
            onExceeded: (values['on-price-exceeded'] ?? 'reject') as 'reject' | 'ask',
            ...(values['max-increase-percent'] ? { maxIncreasePercent: Number(values['max-increase-percent']) } : {}),
          },
        }
      : {}),
    ...(values.scenario ? { context: { test: values.scenario } } : {}),
  };

  const env = withStackKeys(process.env);
  // OTEL_TRACES_EXPORTER=otlp|console: the booking's trace starts with this start (src/observability/tracing.ts).
  const tracing = clientTracingFromEnv(env);
  const options: ConnectClientOptions = tracing ? { plugins: [tracing.plugin] } : {};
  const session = new Session(await connectClient(env, options), env, options);
  try {
    const handle = await startBooking(session.client, request, { taskQueue: values['task-queue'] }).catch(
      (err: unknown) => {
        // The start may have reached the server: only the same reference retries it without a second booking.
        if (!isConnectionError(err)) throw err;
        throw new Error(
          `lost the connection to Temporal at ${session.address} while starting booking ${reference}; it may ` +
            `have started. \`npm run book -- --ref ${reference}\` retries safely.`,
          { cause: err },
        );
      },
    );
    if (!values.json)
      console.log(
        values.ref
          ? `Booking ${reference}: workflow ${handle.workflowId} (new, or the one this reference already had)`
          : `Booking ${reference} started as workflow ${handle.workflowId}`,
      );
    const outcome = await follow(session, reference, reconnectMs);
    if (!outcome) return EXIT_CONNECTION_LOST;
    console.log(values.json ? JSON.stringify(outcome) : `Outcome: ${JSON.stringify(outcome, null, 2)}`);
    return outcome.kind === 'confirmed' ? EXIT_CONFIRMED : EXIT_NOT_CONFIRMED;
  } finally {
    await session.close().catch(() => undefined);
    await tracing?.shutdown();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = err instanceof CliError ? err.exitCode : EXIT.USAGE;
    const message = err instanceof Error ? err.message : String(err);
    console.error(message);
    // --json: still one object on stdout (nothing else was printed there before an error).
    if (values.json) console.log(JSON.stringify({ error: err instanceof CliError ? err.kind : 'error', message }));
    process.exit(code);
  },
);
