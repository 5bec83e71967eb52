import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';

/**
 * What a failed activity is called in a workflow's state and outcome: the typed name of its cause (a stable error
 * name such as SupplierRateLimited), else its message. Workflow code only.
 */
export function failureType(err: unknown): string {
  const e = err as { cause?: { type?: string; message?: string }; message?: string };
  return e?.cause?.type ?? e?.cause?.message ?? String(e?.message ?? err);
}

/**
 * Whether an activity failed because no worker started it in time (its schedule-to-start timeout): then it did
 * nothing, and a call that may act upstream (Book, Cancel) reads it as refused before any work.
 */
export function neverStarted(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}
