/**
 * Step 4 of the chaos run, once the drain is over: each booking's ending (with its cancellation, if one was
 * planned), every raw history and worker log line scanned for secrets and personal data, and the order runs
 * still open.
 */
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { orderWorkflowId } from '../src/api/client/index';
import { scanHistory, scanLogLines, type SecretHit } from '../dev/codec/scan';
import { type CancellationObservation, type Observation } from './check/observation';
import type { PlannedBooking } from './mix';
import type { Orphanage } from './orphans';
import { APP_SECRET, type Stack } from './setup';
import { forEachLimit, retry } from './timing';
import type { FireRecord, StartResult } from './under-fire';
import { endingOf, rawHistories, RUNNING_ORDERS_QUERY } from './workflows';

/** What the run collected after the drain. */
export interface Collected {
  /** One per planned booking, in plan order. */
  observations: Observation[];
  /** The cancellations of bookings that were started. */
  cancelObservations: CancellationObservation[];
  secretHits: SecretHit[];
  historiesScanned: number;
  logLinesScanned: number;
  /** Order runs still open after the drain (-1: the server could not tell). */
  openOrderRuns: number;
}

/** The secrets and personal data found so far, and how many histories were read. */
interface Scan {
  secrets: string[];
  hits: SecretHit[];
  histories: number;
}

/** Collects every ending, scans every history and log line, and counts the order runs still open. */
export async function collect(plan: PlannedBooking[], stack: Stack, fire: FireRecord): Promise<Collected> {
  const key32 = Buffer.from(stack.key, 'base64');
  const scan: Scan = { secrets: [APP_SECRET, stack.key, key32.toString('latin1')], hits: [], histories: 0 };
  const observations = await bookingEndings(plan, stack, fire.starts, scan);
  for (const x of observations) {
    const c = fire.cancellations.get(x.booking.index);
    if (c) x.cancellation = c;
  }
  // Cancellations planned for bookings never started have no observation of their own.
  const cancelObservations = observations.flatMap((x) => (x.cancellation ? [x.cancellation] : []));
  await scanOrderRuns(plan, stack.raw, cancelObservations, scan);
  // Order runs still open now would be stuck (the drain waited for every cancellation).
  const openOrderRuns = await retry(() => stack.client.workflow.count(RUNNING_ORDERS_QUERY)).then(
    (r) => r.count,
    () => -1,
  );
  markOrphansMade(observations, fire.orphanage);
  const logLines = stack.fleet.lines.map((l) => ({ where: `worker ${l.worker} ${l.stream}`, line: l.line }));
  scan.hits.push(...scanLogLines(logLines, { secrets: scan.secrets, personal: plan.flatMap((b) => b.personal) }));
  return {
    observations,
    cancelObservations,
    secretHits: scan.hits,
    historiesScanned: scan.histories,
    logLinesScanned: logLines.length,
    openOrderRuns,
  };
}

/** Each booking's ending (or why it never started), its histories scanned for its own personal data. */
async function bookingEndings(
  plan: PlannedBooking[],
  stack: Stack,
  starts: StartResult[],
  scan: Scan,
): Promise<Observation[]> {
  const observations: Observation[] = [];
  await forEachLimit(plan, 8, async (booking) => {
    const start = starts[booking.index];
    if (!start?.ok) {
      observations.push({ booking, ending: { state: 'not-started', detail: start?.error ?? 'never attempted' } });
      return;
    }
    const ending = await endingOf(stack.client, stack.raw, booking);
    observations.push({ booking, ending });
    if (ending.state === 'lost') return;
    for (const history of await rawHistories(stack.raw, booking)) {
      scan.histories++;
      scan.hits.push(
        ...scanHistory(`history of ${booking.request.customerReferenceNo}`, history, {
          secrets: scan.secrets,
          personal: booking.personal,
        }),
      );
    }
  });
  return observations.sort((a, b) => a.booking.index - b.booking.index);
}

/** The order runs' raw histories too: what they hold must be as free of secrets as the bookings'. */
async function scanOrderRuns(
  plan: PlannedBooking[],
  raw: Client,
  cancelObservations: CancellationObservation[],
  scan: Scan,
): Promise<void> {
  await forEachLimit(cancelObservations, 8, async (c) => {
    const personal = plan.find((b) => b.request.customerReferenceNo === c.customerReferenceNo)?.personal ?? [];
    for (const runId of c.runIds ?? []) {
      const history = await retry(() =>
        raw.workflow.getHandle(orderWorkflowId(c.customerReferenceNo), runId).fetchHistory(),
      ).catch(() => undefined);
      if (!history) continue;
      scan.histories++;
      scan.hits.push(
        ...scanHistory(`history of ${orderWorkflowId(c.customerReferenceNo)} run ${runId}`, historyToJSON(history), {
          secrets: scan.secrets,
          personal,
        }),
      );
    }
  });
}

/** The orphans made on purpose ended terminated: their own state, not a workflow failure. */
function markOrphansMade(observations: Observation[], orphanage: Orphanage): void {
  const madeRefs = new Set(orphanage.made.map((m) => m.customerReferenceNo));
  for (const x of observations) {
    if (madeRefs.has(x.booking.request.customerReferenceNo) && x.ending.state === 'workflow-failed') {
      x.ending = { state: 'orphaned', detail: x.ending.detail };
    }
  }
}
