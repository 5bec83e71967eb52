/**
 * What the class's caller does for each booking: starts it, waits for its outcome (through worker kills), and, for the
 * bookings planned so, cancels it once confirmed (the client helper's quote, then chaos/cancel.ts's confirm at the
 * quoted fee, followed to the order run's end). Every time is recorded; nothing here judges (./check.ts does).
 */
import type { WorkflowHandle } from '@temporalio/client';
import {
  bookingWorkflowId,
  cancelBooking,
  orderWorkflowId,
  type BookingOutcome,
  type OrderOutcome,
} from '../../src/api/client/index';
import { confirmCancel, type ConfirmOptions } from '../cancel';
import { startPersistently, untilAnswered as persist } from '../classes';
import type { AccountBooking } from './plan';

export interface AccountObservation {
  customerReferenceNo: string;
  account: string;
  /** From the start of bookings: when this one was started, and when its outcome was read. */
  startedAtMs: number;
  outcomeAtMs?: number;
  bookingOutcome?: string;
  bookingDetail?: string;
  cancel?: { answer?: string; orderOutcome?: string; detail?: string };
  problem?: string;
}

/** A confirm's options, and when the bookings began (what every time is counted from). */
export type DriveOptions = ConfirmOptions & { startMs: number };

/** Drives one booking; never throws. */
export async function driveBooking(b: AccountBooking, o: DriveOptions): Promise<AccountObservation> {
  const ref = b.request.customerReferenceNo;
  const obs: AccountObservation = { customerReferenceNo: ref, account: b.account, startedAtMs: Date.now() - o.startMs };
  try {
    await startPersistently(o.client, b.request, o.until);
    const outcome = (await persist(o, () =>
      o.client.workflow.getHandle(bookingWorkflowId(ref)).result(),
    )) as BookingOutcome;
    obs.outcomeAtMs = Date.now() - o.startMs;
    obs.bookingOutcome = outcome.kind;
    if ('reason' in outcome) obs.bookingDetail = String(outcome.reason).slice(0, 200);
    if (b.cancel && outcome.kind === 'confirmed') obs.cancel = await cancelConfirmed(ref, o);
  } catch (err) {
    obs.problem = message(err);
  }
  return obs;
}

async function cancelConfirmed(ref: string, o: DriveOptions): Promise<NonNullable<AccountObservation['cancel']>> {
  const quote = await persist(o, () =>
    cancelBooking(o.client, ref, { confirm: false, reason: 'chaos: guest asks the fee', requestedBy: 'chaos' }),
  );
  if (quote.kind !== 'quote') return { answer: `quote asked, answered ${quote.kind}` };
  const quoteRun = o.client.workflow.getHandle(orderWorkflowId(ref));
  await persist(o, () => quoteRun.result());
  const quoteRunId = (await persist(o, () => quoteRun.describe())).runId;
  const request = {
    confirm: true as const,
    acceptedFee: quote.quote.fee,
    reason: 'chaos: guest cancelled',
    requestedBy: 'chaos',
  };
  const { answer, run } = await confirmCancel(o, ref, request, {
    previousRunId: quoteRunId,
    persist: (_what, fn) => persist(o, fn),
  });
  const first = (run as WorkflowHandle & { firstExecutionRunId?: string }).firstExecutionRunId;
  const chain = first ? o.client.workflow.getHandle(orderWorkflowId(ref), first, { followRuns: true }) : run;
  const ended = (await persist(o, () => chain.result())) as OrderOutcome;
  return { answer, orderOutcome: ended.kind, ...('reason' in ended && ended.reason ? { detail: ended.reason } : {}) };
}

function message(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`.slice(0, 300);
}
