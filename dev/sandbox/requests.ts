/**
 * One HTTP request from start to end: the ids echoed, the control API or a supplier operation routed to, the
 * call recorded, and the answer written as the handler asked (or a hang, a reset connection, a garbled body).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { control } from './control';
import { envelope, header, HttpAnswer, send, type Handled } from './http';
import { book } from './routes/book';
import { cancel } from './routes/cancel';
import { checkAvail } from './routes/check-avail';
import { queryOrders } from './routes/query-orders';
import { ticket } from './routes/ticket';
import type { SandboxOperation } from './options';
import type { CallInProgress, OperationHandler, SandboxState } from './state';

/** The server's request listener body: routes the request and answers it; a handler's throw is its answer. */
export function requestHandler(state: SandboxState): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { paths } = state.profile;
  const routes: Record<string, SandboxOperation> = {
    [paths.ticket]: 'ticket',
    [paths.checkAvail]: 'checkAvail',
    [paths.book]: 'book',
    [paths.queryOrders]: 'queryOrders',
    [paths.cancel]: 'cancel',
  };
  return async (req, res) => {
    const started = state.now();
    const url = new URL(req.url ?? '/', 'http://sandbox');
    for (const h of ['request-id', 'trace-id', 'session-id']) {
      const v = header(req, h);
      if (v) res.setHeader(h, v);
    }
    if (url.pathname.startsWith('/_sandbox/')) {
      const answer = await control(state, req, url).catch((e: unknown) =>
        e instanceof HttpAnswer ? e : new HttpAnswer(500, { error: String(e) }),
      );
      return send(res, answer, started, state.now);
    }
    const op = req.method === 'POST' ? routes[url.pathname] : undefined;
    if (!op) return send(res, new HttpAnswer(404, envelope(state.codes.notFound, 'not found')), started, state.now);
    const call: CallInProgress = { op, requestId: header(req, 'request-id'), traceId: header(req, 'trace-id') };
    let outcome: Handled;
    try {
      outcome = await operation(op)(state, req, res, call);
    } catch (err) {
      outcome =
        err instanceof HttpAnswer ? err : new HttpAnswer(500, envelope(state.codes.systemError, 'system error'));
    }
    answer(state, { req, res, call, outcome, started });
  };
}

/** The supplier operation's handler for the request. */
function operation(op: SandboxOperation): OperationHandler {
  return op === 'ticket'
    ? ticket
    : op === 'checkAvail'
      ? checkAvail
      : op === 'book'
        ? book
        : op === 'cancel'
          ? cancel
          : queryOrders;
}

/** Records the call with the status the client sees (0 for none) and answers as the handler asked. */
function answer(
  state: SandboxState,
  a: { req: IncomingMessage; res: ServerResponse; call: CallInProgress; outcome: Handled; started: number },
): void {
  const { req, res, call, outcome } = a;
  if (outcome === 'hang') return state.record({ ...call, httpStatus: 0 });
  if (outcome === 'reset') {
    state.record({ ...call, httpStatus: 0 });
    req.socket.destroy();
    return;
  }
  if ('malformed' in outcome) {
    state.record({ ...call, httpStatus: 200 });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(outcome.malformed);
    return;
  }
  state.record({ ...call, httpStatus: outcome.status });
  // A Retry-After the request's own Test header asked for (routes/book.ts, routes/cancel.ts) wins over the setting.
  if (outcome.status === 429 && state.runtime.retryAfter && !res.hasHeader('retry-after'))
    res.setHeader('retry-after', String(state.runtime.retryAfter));
  send(res, outcome, a.started, state.now);
}
