/**
 * What needs a person, read from Temporal's visibility and the workflows' own results: bookings that ended
 * `unresolved`, order runs whose latest run ended in a state a person must follow up (cancel-failed,
 * cancel-unresolved, cancel-stopped, changed-by-supplier), and each reference a reconciliation sweep reported.
 * An item leaves the list once it has an operator's note (operatorNoteWorkflow), and an unresolved booking also
 * once a later order check found its order in a final status; one whose caller asked to cancel it, only once its
 * order is Cancelled. Results are decoded by the client's data converter (the workers' keys); only references,
 * statuses, fees, reasons and the poll log are kept: no guest data.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import {
  BookingStageKey,
  CustomerReferenceNoKey,
  ORDER_OUTCOMES_NEEDING_A_PERSON,
  ORDER_WORKFLOW_TYPE,
  orderWorkflowId,
  SWEEP_WORKFLOW_TYPE,
  WORKFLOW_TYPE,
  type BookingOutcome,
  type OrderOutcome,
  type PollRecord,
} from '../../api/contract/index';
import { OPERATOR_NOTE_WORKFLOW_TYPE, operatorNoteWorkflowId } from '../../api/client/index';
import { runBuildOf, type RunBuild } from '../shared/run-build';

export type ItemKind = 'unresolved-booking' | 'order' | 'sweep-finding';

export interface ConsoleItem {
  kind: ItemKind;
  /** The namespace the run is in: every action on the item goes there. Set by every listing. */
  namespace?: string;
  /** The run that asked for a person. */
  workflowId: string;
  runId: string;
  customerReferenceNo?: string;
  /** Its BookingStage (`unresolved`, `order-cancel-failed`, …) or, for a sweep finding, `orphan` / `mismatch`. */
  stage: string;
  /** The build the run that asked for a person ran on (Worker Deployment Versioning); null when unversioned. */
  build: RunBuild | null;
  closedAt?: string;
  ageMinutes?: number;
  /** One line: what happened, in the workflow's own words. */
  summary: string;
  /** The last polls of the order, newest last (bookings and cancellations that followed one). */
  polls: Array<Pick<PollRecord, 'at' | 'result' | 'status' | 'trigger'>>;
  /** What a person may do here; the console offers these actions and no others. */
  actions: Array<'check' | 'quote-cancel' | 'handled'>;
}

/** An item as a reader finds it; readable() adds the build of the run it read. */
type FoundItem = Omit<ConsoleItem, 'build'>;

/** Order stages whose latest run leaves the order to a person (the contract's ORDER_OUTCOMES_NEEDING_A_PERSON). */
export const ORDER_STAGES_NEEDING_A_PERSON = ORDER_OUTCOMES_NEEDING_A_PERSON.map((kind) => `order-${kind}` as const);

export interface ListOptions {
  /** How many rows each visibility query reads at most (newest first). */
  limit?: number;
  now?: () => number;
}

export async function listItemsNeedingAPerson(client: Client, options: ListOptions = {}): Promise<ConsoleItem[]> {
  const limit = options.limit ?? 200;
  const now = options.now ?? Date.now;
  const [handled, bookings, orders, sweeps] = await Promise.all([
    listIds(client, `WorkflowType = '${OPERATOR_NOTE_WORKFLOW_TYPE}'`, limit * 4),
    list(client, `WorkflowType = '${WORKFLOW_TYPE}' AND ${BookingStageKey.name} = 'unresolved'`, limit),
    list(
      client,
      `WorkflowType = '${ORDER_WORKFLOW_TYPE}' AND ${BookingStageKey.name} IN (${ORDER_STAGES_NEEDING_A_PERSON.map((s) => `'${s}'`).join(', ')})`,
      limit,
    ),
    list(
      client,
      `WorkflowType = '${SWEEP_WORKFLOW_TYPE}' AND ${BookingStageKey.name} = 'reconciliation-findings'`,
      limit,
    ),
  ]);
  const items: ConsoleItem[] = [];
  // One item that cannot be read (a payload this process cannot decode, a run gone from retention) is listed as
  // such, never hides the others.
  for (const w of bookings)
    items.push(...(await readable(w, 'unresolved-booking', () => unresolvedBooking(client, w))));
  const latestOrders = new Map<string, WorkflowExecutionInfo>();
  for (const w of orders) if (!latestOrders.has(w.workflowId)) latestOrders.set(w.workflowId, w);
  for (const w of latestOrders.values()) items.push(...(await readable(w, 'order', () => orderItem(client, w))));
  for (const w of sweeps) items.push(...(await readable(w, 'sweep-finding', () => sweepFindings(client, w))));
  return items
    .filter((item) => !handled.has(operatorNoteWorkflowId(noteItem(item))))
    .map((item) => withAge({ ...item, namespace: client.options.namespace }, now()))
    .sort(newestFirst);
}

