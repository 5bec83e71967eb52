/**
 * Step 5 of the chaos run: the reconciliation sweep over the run's booking window, compared with what the run
 * knows. It must report exactly the orphans made on purpose, and as mismatches exactly the orders whose status
 * the bookings' outcomes do not account for.
 */
import type { Client } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, SWEEP_WORKFLOW_TYPE, type SweepResult } from '../src/api/client/index';
import { defaultSupplierProfile } from '../src/runtime/config/supplier-profile';
import type { SweepWorkflowInput } from '../src/workflows/sweep';
import type { Sandbox } from '../dev/sandbox/server';
import { type Observation } from './check/observation';
import { expectedSweepFindings, setDifference } from './check/sweep';
import type { Orphanage } from './orphans';
import type { ReconciliationReport } from './report';
import type { Log } from './stack';
import { errorLine } from './timing';

/** Sweeps are over in seconds; this bounds a sweep that cannot run (a worker missing, say). */
const SWEEP_LIMIT_MS = 5 * 60_000;

/**
 * Runs the reconciliation sweep workflow on the run's workers over its whole booking window (the Schedule's
 * sweep with no settle time: every booking has closed) and compares what it reports with the orphans made
 * and with the mismatches the run's own outcomes and the supplier's orders predict.
 */
export async function sweepAndCompare(
  client: Client,
  sandbox: Sandbox,
  observations: Observation[],
  orphanage: Orphanage,
  opts: { orphansAsked: number; windowStartMs: number; seed: number; log: Log },
): Promise<ReconciliationReport> {
  const workflowId = `chaos-sweep-${opts.seed}-${Date.now()}`;
  const input: SweepWorkflowInput = {
    lookbackMinutes: Math.ceil((Date.now() - opts.windowStartMs) / 60_000) + 1,
    settleMinutes: 0,
    sliceMinutes: 5,
    cancelOrphans: false,
    statuses: defaultSupplierProfile.orderStatus,
  };
  opts.log(`reconciliation sweep ${workflowId} over the last ${input.lookbackMinutes} min`);
  const { result, sweepError } = await runSweep(client, workflowId, input);
  const counts = new Map<string, ReturnType<Sandbox['orders']>>();
  for (const order of sandbox.orders()) {
    counts.set(order.customerReferenceNo, [...(counts.get(order.customerReferenceNo) ?? []), order]);
  }
  const expected = expectedSweepFindings(observations, counts);
  const made = orphanage.made.map((m) => m.customerReferenceNo);
  const sweptOrphans = (result?.orphans ?? []).map((f) => f.customerReferenceNo);
  const sweptMismatches = (result?.mismatches ?? []).map((f) => f.customerReferenceNo);
  const orphanDiff = setDifference(made, sweptOrphans);
  const mismatchDiff = setDifference(expected.mismatches, sweptMismatches);
  opts.log(
    result
      ? `sweep: ${result.ordersSeen} orders; orphans ${sweptOrphans.length} (made ${made.length}), mismatches ${sweptMismatches.length} (expected ${expected.mismatches.length})`
      : `sweep did not finish: ${sweepError}`,
  );
  return {
    orphansAsked: opts.orphansAsked,
    orphansMade: orphanage.made,
    orphansNotMade: orphanage.notMade,
    sweep: result ? sweepSummary(workflowId, result) : null,
    ...(sweepError ? { sweepError } : {}),
    supplierOrders: counts.size,
    expectedMismatches: expected.mismatches,
    orphansMissed: result ? orphanDiff.missed : [],
    orphansExtra: orphanDiff.extra,
    mismatchesMissed: result ? mismatchDiff.missed : [],
    mismatchesExtra: mismatchDiff.extra,
  };
}

/** Starts the sweep and waits for its result; a sweep that fails or times out is told by its error. */
async function runSweep(
  client: Client,
  workflowId: string,
  input: SweepWorkflowInput,
): Promise<{ result?: SweepResult; sweepError?: string }> {
  try {
    const handle = await client.workflow.start(SWEEP_WORKFLOW_TYPE, {
      taskQueue: DEFAULT_TASK_QUEUE,
      workflowId,
      args: [input],
      workflowExecutionTimeout: SWEEP_LIMIT_MS,
    });
    return { result: (await handle.result()) as SweepResult };
  } catch (err) {
    return { sweepError: errorLine(err) };
  }
}

/** What the sweep reported, as the run's report keeps it. */
function sweepSummary(workflowId: string, result: SweepResult): NonNullable<ReconciliationReport['sweep']> {
  const finding = (f: SweepResult['orphans'][number]) => ({
    customerReferenceNo: f.customerReferenceNo,
    status: f.status,
    reason: f.reason,
  });
  return {
    workflowId,
    window: result.window,
    requests: result.requests,
    ordersSeen: result.ordersSeen,
    unreadable: result.unreadable,
    orphans: result.orphans.map(finding),
    mismatches: result.mismatches.map(finding),
  };
}

/** The sweep's part of the invariants: it ran, found every orphan made and nothing else, and every mismatch. */
export function reconciliationViolations(r: ReconciliationReport): string[] {
  return [
    ...(r.sweepError !== undefined ? [`reconciliation sweep did not finish: ${r.sweepError}`] : []),
    ...(r.sweep && r.sweep.unreadable > 0 ? [`reconciliation sweep: ${r.sweep.unreadable} orders unreadable`] : []),
    ...r.orphansMissed.map((ref) => `reconciliation: the sweep missed the orphan ${ref}`),
    ...r.orphansExtra.map(
      (ref) => `reconciliation: the sweep reported ${ref} as an orphan, but the run made no orphan of it`,
    ),
    ...r.mismatchesMissed.map((ref) => `reconciliation: the sweep missed the mismatch of ${ref}`),
    ...r.mismatchesExtra.map(
      (ref) => `reconciliation: the sweep reported a mismatch for ${ref} that the outcomes do not show`,
    ),
  ];
}
