/**
 * The reconciliation sweep's Temporal Schedule: one per booking task queue (`reconciliation:<queue>`), its input and
 * interval from the fleet's configuration. Overlapping runs are skipped: a slow sweep is never joined by a second one.
 *
 * One owner: `npm run deploy -- settings` writes it (owner 'deploy'), once per deployment, and marks it so in the
 * Schedule's note. A worker at start (RECONCILIATION_SCHEDULE=on, owner 'worker') creates it when it is missing, and
 * updates one no deploy has set (a fleet that never runs the deploy), but leaves one the deploy set alone: an old
 * build's worker restarting would otherwise put back its own input over the current one's.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { SWEEP_WORKFLOW_TYPE, supplierTaskQueue, sweepScheduleId } from '../../api/contract/definitions';
import type { ReconciliationConfig } from '../config/index';
import type { SupplierProfile } from '../config/supplier-profile';
import type { SweepWorkflowInput } from '../rules/sweep-classify';

export interface SweepScheduleOptions {
  taskQueue: string;
  reconciliation: ReconciliationConfig;
  profile: SupplierProfile;
  /** Who writes: a worker at start (the default) never overwrites what the deploy set. */
  owner?: 'worker' | 'deploy';
  /** The deploy's operator identity, written in the note beside the owner mark. */
  identity?: string;
  /**
   * A supplier account (SUPPLIER_ACCOUNTS_FILE): its own Schedule (`reconciliation:<queue>@<account>`), whose sweeps
   * list that account with its credential and judge its orders by its profile's statuses.
   */
  supplier?: string;
}

/** The start of the Schedule's note when the deploy set it: workers leave such a Schedule as it is. */
export const DEPLOY_OWNED_NOTE = 'Set by npm run deploy -- settings';

/**
 * Creates the schedule, or brings an existing one up to date (a worker: unless the deploy set it); returns its id,
 * whether it was created, and `keptDeploys` when a worker left the deploy's Schedule as it was.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  { taskQueue, reconciliation: r, profile, owner = 'worker', identity, supplier }: SweepScheduleOptions,
): Promise<{ scheduleId: string; created: boolean; keptDeploys?: true }> {
  const scheduleId = sweepScheduleId(supplier ? supplierTaskQueue(taskQueue, supplier) : taskQueue);
  const input: SweepWorkflowInput = {
    lookbackMinutes: r.lookbackMinutes,
    settleMinutes: r.settleMinutes,
    sliceMinutes: r.sliceMinutes,
    cancelOrphans: r.cancelOrphans,
    ...(r.orphanFeeCeiling ? { orphanFeeCeiling: r.orphanFeeCeiling } : {}),
    ...(r.checkInHours ? { checkInHours: r.checkInHours } : {}),
    statuses: profile.orderStatus,
    ...(supplier ? { supplier } : {}),
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
      staticSummary: `Reconciliation sweep${supplier ? ` of ${supplier}` : ''} · last ${r.lookbackMinutes} min of bookings`,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${r.everyMinutes} minutes` },
    ...(owner === 'deploy' ? { state: { note: deployNote(identity) } } : {}),
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
    return { scheduleId, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  if (owner === 'worker' && (await handle.describe()).state.note?.startsWith(DEPLOY_OWNED_NOTE)) {
    return { scheduleId, created: false, keptDeploys: true };
  }
  await handle.update((previous) => ({
    ...previous,
    spec: options.spec,
    action: options.action,
    policies: { ...previous.policies, ...options.policies },
    ...(owner === 'deploy' ? { state: { ...previous.state, note: deployNote(identity) } } : {}),
  }));
  return { scheduleId, created: false };
}

function deployNote(identity: string | undefined): string {
  return `${DEPLOY_OWNED_NOTE}${identity ? ` by ${identity}` : ''}: workers leave it as it is`;
}
