/** The Markdown summary: what a person reads in two minutes before signing a profile off. */
import type { ConformanceReport } from '../run';
import type { ClauseReport, RequestRecord } from '../types';

export function renderMarkdown(report: ConformanceReport): string {
  const s = report.summary;
  const lines = [
    `# Supplier conformance: ${report.supplier.baseUrl}`,
    '',
    `${report.startedAt} to ${report.finishedAt}; ${report.requests.sent} requests of a budget of ${report.requests.budget}` +
      ` at most ${report.requests.ratePerSecond}/s.${report.stoppedEarly ? ` **Stopped early:** ${report.stoppedEarly}.` : ''}`,
    '',
    `**${s.pass} pass, ${s.differs} differ, ${s.blocker} blocker, ${s.manual} manual, ${s.skipped} skipped.**`,
    '',
    ...(report.accepted.length
      ? [`${report.accepted.length} of the differences accepted (--accept): ${report.accepted.join(', ')}.`, '']
      : []),
    ...unfinished(report),
    ...section('Blockers: no profile absorbs these', byResult(report, 'blocker'), detail),
    ...section('Differences', byResult(report, 'differs'), detail),
    '## Proposed SUPPLIER_PROFILE',
    '',
    report.notRun.length > 0 || report.stoppedEarly
      ? 'Incomplete: the run did not finish, so this covers only the clauses run; run again before relying on it.'
      : Object.keys(report.proposedProfile).length === 0
        ? 'None needed beyond the defaults for what was observed.'
        : 'What makes the product correct for what was observed (overrides of the defaults; a person signs it off):',
    '',
    '```json',
    JSON.stringify(report.proposedProfile, null, 2),
    '```',
    '',
    '## Every clause',
    '',
    '| clause | result | observed |',
    '| --- | --- | --- |',
    ...report.clauses.map((c) => `| ${c.id} | ${c.notRun ? 'not run' : c.result} | ${cell(words(c.observed))} |`),
    '',
    ...section('Manual: steps for a person with the hotel or the supplier', byResult(report, 'manual'), steps),
    ...ordersMade(report),
    ...requestsBehind(report),
  ];
  return lines.join('\n');
}

const byResult = (report: ConformanceReport, result: ClauseReport['result']) =>
  report.clauses.filter((c) => c.result === result);

function section(title: string, clauses: ClauseReport[], render: (c: ClauseReport) => string[]): string[] {
  if (clauses.length === 0) return [];
  return [`## ${title}`, '', ...clauses.flatMap(render), ''];
}

function detail(c: ClauseReport): string[] {
  return [
    `- **${c.id}** (${words(c.title)}): expected ${words(c.expected)}; observed ${words(c.observed)}.` +
      (c.accepted ? ` **Accepted:** ${c.accepted}.` : '') +
      (c.proposal ? ` Proposed: \`${JSON.stringify(c.proposal)}\`.` : ''),
    ...c.requests.map((r) => `  - ${request(r)}`),
  ];
}

/** A request as the supplier finds it in its logs: when, the headers that name it, what was asked and answered. */
function request(r: RequestRecord): string {
  const ids = [
    `Request-Id ${r.requestIds.join(', ') || '(not sent)'}`,
    ...(r.sessionId ? [`Session-Id ${r.sessionId}`] : []),
  ].join(', ');
  return `${r.at} ${words(r.sent)} → ${words(r.answer)} (${ids})`;
}

function requestsBehind(report: ConformanceReport): string[] {
  const sent = report.clauses.filter((c) => c.requests.length > 0);
  if (sent.length === 0) return [];
  return [
    '## Requests behind each clause',
    '',
    "Times are the kit's clock (UTC); the Request-Id and Session-Id are the headers sent, for finding them in your logs.",
    '',
    ...sent.flatMap((c) => [`- **${c.id}**`, ...c.requests.map((r) => `  - ${request(r)}`)]),
    '',
  ];
}

/** Our names for how an answer was read, in the interface's words, for a reader at the supplier. */
const WORDS: Array<[RegExp, string]> = [
  [/\bthe reconciliation sweep\b/g, 'our periodic listing of orders by time window'],
  [/\bthe sweep\b/g, 'our periodic listing of orders by time window'],
  [/\bSupplierBadRequest\b/g, 'refused as a bad request'],
  [/\bSupplierUnauthorized\b/g, 'refused as not authenticated'],
  [/\bSupplierForbidden\b/g, 'refused as forbidden'],
  [/\bSupplierNotFound\b/g, 'not found'],
  [/\bSupplierRateLimited\b/g, 'rate limited'],
  [/\bSupplierGatewayTimeout\b/g, 'gateway timeout'],
  [/\bSupplierServerError\b/g, 'server error'],
  [/\bSupplierNetworkBeforeSend\b/g, 'no connection (not sent)'],
  [/\bSupplierNetworkAfterSend\b/g, 'connection lost after sending'],
  [/\bSupplierClientTimeout\b/g, 'no answer within our timeout'],
  [/\bSupplierInvalidResponse\b/g, 'an answer we could not read'],
  [/\bSupplierAriChanged\b/g, 'ARI changed'],
  [/\bSupplierCreditLimit\b/g, 'credit limit exceeded'],
  [/\bSupplierBusinessError\b/g, 'an error code'],
];

const words = (text: string) => WORDS.reduce((t, [from, to]) => t.replace(from, to), text);

function steps(c: ClauseReport): string[] {
  return [
    `- **${c.id}** (${words(c.title)}): expected ${words(c.expected)}.`,
    ...(c.steps ?? []).map((s, i) => `  ${i + 1}. ${words(s)}`),
  ];
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function ordersMade(report: ConformanceReport): string[] {
  if (report.ordersMade.length === 0) return [];
  const left = report.ordersMade.filter((o) => o.state === 'left').length;
  return [
    '## Orders made in the test environment',
    '',
    left > 0
      ? `**${left} left at the supplier**: cancel them by hand (or ask the supplier to).`
      : 'None left at the supplier: each is final or was cancelled by the run.',
    '',
    '| customerReferenceNo | last status | state | note |',
    '| --- | --- | --- | --- |',
    ...report.ordersMade.map(
      (o) => `| ${o.customerReferenceNo} | ${cell(o.lastStatus ?? '(never listed)')} | ${o.state} | ${cell(o.note)} |`,
    ),
    '',
  ];
}

function unfinished(report: ConformanceReport): string[] {
  if (!report.stoppedEarly && report.notRun.length === 0) return [];
  return [
    `**Unfinished, not a pass:** ${report.stoppedEarly ?? 'stopped early'}. ${report.notRun.length} clauses not run: ` +
      `${report.notRun.join(', ')}.`,
    '',
  ];
}
