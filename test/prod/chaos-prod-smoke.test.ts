/**
 * A small chaos run on the production engine (chaos/run.ts with engine `prod`): PostgreSQL and two
 * Temporal nodes of its own, about 100 bookings with every fault class, worker SIGKILLs, one node SIGKILLed
 * and brought back, PostgreSQL restarted under load, then the other node SIGKILLed. The same invariants
 * as on the dev server: one order per reference, nothing orphaned, stuck or lost, no secret in history.
 * The full run is `npm run chaos -- --prod`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatReport, type ChaosReport } from '../../chaos/report';
import { CHAOS_RECOVERY, runChaos } from '../../chaos/run';

/** Setup ~20 s, starts 60 s, drain ≤ 170 s. */
const SMOKE_TIMEOUT_MS = 7 * 60_000;

let report: ChaosReport;
const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'chaos-prod-smoke-'));

beforeAll(async () => {
  report = await runChaos({
    engine: 'prod',
    n: 100,
    seed: 20_261_123,
    minutes: 1,
    killEverySeconds: 10,
    maxKills: 3,
    chaosTailSeconds: 0,
    nodeDownSeconds: 5,
    recovery: { ...CHAOS_RECOVERY, deadlineSeconds: 60 },
    drainLimitSeconds: 170,
    ...(process.env.TEST_WORKFLOW_BUNDLE ? { bundlePath: process.env.TEST_WORKFLOW_BUNDLE } : {}),
    resultsDir,
  });
  if (!report.ok) process.stderr.write(`${formatReport(report)}\nreport and histories: ${resultsDir}\n`);
}, SMOKE_TIMEOUT_MS);

afterAll(() => {
  if (report?.ok) rmSync(resultsDir, { recursive: true, force: true });
});

test('the faults happened: both nodes SIGKILLed and back, PostgreSQL restarted, workers killed', () => {
  expect(report.engine).toBe('prod');
  expect(report.chaos.nodeKills.map((k) => k.node)).toEqual(['node-1', 'node-2']);
  expect(report.chaos.postgresRestarts).toHaveLength(1);
  expect(report.chaos.workerKills).toBeGreaterThanOrEqual(2);
});

test('every booking was started and every invariant held', () => {
  expect(report.bookings.started).toBe(100);
  expect(report.supplier.duplicates).toEqual([]);
  expect(report.supplier.strayOrders).toEqual([]);
  expect(report.supplier.bookSendsOverLimit).toEqual([]);
  expect(report.orphans).toEqual([]);
  expect(report.stuck).toEqual([]);
  expect(report.lost).toEqual([]);
  expect(report.workflowFailures).toEqual([]);
  expect(report.secrets.hits).toEqual([]);
  expect(report.violations).toEqual([]);
  expect(report.secrets.historiesScanned).toBeGreaterThanOrEqual(100);
});
