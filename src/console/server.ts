/**
 * The operator console: one page listing what needs a person (./items.ts) and the safe actions on each, all
 * through the same workflows and helpers the CLI uses, so the console decides nothing itself:
 *  - check again now: an order run that verifies the order with QueryOrders (checkOrderNow);
 *  - quote, then cancel at the quoted fee: the cancelBooking update, which quotes again before it sends;
 *  - mark handled with a note: an operatorNoteWorkflow run, the durable record (recordHandled).
 *
 * Access, as for the codec server: on loopback anyone on this machine; beyond loopback only with CONSOLE_TOKEN
 * (it refuses to start without one), given once as `/?token=…` (then an HttpOnly, SameSite=Strict cookie) or as
 * `Authorization: Bearer …`. Every POST must come from the console's own page (its Origin), and the Host header must
 * name the console, so another web page open in the operator's browser can neither act nor read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { AlreadyHandledError, cancelBooking, checkOrderNow, recordHandled } from '../client';
import { describeIssues } from '../values';
import { isLoopbackHost } from '../codec/server';
import { cookieValues, tokenMatches } from '../http/credentials';
import { readLimitedBody } from '../http/limited-body';
import { SEARCH_ATTRIBUTES } from '../contract/definitions';
import { describeOrderOutcome, listItemsNeedingAPerson, type ConsoleItem } from './items';
import { renderPage, type PageModel } from './page';

export interface ConsoleOptions {
  client: Client;
  host?: string;
  port?: number;
  /** Required beyond loopback. */
  token?: string;
  /** The task queue order and note runs start on. */
  taskQueue: string;
  /** The Temporal Web UI's address, for a link to each item's history. */
  webUiUrl?: string;
  /** How long "check again" waits for the order run's answer before it reports it as still running. */
  checkWaitMs?: number;
}

export class ConsoleConfigError extends Error {
  override readonly name = 'ConsoleConfigError';
}

export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

const MAX_FORM_BYTES = 16 * 1024;
const COOKIE = 'console_token';

const Target = z.object({
  workflowId: z.string().min(1).max(400),
  runId: z.string().min(1).max(100),
  ref: z.string().max(100).default(''),
});
const CheckForm = Target.extend({ kind: z.string().max(40).default('') });
const HandledForm = Target.extend({ note: z.string().trim().min(1).max(2000), by: z.string().trim().min(1).max(200) });
const CancelForm = z.object({
  ref: z.string().min(1).max(100),
  amount: z.coerce.number().nonnegative().optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  unknownFee: z.literal('1').optional(),
  reason: z.string().trim().min(1).max(500),
});

