/**
 * The console's actions, each through the same workflows and helpers the CLI uses, in the namespace of the item it
 * acts on (validated against the namespaces the console watches):
 *  - check again now: an order run that verifies the order with QueryOrders (checkOrderNow);
 *  - quote, then cancel at the quoted fee: the cancelBooking update, which quotes again before it sends;
 *  - mark handled with a note: an operatorNoteWorkflow run, the durable record (recordHandled).
 * The actor is the operator the console authenticated, passed in; nothing a form says names who acted.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import { AlreadyHandledError, cancelBooking, checkOrderNow, recordHandled } from '../../api/client/index';
import { describeIssues } from '../../api/values/index';
import { ConsoleReference, type Flash } from './flash';
import { describeOrderOutcome } from './items';
import { NamespaceRefusedError, type WatchedNamespaces } from './namespaces';

/** What an action needs besides its form. */
export interface ActionContext {
  namespaces: WatchedNamespaces;
  /** Who acts: the operator the console authenticated. */
  operator: string;
  /** The task queue order and note runs start on. */
  taskQueue: string;
  /** How long "check again" waits for the order run's answer before it reports it as still running. */
  checkWaitMs: number;
}

const Namespace = z.string().max(200).optional();
const Target = z.object({
  namespace: Namespace,
  workflowId: z.string().min(1).max(400),
  runId: z.string().min(1).max(100),
  ref: z.string().max(100).default(''),
});
const CheckForm = Target.extend({ kind: z.string().max(40).default('') });
const QuoteForm = Target.extend({ ref: ConsoleReference });
const HandledForm = Target.extend({ note: z.string().trim().min(1).max(2000) });
const CancelForm = z.object({
  namespace: Namespace,
  ref: ConsoleReference,
  amount: z.coerce.number().nonnegative().optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  unknownFee: z.literal('1').optional(),
  reason: z.string().trim().min(1).max(500),
});

/** The action at `route` with `form`: the answer the page shows, or undefined for a route that is not an action. */
export async function runAction(route: string, form: URLSearchParams, ctx: ActionContext): Promise<Flash | undefined> {
  const fields = Object.fromEntries(form.entries());
  try {
    switch (route) {
      case '/actions/check':
        return await check(CheckForm.parse(fields), ctx);
      case '/actions/quote':
        return await quote(QuoteForm.parse(fields), ctx);
      case '/actions/cancel':
        return await cancel(CancelForm.parse(fields), ctx);
      case '/actions/handled':
        return await handled(HandledForm.parse(fields), ctx);
      default:
        return undefined;
    }
  } catch (err) {
    return { message: actionError(err) };
  }
}

async function check(f: z.infer<typeof CheckForm>, ctx: ActionContext): Promise<Flash> {
  const client = ctx.namespaces.clientFor(f.namespace);
  if (!f.ref) return { message: 'check: this item names no reference' };
  const run = await checkOrderNow(client, f.ref, {
    taskQueue: ctx.taskQueue,
    // The check's record names who asked, as the console knows them.
    reason: `asked in the operator console by ${ctx.operator}`,
    resolvesUnresolved: f.kind === 'unresolved-booking',
  });
  const outcome = await Promise.race([
    run.result(),
    new Promise<undefined>((r) => setTimeout(() => r(undefined), ctx.checkWaitMs).unref()),
  ]);
  return { message: outcome ? `${f.ref}: ${describeOrderOutcome(outcome)}` : `${f.ref}: the check is still running` };
}

async function quote(f: z.infer<typeof QuoteForm>, ctx: ActionContext): Promise<Flash> {
  const client = ctx.namespaces.clientFor(f.namespace);
  const answer = await cancelBooking(client, f.ref, { confirm: false }, { taskQueue: ctx.taskQueue });
  const { fee, changesAt } = answer.quote;
  return {
    message: `${f.ref}: quoted`,
    quote: {
      namespace: client.options.namespace,
      customerReferenceNo: f.ref,
      fee: fee ? { amount: fee.amount, currency: fee.currency } : null,
      ...(changesAt ? { changesAt } : {}),
    },
  };
}

async function cancel(f: z.infer<typeof CancelForm>, ctx: ActionContext): Promise<Flash> {
  const client = ctx.namespaces.clientFor(f.namespace);
  const acceptedFee = f.unknownFee
    ? null
    : f.amount !== undefined && f.currency
      ? { amount: f.amount, currency: f.currency }
      : undefined;
  if (acceptedFee === undefined) return { message: 'cancel: the quoted fee is missing; quote again' };
  const answer = await cancelBooking(
    client,
    f.ref,
    { confirm: true, acceptedFee, reason: f.reason, requestedBy: ctx.operator },
    { taskQueue: ctx.taskQueue },
  );
  return { message: `${f.ref}: ${answer.kind}${answer.kind === 'cancel-refused' ? ` (${answer.reason})` : ''}` };
}

async function handled(f: z.infer<typeof HandledForm>, ctx: ActionContext): Promise<Flash> {
  const client = ctx.namespaces.clientFor(f.namespace);
  await recordHandled(
    client,
    {
      item: { workflowId: f.workflowId, runId: f.runId, ...(f.ref ? { customerReferenceNo: f.ref } : {}) },
      note: f.note,
      by: ctx.operator,
    },
    { taskQueue: ctx.taskQueue },
  );
  return { message: `${f.ref || f.workflowId}: marked handled` };
}

/** An action's failure as the operator reads it: the workflow's reason, a field error, never a stack. */
function actionError(err: unknown): string {
  let text: string;
  if (err instanceof z.ZodError) text = describeIssues(err).join('; ');
  else if (err instanceof NamespaceRefusedError) text = err.message;
  else if (err instanceof AlreadyHandledError) text = 'this item was already marked handled';
  else if (err instanceof WorkflowUpdateFailedError) text = err.cause?.message ?? err.message;
  else text = err instanceof Error ? err.message : String(err);
  return `not done: ${text}`.slice(0, 500);
}