/** What every watched namespace needs a person for, and the namespaces that could not be listed (with why). */
export interface Listing {
  items: ConsoleItem[];
  failed: Array<{ namespace: string; error: unknown }>;
}

/**
 * listItemsNeedingAPerson in each namespace of `clients`, side by side: one namespace that cannot be listed is
 * reported as such and never hides the others' items.
 */
export async function listEveryNamespace(clients: readonly Client[], options: ListOptions = {}): Promise<Listing> {
  const settled = await Promise.allSettled(clients.map((client) => listItemsNeedingAPerson(client, options)));
  const listing: Listing = { items: [], failed: [] };
  settled.forEach((result, i) => {
    if (result.status === 'fulfilled') listing.items.push(...result.value);
    else listing.failed.push({ namespace: clients[i]!.options.namespace, error: result.reason });
  });
  listing.items.sort(newestFirst);
  return listing;
}

function newestFirst(a: ConsoleItem, b: ConsoleItem): number {
  return (b.closedAt ?? '').localeCompare(a.closedAt ?? '');
}

/** The item as its note names it (operatorNoteWorkflowId). */
export function noteItem(item: Pick<ConsoleItem, 'workflowId' | 'runId' | 'customerReferenceNo'>) {
  return {
    workflowId: item.workflowId,
    runId: item.runId,
    ...(item.customerReferenceNo ? { customerReferenceNo: item.customerReferenceNo } : {}),
  };
}

async function unresolvedBooking(client: Client, w: WorkflowExecutionInfo): Promise<FoundItem[]> {
  const outcome = await resultOf<BookingOutcome>(client, w);
  if (!outcome || outcome.kind !== 'unresolved') return [];
  const ref = outcome.customerReferenceNo;
  const check = await latestOrderRun(client, ref);
  const checkedSince = check?.outcome !== undefined && (check.closeTime ?? 0) > (w.closeTime?.getTime() ?? 0);
  if (outcome.cancelRequested) {
    // The guest asked not to have this booking, so a Confirmed order is not the end of it: only a Cancelled one is
    // (the stage a run ends in once it cancelled the order or a check found it cancelled, as the profile reads it).
    if (check?.outcome && check.stage === 'order-cancelled') return [];
  } else if (checkedSince && check?.outcome?.kind === 'checked') {
    // A check an operator asked for after the booking ended, which found the order in a final status, settles it.
    return [];
  }
  const sent = outcome.bookAttempts.filter((a) => a.result !== 'refused').length;
  const summary =
    `Book sent ${sent} time(s); ${outcome.polls.length} QueryOrders polls` +
    (outcome.lastStatus !== undefined ? `, last status ${outcome.lastStatus}` : ', order never listed') +
    (check?.outcome ? `; last check: ${describeOrderOutcome(check.outcome)}` : '');
  return [
    {
      kind: 'unresolved-booking',
      workflowId: w.workflowId,
      runId: w.runId,
      customerReferenceNo: ref,
      stage: 'unresolved',
      ...closed(w),
      summary: outcome.cancelRequested
        ? `${cancelAskedFor(outcome.lastStatus, checkedSince ? check?.outcome : undefined)} ${summary}`
        : summary,
      polls: lastPolls(outcome.polls),
      actions: outcome.cancelRequested ? ['check', 'quote-cancel', 'handled'] : ['check', 'handled'],
    },
  ];
}

