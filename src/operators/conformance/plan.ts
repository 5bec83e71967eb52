/** The plan printed before anything is sent: each scenario and its requests, the packages booked, the budget. */
import { manualScenarios, scenarios as allScenarios } from './scenarios/index';
import type { ConformanceOptions } from './run';

export function formatPlan(options: ConformanceOptions, scenarios = allScenarios): string {
  const [main, second] = options.ratePkgIds;
  const lines = [
    `Conformance plan against ${options.baseUrl} (a test environment, as stated by --test-environment)`,
    '',
    'Rate packages it will book:',
    `  ${main}: the main order (booked, booked again with the same reference, cancelled), and a Book with no holder or guests`,
    `  ${second ?? main}: a Book with Test: scenario=soldOut (the supplier may reject it, or book it if it ignores the flag)`,
    '',
    'Scenarios, in order:',
  ];
  scenarios.forEach((s, i) => {
    lines.push(`  ${String(i + 1).padStart(2)}. ${s.id}: ${s.title}`);
    for (const request of s.plan(options)) lines.push(`        ${request}`);
  });
  lines.push('', 'Manual (listed in the report with their steps, never sent):');
  for (const m of manualScenarios) lines.push(`      ${m.id}: ${m.title}`);
  lines.push(
    '',
    `At most ${options.budget} requests, at most ${options.ratePerSecond} per second; the run stops at the first rate limit.`,
    `Orders are followed for up to ${Math.round(options.polling.settleTimeoutMs / 1000)} s each.`,
    ...(options.testFlags ? [`Test flags added to CheckAvail, Book and Cancel: ${options.testFlags}`] : []),
  );
  return lines.join('\n');
}
