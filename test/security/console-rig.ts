/**
 * The operator console on a real listener with a recording fake of Temporal, for the security tier: what the
 * console asks of Temporal (in which namespace) is what the tests assert. Shared by test/security/console*.test.ts.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { startConsole, type ConsoleOptions, type ConsoleServer } from '../../src/operators/console/server';

export const ANA = 'ana-token-0123456789abcdef0123456789abcdef';
export const BO = 'bo-token-fedcba9876543210fedcba9876543210';
export const SECRET = 'console-session-secret-0123456789abcdef0123';

/** What the console asked Temporal to do: the notes started, the cancellations and quotes sent, the runs read. */
export interface Recorded {
  notes: Array<{ by: string; note: string }>;
  cancels: Array<{ requestedBy?: string; reason?: string }>;
  /** The reasons of the checks asked for (checkOrder signals). */
  checks: string[];
  /** The runs a booking's page asked to describe. */
  described: string[];
  /** The namespace of every call that starts, signals, updates or describes something, in order. */
  namespaces: string[];
}

export const emptyRecord = (): Recorded => ({ notes: [], cancels: [], checks: [], described: [], namespaces: [] });

/** The quote the fake's cancelBooking update answers with `{confirm: false}`. */
export const FAKE_QUOTE = {
  fee: { amount: 12.5, currency: 'EUR' },
  basis: 'policy',
  changesAt: '2030-01-01T00:00:00Z',
};

/**
 * A client of `namespace` that records what the console starts, answers a quote with FAKE_QUOTE and a cancellation as
 * requested, lists nothing, and finds no run. Fakes that share `connection` pass for clients over one connection.
 */
export function recordingClient(
  recorded: Recorded = emptyRecord(),
  namespace = 'default',
  connection: object = {},
): { client: Client; recorded: Recorded } {
  const client = {
    options: { namespace },
    connection,
    workflow: {
      start: async (_type: string, options: { args: Array<{ by: string; note: string }> }) => {
        recorded.namespaces.push(namespace);
        recorded.notes.push({ by: options.args[0]!.by, note: options.args[0]!.note });
        return {};
      },
      executeUpdateWithStart: async (
        _update: unknown,
        options: { args: Array<Recorded['cancels'][number] & { confirm: boolean }> },
      ) => {
        recorded.namespaces.push(namespace);
        const { confirm, ...request } = options.args[0]!;
        if (!confirm) return { kind: 'quote', quote: FAKE_QUOTE };
        recorded.cancels.push(request);
        return { kind: 'cancel-requested' };
      },
      signalWithStart: async (_type: string, options: { signalArgs: Array<{ reason: string }> }) => {
        recorded.namespaces.push(namespace);
        recorded.checks.push(options.signalArgs[0]!.reason);
        return { result: async () => ({ kind: 'checked', order: { status: 2 } }) };
      },
      // Nothing needs a person here: the page lists no item.
      list: async function* () {},
      // A booking's page reads runs: none here.
      getHandle: (workflowId: string) => ({
        describe: async () => {
          recorded.namespaces.push(namespace);
          recorded.described.push(workflowId);
          throw new WorkflowNotFoundError('not found', workflowId, undefined);
        },
      }),
    },
  } as unknown as Client;
  return { client, recorded };
}

const servers: ConsoleServer[] = [];

/** Closes every console startConsoleForTest started; call it in afterEach. */
export async function closeConsoles(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

/** A console with operators ana and bo over a recording client of `default` (or `options.clients`). */
export async function consoleServer(options: Partial<ConsoleOptions> = {}) {
  const { client, recorded } = recordingClient();
  const s = await startConsole({
    ...(options.clients ? {} : { client }),
    taskQueue: 'console-security',
    operators: { ana: ANA, bo: BO },
    sessionSecret: SECRET,
    ...options,
  });
  servers.push(s);
  return { s, recorded, port: Number(new URL(s.url).port) };
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

export const login = (s: ConsoleServer, token: string, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...FORM, ...headers },
    body: form({ token }),
  });

/** The session cookie (name=value) a login with `token` sets. */
export async function loggedIn(s: ConsoleServer, token = ANA): Promise<string> {
  const res = await login(s, token);
  expect(res.status).toBe(303);
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

/** The page's message (role=status), unescaped; '' when it shows none. */
export function messageIn(html: string): string {
  const m = /<p class="message" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return m.replace(/&(amp|lt|gt|quot|#39);/g, (_, c: string) =>
    c === 'amp' ? '&' : c === 'lt' ? '<' : c === 'gt' ? '>' : c === 'quot' ? '"' : "'",
  );
}

/** A form POST to `path` with `headers`: its status, where it redirects, and the message the page shows there. */
export async function post(
  s: ConsoleServer,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...FORM, ...headers },
    body: form(fields),
  });
  const location = res.headers.get('location') ?? '';
  let msg = '';
  let page = '';
  if (res.status === 303 && location.startsWith('/?')) {
    page = await (await fetch(new URL(location, s.url), { headers })).text();
    msg = messageIn(page);
  }
  return { status: res.status, location, msg, page };
}

/** A note without text, with `headers`: 303 "not done: note" once the console knows who asks, else 401. */
export async function probe(s: ConsoleServer, headers: Record<string, string> = {}, path = '/actions/handled') {
  const { status, msg } = await post(s, path, { workflowId: 'booking:x', runId: 'r', ref: 'x', note: ' ' }, headers);
  return { status, msg };
}