/**
 * What a person reads first on an unresolved booking whose caller asked to cancel it: that they did, the order's
 * status as last read (a check since the booking ended, else the booking's own last poll), and the safe action.
 * Cancelling goes through the quote, so its fee is one a person saw; a quote of an order not Confirmed is refused.
 */
function cancelAskedFor(lastPolled: number | undefined, since: OrderOutcome | undefined): string {
  const checked = since && 'order' in since ? since.order?.status : undefined;
  const status =
    checked !== undefined
      ? `in status ${checked} at the last check`
      : lastPolled !== undefined
        ? `in status ${lastPolled} at the last poll`
        : 'never listed';
  // Read since the booking ended in a final status (a check; Confirmed or Failed, the outcome does not say which) or
  // Confirmed (a quote, a cancellation that stopped or was refused): the next step is the quote, not another check.
  const read = ['checked', 'quoted', 'cancel-stopped', 'cancel-refused'].includes(since?.kind ?? '');
  const action = read
    ? 'if it is Confirmed, quote and cancel it here at the quoted fee'
    : 'check again; once it is Confirmed, quote and cancel it here at the quoted fee';
  return `Caller asked to cancel; order ${status}, not Cancelled: ${action}.`;
}

async function orderItem(client: Client, w: WorkflowExecutionInfo): Promise<FoundItem[]> {
  // `w` is the newest run of this order that left it to a person. A later run settles it only if it cancelled the
  // order or checked it as expected; a quote, a refused request or a run still going leave the item listed.
  const latest = await client.workflow.getHandle(w.workflowId).describe();
  let later = '';
  if (latest.runId !== w.runId) {
    if (latest.status.name === 'RUNNING') later = '; a later run is in progress';
    else {
      const outcome = await resultOf<OrderOutcome>(client, latest);
      if (outcome?.kind === 'cancelled' || outcome?.kind === 'checked') return [];
      if (outcome) later = `; later: ${describeOrderOutcome(outcome)}`;
    }
  }
  const stage = w.typedSearchAttributes.get(BookingStageKey) ?? '';
  const outcome = await resultOf<OrderOutcome>(client, w);
  const ref = w.typedSearchAttributes.get(CustomerReferenceNoKey) ?? w.workflowId.replace(/^order:/, '');
  return [
    {
      kind: 'order',
      workflowId: w.workflowId,
      runId: w.runId,
      customerReferenceNo: ref,
      stage,
      ...closed(w),
      summary: (outcome ? describeOrderOutcome(outcome) : stage) + later,
      polls: outcome && 'cancellation' in outcome && outcome.cancellation ? lastPolls(outcome.cancellation.polls) : [],
      // Cancelling again is offered only where the order may still be confirmed and the fee was the question.
      actions: stage === 'order-cancel-stopped' ? ['check', 'quote-cancel', 'handled'] : ['check', 'handled'],
    },
  ];
}

/** The items `read` finds for the run `w`, each with the build `w` ran on. */
async function readable(
  w: WorkflowExecutionInfo,
  kind: ItemKind,
  read: () => Promise<FoundItem[]>,
): Promise<ConsoleItem[]> {
  const build = runBuildOf(w) ?? null;
  try {
    return (await read()).map((item) => ({ ...item, build }));
  } catch (err) {
    const ref = w.typedSearchAttributes.get(CustomerReferenceNoKey);
    return [
      {
        kind,
        workflowId: w.workflowId,
        runId: w.runId,
        ...(ref ? { customerReferenceNo: ref } : {}),
        stage: w.typedSearchAttributes.get(BookingStageKey) ?? '',
        build,
        ...closed(w),
        summary: `could not be read here (${err instanceof Error ? err.message : String(err)}): open its history`,
        polls: [],
        actions: ['handled'],
      },
    ];
  }
}

interface SweepEntry {
  customerReferenceNo: string;
  status?: number;
  reason?: string;
}

