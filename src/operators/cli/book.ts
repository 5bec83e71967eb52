/**
 * The booking CLI's `book` verb (`npm run book -- [book] [flags]`, ./main.ts): start a booking against the running
 * stack and follow it live to its outcome, reconnecting when the Temporal service goes away.
 *
 * Its exit codes, as they always were (the other verbs' are ./common.ts EXIT):
 *   0  the outcome is `confirmed`
 *   1  an error: bad options, no Temporal service at the start, a request refused
 *   2  any other outcome (printed)
 *   3  the connection to Temporal was lost and not back within --reconnect-seconds. The booking is not
 *      affected (it runs on the server and its workers); `npm run book -- --ref <ref>` follows it again.
 */
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
} from '../../api/client/index';
import { clientTracingFromEnv } from '../../runtime/observability/tracing';
import type { FlagValues } from './command-line';
import { parseMoney, usage } from './common';
import { withStackKeys } from '../shared/stack-keys';

const EXIT_CONFIRMED = 0;
const EXIT_NOT_CONFIRMED = 2;
const EXIT_CONNECTION_LOST = 3;

/** Progress is read this often; a lost service is noticed within this plus PROBE_MS. */
const TICK_MS = 1_000;
/** A service that does not answer a trivial call in this long counts as gone. */
const PROBE_MS = 2_000;
/** A query that takes longer means the worker is busy or away, not the service. */
const QUERY_MS = 5_000;

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
async function follow(
  session: Session,
  reference: string,
  reconnectMs: number,
  json: boolean,
): Promise<BookingOutcome | undefined> {
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
        if (!json) {
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

/** Starts (or attaches to) the booking and follows it; the exit code as above. */
export async function runBook(values: FlagValues): Promise<number> {
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
    ...(values.supplier ? { supplier: values.supplier } : {}),
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
  // OTEL_TRACES_EXPORTER=otlp|console: the booking's trace starts with this start (src/runtime/observability/tracing.ts).
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
    const outcome = await follow(session, reference, reconnectMs, values.json);
    if (!outcome) return EXIT_CONNECTION_LOST;
    console.log(values.json ? JSON.stringify(outcome) : `Outcome: ${JSON.stringify(outcome, null, 2)}`);
    if (!values.json) for (const line of alternatives(outcome)) console.log(line);
    return outcome.kind === 'confirmed' ? EXIT_CONFIRMED : EXIT_NOT_CONFIRMED;
  } finally {
    await session.close().catch(() => undefined);
    await tracing?.shutdown();
  }
}

/**
 * The supplier's fallback candidates of an unavailable or refused-price outcome, each with the command that books it:
 * a new booking, under a new reference, at the candidate's price. Nothing was booked on any of them.
 */
export function alternatives(outcome: BookingOutcome): string[] {
  const candidates = 'candidates' in outcome ? (outcome.candidates ?? []) : [];
  if (candidates.length === 0) return [];
  return [
    'The supplier offers instead (nothing booked; each is a new booking under a new reference):',
    ...candidates.map((c) => {
      const about = [
        c.name,
        c.price ? `${c.price.amount} ${c.price.currency}` : undefined,
        c.supplier !== undefined ? `supplier ${c.supplier}` : undefined,
      ]
        .filter(Boolean)
        .join(', ');
      return `  - ${c.ratePkgId}${about ? ` (${about})` : ''}: npm run book -- --rate-pkg ${c.ratePkgId}`;
    }),
  ];
}
