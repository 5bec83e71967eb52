/** `POST /actions/<name>`: a safe action on one item (./../actions.ts), from the console's own page only. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readLimitedBody } from '../../../servers/http/limited-body';
import type { Actor } from '../access';
import { runAction } from '../actions';
import { fromOwnPage, type ConsoleContext } from '../context';
import { flashToken } from '../flash';
import { redirect, send } from '../respond';

const MAX_FORM_BYTES = 16 * 1024;

/** Runs the action, then back to the list with its answer signed for this login (the page shows nothing else). */
export async function actionRoute(
  ctx: ConsoleContext,
  req: IncomingMessage,
  url: URL,
  who: Actor,
  res: ServerResponse,
): Promise<void> {
  // Only the console's own page may act: a browser sends Origin with every POST.
  if (!fromOwnPage(ctx, req)) return send(res, 403, 'origin not allowed');
  if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return send(res, 415, 'expected a form');
  }
  const body = await readLimitedBody(req, MAX_FORM_BYTES);
  if (!body) return send(res, 413, 'form too large', { connection: 'close' });
  const flash = await runAction(url.pathname, new URLSearchParams(body.toString('utf8')), {
    namespaces: ctx.namespaces,
    operator: who.operator,
    taskQueue: ctx.options.taskQueue,
    checkWaitMs: ctx.options.checkWaitMs ?? 20_000,
  });
  if (!flash) return send(res, 404, 'not found');
  redirect(
    res,
    `/?${new URLSearchParams({ flash: flashToken(ctx.keys.secret, who.login, flash, ctx.now()) }).toString()}`,
  );
}