async function sweepFindings(client: Client, w: WorkflowExecutionInfo): Promise<FoundItem[]> {
  const result = await resultOf<{ orphans?: SweepEntry[]; mismatches?: SweepEntry[] }>(client, w);
  if (!result) return [];
  const entries = [
    ...(result.orphans ?? []).map((e) => ({ ...e, verdict: 'orphan' })),
    ...(result.mismatches ?? []).map((e) => ({ ...e, verdict: 'mismatch' })),
  ];
  return entries.map((e) => ({
    kind: 'sweep-finding' as const,
    workflowId: w.workflowId,
    runId: w.runId,
    customerReferenceNo: e.customerReferenceNo,
    stage: e.verdict,
    ...closed(w),
    summary: `${e.verdict}: ${e.reason ?? 'order and booking disagree'}${e.status !== undefined ? ` (status ${e.status})` : ''}`,
    polls: [],
    actions: ['check', 'quote-cancel', 'handled'],
  }));
}

/** The order outcome in one line, without guest data. */
export function describeOrderOutcome(o: OrderOutcome): string {
  const fee = (m: { amount: number; currency: string } | null | undefined) =>
    m ? `${m.amount} ${m.currency}` : 'none';
  switch (o.kind) {
    case 'checked':
      return `checked: the supplier lists the order in status ${o.order.status}`;
    case 'cancel-stopped':
      return `cancel stopped: fee now ${fee(o.feeNow)}, accepted ${accepted(o.cancellation.accepted)} (${o.reason})`;
    case 'changed-by-supplier':
    case 'not-cancellable':
    case 'cancel-not-done':
      return `${o.kind}: ${o.reason}`;
    case 'cancel-refused':
      return `cancel refused: ${o.reason}`;
    default:
      return `${o.kind}${'order' in o && o.order ? `: order status ${o.order.status}` : ''}`;
  }
}

function accepted(a: { kind: 'fee'; fee: { amount: number; currency: string } | null } | { kind: string } | undefined) {
  if (!a) return 'none';
  if ('fee' in a) return a.fee ? `${a.fee.amount} ${a.fee.currency}` : 'free';
  return a.kind === 'free' ? 'only if free' : 'any fee';
}

/** The reference's newest order run: its outcome, when it closed and its final stage; `{}` while it runs. */
async function latestOrderRun(
  client: Client,
  ref: string,
): Promise<{ outcome?: OrderOutcome; closeTime?: number; stage?: string } | undefined> {
  try {
    const description = await client.workflow.getHandle(orderWorkflowId(ref)).describe();
    if (description.status.name === 'RUNNING') return {};
    return {
      outcome: await resultOf<OrderOutcome>(client, description),
      closeTime: description.closeTime?.getTime(),
      stage: description.typedSearchAttributes.get(BookingStageKey),
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** A closed run's result, decoded; undefined when it did not complete (failed, terminated). */
async function resultOf<T>(client: Client, w: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'status'>) {
  if (w.status.name !== 'COMPLETED') return undefined;
  return (await client.workflow.getHandle(w.workflowId, w.runId).result()) as T;
}

async function list(client: Client, query: string, limit: number): Promise<WorkflowExecutionInfo[]> {
  const rows: WorkflowExecutionInfo[] = [];
  for await (const w of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
    rows.push(w);
    if (rows.length >= limit) break;
  }
  return rows;
}

async function listIds(client: Client, query: string, limit: number): Promise<Set<string>> {
  return new Set((await list(client, query, limit)).map((w) => w.workflowId));
}

function closed(w: Pick<WorkflowExecutionInfo, 'closeTime'>): { closedAt?: string } {
  return w.closeTime ? { closedAt: w.closeTime.toISOString() } : {};
}

function withAge(item: ConsoleItem, nowMs: number): ConsoleItem {
  if (!item.closedAt) return item;
  return { ...item, ageMinutes: Math.max(0, Math.round((nowMs - Date.parse(item.closedAt)) / 60_000)) };
}

function lastPolls(polls: PollRecord[]): ConsoleItem['polls'] {
  return polls.slice(-5).map(({ at, result, status, trigger }) => ({
    at,
    result,
    trigger,
    ...(status !== undefined ? { status } : {}),
  }));
}
