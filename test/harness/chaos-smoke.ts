/**
 * What the chaos smoke tests share (on the dev server and on the production engine): a run whose report
 * and, on a violation, histories are kept in a temp folder, and the invariants every run must hold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatReport, type ChaosReport } from '../../chaos/report';
import { runChaos, type ChaosOptions } from '../../chaos/run';

/** Runs the chaos run; prints the report when an invariant broke and keeps it with the histories involved. */
export async function runChaosSmoke(
  options: Partial<ChaosOptions>,
): Promise<{ report: ChaosReport; cleanUp: () => void }> {
  const resultsDir = mkdtempSync(path.join(os.tmpdir(), `chaos-smoke-${options.engine ?? 'dev'}-`));
  const report = await runChaos({
    // The tier's global setup has built the bundle already.
    ...(process.env.TEST_WORKFLOW_BUNDLE ? { bundlePath: process.env.TEST_WORKFLOW_BUNDLE } : {}),
    ...options,
    resultsDir,
  });
  if (!report.ok) process.stderr.write(`${formatReport(report)}\nreport and histories: ${resultsDir}\n`);
  // Cancellations that did not end as their kind expects (an invariant may still hold: a person is told), for a reader.
  const unexpected = report.cancellations.items.filter((c) => c.state !== 'skipped' && c.outcome !== c.expected);
  for (const c of unexpected)
    process.stderr.write(`[chaos smoke] cancellation not as expected: ${JSON.stringify(c)}\n`);
  return { report, cleanUp: () => report.ok && rmSync(resultsDir, { recursive: true, force: true }) };
}

/**
 * Every booking started; one order per reference; nothing orphaned, stuck, lost or failed but the orphans the
 * run made on purpose, and the reconciliation sweep found exactly those and every mismatch; no secret found.
 */
export function expectEveryInvariantHeld(report: ChaosReport, bookings: number): void {
  expect(report.bookings.started).toBe(bookings);
  expect(report.supplier.duplicates).toEqual([]);
  expect(report.supplier.strayOrders).toEqual([]);
  expect(report.supplier.bookSendsOverLimit).toEqual([]);
  expect(report.orphans).toEqual([]);
  expect(report.stuck).toEqual([]);
  expect(report.lost).toEqual([]);
  expect(report.workflowFailures).toEqual([]);
  expect(report.secrets.hits).toEqual([]);
  expect(report.reconciliation.sweepError).toBeUndefined();
  expect(report.reconciliation.orphansMissed).toEqual([]);
  expect(report.reconciliation.orphansExtra).toEqual([]);
  expect(report.reconciliation.mismatchesMissed).toEqual([]);
  expect(report.reconciliation.mismatchesExtra).toEqual([]);
  expect(report.violations).toEqual([]);
  expect(report.secrets.historiesScanned).toBeGreaterThanOrEqual(bookings);
}
