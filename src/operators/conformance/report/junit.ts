/**
 * JUnit XML for a CI: a test case per clause; a blocker or a difference is a failure (typed so), manual and
 * skipped clauses are skipped, and a clause the run stopped before (budget, rate limit) is an error, so a pipeline goes
 * red when the profile does not fit the supplier or when the run did not finish.
 */
import type { ConformanceReport } from '../run';
import type { ClauseReport } from '../types';

export function renderJUnit(report: ConformanceReport): string {
  const failures = report.summary.blocker + report.summary.differs - report.accepted.length;
  const errors = report.clauses.filter((c) => c.notRun).length;
  const skipped = report.summary.manual + report.summary.skipped - errors;
  const cases = report.clauses.map(testCase);
  const counts = `tests="${report.clauses.length}" failures="${failures}" skipped="${skipped}" errors="${errors}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="supplier-conformance" ${counts}>`,
    `  <testsuite name="${xml(report.supplier.baseUrl)}" ${counts} timestamp="${report.startedAt}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function testCase(c: ClauseReport): string {
  const open = `    <testcase classname="conformance.${xml(c.id.split('.')[0]!)}" name="${xml(c.id)}: ${xml(c.title)}">`;
  const body = `expected: ${c.expected}\nobserved: ${c.observed}`;
  const inner = c.notRun
    ? `      <error type="not-run" message="${xml(`not run: ${c.notRun}`)}">${xml(body)}</error>`
    : c.accepted
      ? `      <system-out>${xml(`${body}\naccepted: ${c.accepted}`)}</system-out>`
      : c.result === 'blocker' || c.result === 'differs'
        ? `      <failure type="${c.result}" message="${xml(c.observed)}">${xml(body)}</failure>`
        : c.result === 'manual' || c.result === 'skipped'
          ? `      <skipped message="${xml(`${c.result}: ${c.observed}`)}"/>`
          : `      <system-out>${xml(body)}</system-out>`;
  return [open, inner, '    </testcase>'].join('\n');
}

const xml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
