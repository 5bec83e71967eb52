/**
 * JUnit XML for a CI: a test case per clause; a blocker or a difference is a failure (typed so), manual and
 * skipped clauses are skipped, so a pipeline goes red exactly when the profile does not fit the supplier.
 */
import type { ConformanceReport } from '../run';
import type { ClauseReport } from '../types';

export function renderJUnit(report: ConformanceReport): string {
  const failures = report.summary.blocker + report.summary.differs;
  const skipped = report.summary.manual + report.summary.skipped;
  const cases = report.clauses.map(testCase);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="supplier-conformance" tests="${report.clauses.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="${xml(report.supplier.baseUrl)}" tests="${report.clauses.length}" failures="${failures}" skipped="${skipped}" timestamp="${report.startedAt}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function testCase(c: ClauseReport): string {
  const open = `    <testcase classname="conformance.${xml(c.id.split('.')[0]!)}" name="${xml(c.id)}: ${xml(c.title)}">`;
  const body = `expected: ${c.expected}\nobserved: ${c.observed}`;
  const inner =
    c.result === 'blocker' || c.result === 'differs'
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