export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const { client, token, taskQueue } = options;
  const namespace = client.options.namespace;
  if (!token && !isLoopbackHost(host)) {
    throw new ConsoleConfigError(
      `CONSOLE_TOKEN: required to listen on ${host} (beyond loopback): the console shows bookings and cancels ` +
        'orders. Set a token of 16 characters or more, or listen on 127.0.0.1.',
    );
  }
  const matches = (given: string | undefined) => !!token && given !== undefined && tokenMatches(given, token);

  let selfHosts = new Set<string>();
  const authorized = (req: IncomingMessage, url: URL): boolean => {
    if (!token) return true;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const cookie = cookieValues(req.headers.cookie, COOKIE)[0];
    return (
      matches(bearer) ||
      matches(cookie === undefined ? undefined : decodeURIComponent(cookie)) ||
      matches(url.searchParams.get('token') ?? undefined)
    );
  };

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the page's own POSTs.
      'referrer-policy': 'same-origin',
      ...headers,
    });
    res.end(body);
  };
  const back = (res: ServerResponse, message: string, extra: Record<string, string> = {}) => {
    const q = new URLSearchParams({ msg: message, ...extra });
    res.writeHead(303, { location: `/?${q.toString()}`, 'cache-control': 'no-store' });
    res.end();
  };

  /** The page, or (503) why nothing could be listed: an operator must never read an empty list as "all is well". */
  async function page(url: URL): Promise<{ status: number; html: string }> {
    const links = options.webUiUrl ? { webUiUrl: options.webUiUrl } : {};
    let items: ConsoleItem[];
    try {
      items = await listItemsNeedingAPerson(client);
    } catch (err) {
      return { status: 503, html: renderPage({ items: [], ...links, problem: listingProblem(err, namespace) }) };
    }
    const model: PageModel = { items, ...links };
    const msg = url.searchParams.get('msg');
    if (msg) model.message = msg.slice(0, 500);
    const quoteRef = url.searchParams.get('quoteRef');
    if (quoteRef) {
      const amount = url.searchParams.get('quoteAmount');
      const currency = url.searchParams.get('quoteCurrency');
      const changesAt = url.searchParams.get('quoteChangesAt');
      model.quote = {
        customerReferenceNo: quoteRef,
        fee: amount !== null && currency ? { amount: Number(amount), currency } : null,
        ...(changesAt ? { changesAt } : {}),
      };
    }
    return { status: 200, html: renderPage(model) };
  }

  async function act(route: string, form: URLSearchParams, res: ServerResponse): Promise<void> {
    const fields = Object.fromEntries(form.entries());
    if (route === '/actions/check') {
      const f = CheckForm.parse(fields);
      if (!f.ref) return back(res, 'check: this item names no reference');
      const run = await checkOrderNow(client, f.ref, {
        taskQueue,
        reason: 'asked in the operator console',
        resolvesUnresolved: f.kind === 'unresolved-booking',
      });
      const outcome = await Promise.race([
        run.result(),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), options.checkWaitMs ?? 20_000).unref()),
      ]);
      return back(res, outcome ? `${f.ref}: ${describeOrderOutcome(outcome)}` : `${f.ref}: the check is still running`);
    }
    if (route === '/actions/quote') {
      const f = Target.parse(fields);
      const answer = await cancelBooking(client, f.ref, { confirm: false }, { taskQueue });
      const { fee, changesAt } = answer.quote;
      return back(res, `${f.ref}: quoted`, {
        quoteRef: f.ref,
        ...(fee ? { quoteAmount: String(fee.amount), quoteCurrency: fee.currency } : {}),
        ...(changesAt ? { quoteChangesAt: changesAt } : {}),
      });
    }
    if (route === '/actions/cancel') {
      const f = CancelForm.parse(fields);
      const acceptedFee = f.unknownFee
        ? null
        : f.amount !== undefined && f.currency
          ? { amount: f.amount, currency: f.currency }
          : undefined;
      if (acceptedFee === undefined) return back(res, 'cancel: the quoted fee is missing; quote again');
      const answer = await cancelBooking(
        client,
        f.ref,
        { confirm: true, acceptedFee, reason: f.reason, requestedBy: 'operator console' },
        { taskQueue },
      );
      return back(res, `${f.ref}: ${answer.kind}${answer.kind === 'cancel-refused' ? ` (${answer.reason})` : ''}`);
    }
    if (route === '/actions/handled') {
      const f = HandledForm.parse(fields);
      await recordHandled(
        client,
        {
          item: { workflowId: f.workflowId, runId: f.runId, ...(f.ref ? { customerReferenceNo: f.ref } : {}) },
          note: f.note,
          by: f.by,
        },
        { taskQueue },
      );
      return back(res, `${f.ref || f.workflowId}: marked handled`);
    }
    send(res, 404, 'not found');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a page elsewhere that resolves its own name to this address must not be served.
    if (!selfHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, 'wrong host');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (!authorized(req, url)) return send(res, 401, 'unauthorized: open /?token=<CONSOLE_TOKEN>');
    if (req.method === 'GET' && url.pathname === '/') {
      const given = url.searchParams.get('token');
      if (given !== null) {
        // Trade the token in the address for a cookie, and drop it from the address bar and history.
        return void res
          .writeHead(303, {
            location: '/',
            'set-cookie': `${COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`,
          })
          .end();
      }
      const { status, html } = await page(url);
      return send(res, status, html);
    }
    if (req.method === 'POST' && url.pathname.startsWith('/actions/')) {
      // Only the console's own page may act: a browser sends Origin with every POST.
      const origin = req.headers.origin;
      if (origin !== undefined && !selfHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase())) {
        return send(res, 403, 'origin not allowed');
      }
      if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        return send(res, 415, 'expected a form');
      }
      const body = await readLimitedBody(req, MAX_FORM_BYTES);
      if (!body) return send(res, 413, 'form too large');
      try {
        return await act(url.pathname, new URLSearchParams(body.toString('utf8')), res);
      } catch (err) {
        return back(res, actionError(err));
      }
    }
    send(res, 404, 'not found');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, 'internal error');
      console.error('console: request failed', err instanceof Error ? err.message : err);
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const names = isLoopbackHost(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host];
  selfHosts = new Set(names.map((n) => `${n}:${port}`.toLowerCase()));
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An action's failure as the operator reads it: the workflow's reason, a field error, never a stack. */
function actionError(err: unknown): string {
  if (err instanceof z.ZodError) return `not done: ${describeIssues(err).join('; ')}`;
  if (err instanceof AlreadyHandledError) return 'not done: this item was already marked handled';
  if (err instanceof WorkflowUpdateFailedError) return `not done: ${err.cause?.message ?? err.message}`;
  return `not done: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Why the console could not list what needs a person, as one sentence for the page. The likeliest cause on a
 * cluster we did not set up: the namespace lacks the search attributes the console's queries filter on.
 */
export function listingProblem(err: unknown, namespace: string): string {
  const text = [err, (err as { cause?: unknown })?.cause].map((e) => (e instanceof Error ? e.message : '')).join(' ');
  if (/not a valid search attribute|no mapping defined for search attribute/i.test(text)) {
    return (
      `Nothing can be listed: namespace "${namespace}" lacks the search attributes the console filters on ` +
      `(${SEARCH_ATTRIBUTES.map((a) => a.name).join(', ')}). Run \`npm run temporal:setup\` against this ` +
      'cluster, or start a booking worker with WORKER_REGISTER_SEARCH_ATTRIBUTES=on, then reload.'
    );
  }
  const detail = text.trim().slice(0, 300) || String(err).slice(0, 300);
  return `Nothing can be listed: Temporal did not answer the list of namespace "${namespace}" (${detail}). Reload to try again.`;
}
