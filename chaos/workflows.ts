/**
 * Reading the run's workflows back from the server: which still run, how each booking ended, and its raw (and,
 * for a person reading about a violation, decoded) history.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bookingStateQuery, bookingWorkflowId } from '../src/api/client/index';
import type { createEncryptionCodec } from '../src/api/codec/encryption';
import { type Ending } from './check/observation';
import type { PlannedBooking } from './mix';
import { errorLine, forEachLimit, retry, sleep } from './timing';

export const RUNNING_QUERY = 'WorkflowType = "bookingWorkflow" AND ExecutionStatus = "Running"';
export const RUNNING_ORDERS_QUERY = 'WorkflowType = "orderWorkflow" AND ExecutionStatus = "Running"';

/** The bookings among `bookings` whose workflow still runs (or cannot be described right now). */
export async function openOnes(raw: Client, bookings: PlannedBooking[]): Promise<PlannedBooking[]> {
  const open: PlannedBooking[] = [];
  await forEachLimit(bookings, 8, async (b) => {
    const desc = await describe(raw, b).catch(() => undefined);
    // Unknown counts as open: only a closed workflow ends the wait.
    if (desc === undefined || (desc !== 'not-found' && desc.status.name === 'RUNNING')) open.push(b);
  });
  return open;
}

/** The booking workflow's description, or `not-found` when the server does not know it. */
async function describe(raw: Client, b: PlannedBooking): Promise<WorkflowExecutionDescription | 'not-found'> {
  return retry(async () => {
    try {
      return await raw.workflow.getHandle(bookingWorkflowId(b.request.customerReferenceNo)).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not-found' as const;
      throw err;
    }
  });
}

/** The booking's ending: its outcome, or why there is none (with what an operator would look at). */
export async function endingOf(client: Client, raw: Client, booking: PlannedBooking): Promise<Ending> {
  const ref = booking.request.customerReferenceNo;
  let desc: WorkflowExecutionDescription | 'not-found';
  try {
    desc = await describe(raw, booking);
  } catch (err) {
    return { state: 'lost', detail: `describe failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (desc === 'not-found') return { state: 'lost', detail: 'the server does not know the workflow' };
  const handle = client.workflow.getHandle(bookingWorkflowId(ref));
  const status = desc.status.name;
  if (status === 'COMPLETED') return { state: 'completed', outcome: await retry(() => handle.result()) };
  if (status === 'RUNNING') {
    const state = await Promise.race([
      handle.query(bookingStateQuery).then(
        (s) =>
          `stage ${s.stage}, deadline ${s.deadlineAt ?? '-'}, book attempts ${s.bookAttempts.length}, polls ${s.polls.length}`,
        (err: unknown) => `query failed: ${err instanceof Error ? err.message : String(err)}`,
      ),
      sleep(10_000).then(() => 'query unanswered in 10 s'),
    ]);
    const pending = desc.raw.pendingActivities?.map((a) => `${a.activityType?.name} attempt ${a.attempt}`) ?? [];
    // A workflow task tried again and again fails each time (a nondeterminism error, say): the worker logs say why.
    const task = desc.raw.pendingWorkflowTask;
    const failing =
      task && (task.attempt ?? 1) > 1 ? `, workflow task attempt ${task.attempt} (failing: see worker logs)` : '';
    return {
      state: 'open',
      detail: `started ${desc.startTime.toISOString()}, ${desc.historyLength} events, ${state}, pending activities [${pending.join(', ')}]${failing}`,
    };
  }
  const why = await handle.result().then(() => '', errorLine);
  return { state: 'workflow-failed', detail: `${status}${why ? `: ${why}` : ''}` };
}

/** Every run's history, raw (no codec), as JSON; follows continue-as-new back to the first run. */
export async function rawHistories(raw: Client, booking: PlannedBooking): Promise<string[]> {
  const id = bookingWorkflowId(booking.request.customerReferenceNo);
  const out: string[] = [];
  let runId: string | undefined;
  for (let i = 0; i < 50; i++) {
    const history = await retry(() => raw.workflow.getHandle(id, runId).fetchHistory());
    out.push(historyToJSON(history));
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    runId = started?.continuedExecutionRunId || undefined;
    if (!runId) break;
  }
  return out;
}

/** A history with every payload decrypted and decoded, for a person reading about a violation. */
export async function decodedHistory(
  raw: Client,
  ref: string,
  codec: ReturnType<typeof createEncryptionCodec>,
): Promise<string> {
  const history = await raw.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
  const json: unknown = JSON.parse(historyToJSON(history));
  const decode = async (node: unknown): Promise<unknown> => {
    if (Array.isArray(node)) return Promise.all(node.map(decode));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    if (typeof obj.data === 'string' && obj.metadata && typeof obj.metadata === 'object') {
      try {
        const payload: Payload = {
          metadata: Object.fromEntries(
            Object.entries(obj.metadata as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
          ),
          data: Buffer.from(obj.data, 'base64'),
        };
        const [plain] = await codec.decode([payload]);
        return { decoded: defaultPayloadConverter.fromPayload(plain!) };
      } catch {
        return obj;
      }
    }
    return Object.fromEntries(await Promise.all(Object.entries(obj).map(async ([k, v]) => [k, await decode(v)])));
  };
  return `${JSON.stringify(await decode(json), null, 2)}\n`;
}
