/**
 * The reconciliation sweep's Temporal Schedule, created by the worker at start (RECONCILIATION_SCHEDULE=on)
 * and safe to create again: one schedule per booking task queue (`reconciliation:<queue>`); an existing one
 * is updated to the configured interval and input, so a changed configuration takes effect on the next deploy.
 * Overlapping runs are skipped: a slow sweep is never joined by a second one.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { SWEEP_WORKFLOW_TYPE, sweepScheduleId } from '../../api/contract/definitions';
import type { ReconciliationConfig } from '../config/index';
import type { SupplierProfile } from '../config/supplier-profile';
import type { SweepWorkflowInput } from '../rules/sweep-classify';

export interface SweepScheduleOptions {
  taskQueue: string;
  reconciliation: ReconciliationConfig;
  profile: SupplierProfile;
}

/** Creates the schedule, or brings an existing one up to date; returns its id and whether it was created. */
export async function ensureReconciliationSchedule(
  client: Client,
  { taskQueue, reconciliation: r, profile }: SweepScheduleOptions,
): Promise<{ scheduleId: string; created: boolean }> {
  const scheduleId = sweepScheduleId(taskQueue);
  const input: SweepWorkflowInput = {
    lookbackMinutes: r.lookbackMinutes,
    settleMinutes: r.settleMinutes,
    sliceMinutes: r.sliceMinutes,
    cancelOrphans: r.cancelOrphans,
    ...(r.orphanFeeCeiling ? { orphanFeeCeiling: r.orphanFeeCeiling } : {}),
    ...(r.checkInHours ? { checkInHours: r.checkInHours } : {}),
    statuses: profile.orderStatus,
  };
  const options = {
    scheduleId,
    spec: { intervals: [{ every: `${r.everyMinutes} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: SWEEP_WORKFLOW_TYPE,
      taskQueue,
      workflowId: scheduleId,
      args: [input],
      staticSummary: `Reconciliation sweep · last ${r.lookbackMinutes} min of bookings`,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${r.everyMinutes} minutes` },
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
    return { scheduleId, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({
    ...previous,
    spec: options.spec,
    action: options.action,
    policies: { ...previous.policies, ...options.policies },
  }));
  return { scheduleId, created: false };
}
