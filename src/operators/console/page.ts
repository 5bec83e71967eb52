/**
 * The console's pages, the list of what needs a person and a booking's own page: server-rendered HTML with plain
 * forms (no script), every value escaped.
 */
import type { BookingDetail, BookingWaits, RunSummary } from './booking';
import { describeRunBuild, type RunBuild } from '../shared/run-build';
import type { ConsoleItem } from './items';

export interface PageModel {
  items: ConsoleItem[];
  /** The answer to the last action (the console's own signed message, ./flash), shown above the list. */
  message?: string;
  /** A quote to confirm: the fee a cancellation would cost now for this reference, in this namespace. */
  quote?: {
    namespace?: string;
    customerReferenceNo: string;
    fee: { amount: number; currency: string } | null;
    changesAt?: string;
  };
  webUiUrl?: string;
  /** Why nothing could be listed: shown instead of the list, which would otherwise read as "nothing needs a person". */
  problem?: string;
  /** Why some namespaces could not be listed: shown above the others' items, so the list is not read as complete. */
  unlisted?: string[];
  /** The namespaces the console watches; with more than one, links and forms name the item's. */
  namespaces?: string[];
  /** Who is acting: what notes and cancellations record (the certificate's subject, the token's operator). */
  operator?: string;
  /** Whether the operator logged in (with a token), so may log out. */
  signedIn?: boolean;
}

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

const KIND_LABEL: Record<ConsoleItem['kind'], string> = {
  'unresolved-booking': 'Booking unresolved',
  order: 'Order needs a person',
  'sweep-finding': 'Sweep finding',
};

/** The page around `body`: its title, the shared style. */
function documentOf(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;vertical-align:top;text-align:left}
.message{background:#eef6ff;border:1px solid #9cf;padding:.5rem;margin-bottom:1rem}
.problem{background:#ffecec;border:1px solid #f99;padding:.5rem;margin-bottom:1rem}
.quote{background:#fff6e0;border:1px solid #fc6;padding:.5rem;margin-bottom:1rem}
form{display:inline-block;margin:.1rem}small{color:#555}code{font-size:.9em}
</style></head><body>
${body}
</body></html>`;
}

export function renderPage(model: PageModel): string {
  const e = escapeHtml;
  const several = (model.namespaces?.length ?? 1) > 1;
  const rows = model.items.map((item) => renderItem(item, model.webUiUrl, several)).join('\n');
  return documentOf(
    'Bookings that need a person',
    `<h1>Bookings that need a person</h1>
${model.operator ? renderOperator(model.operator, model.signedIn === true) : ''}
<p><small>Unresolved bookings, orders a cancellation left to a person, and sweep findings. An item leaves the list once
it is marked handled, or once a check finds the order settled.</small></p>
${model.namespaces ? `<p><small>Namespaces watched: <span id="namespaces">${model.namespaces.map((n) => `<code>${e(n)}</code>`).join(', ')}</span></small></p>` : ''}
${model.message ? `<p class="message" role="status">${e(model.message)}</p>` : ''}
${(model.unlisted ?? []).map((p) => `<p class="problem" role="alert">${e(p)}</p>`).join('\n')}
${model.problem ? `<p class="problem" role="alert">${e(model.problem)}</p>\n<p><a href="/">Reload</a></p>` : renderList(model, rows)}`,
  );
}

function renderList(model: PageModel, rows: string): string {
  return `${model.quote ? renderQuote(model.quote) : ''}
<p><a href="/">Refresh</a> · <span id="count">${model.items.length}</span> item(s)</p>
<table><thead><tr><th>What</th><th>Reference</th><th>Stage</th><th>Build</th><th>Age</th><th>Details</th><th>Actions</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="7">Nothing needs a person.</td></tr>'}
</tbody></table>`;
}

function renderItem(item: ConsoleItem, webUiUrl: string | undefined, several: boolean): string {
  const e = escapeHtml;
  const ref = item.customerReferenceNo ?? '';
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${e(value)}">`;
  // Every action goes to the item's own namespace: the form says which, and the console checks it watches it.
  const target =
    (item.namespace ? hidden('namespace', item.namespace) : '') +
    hidden('workflowId', item.workflowId) +
    hidden('runId', item.runId) +
    hidden('ref', ref);
  const polls = item.polls
    .map(
      (p) =>
        `<li><code>${e(p.at)}</code> ${e(p.trigger)} → ${e(p.result)}${p.status !== undefined ? ` (status ${e(p.status)})` : ''}</li>`,
    )
    .join('');
  const link = historyLink(webUiUrl, item, item.namespace);
  const actions = [
    item.actions.includes('check') && ref
      ? `<form method="post" action="/actions/check">${target}${hidden('kind', item.kind)}<button>Check again now</button></form>`
      : '',
    item.actions.includes('quote-cancel') && ref
      ? `<form method="post" action="/actions/quote">${target}<button>Quote cancellation</button></form>`
      : '',
    item.actions.includes('handled')
      ? `<form method="post" action="/actions/handled">${target}<input name="note" required maxlength="2000" placeholder="What was done" aria-label="note">` +
        '<button>Mark handled</button></form>'
      : '',
  ].join('');
  const namespace = item.namespace
    ? `<br><small class="namespace">namespace <code>${e(item.namespace)}</code></small>`
    : '';
  const page = bookingPath(ref, several ? item.namespace : undefined);
  return `<tr class="item" data-ref="${e(ref)}" data-kind="${e(item.kind)}"${item.namespace ? ` data-namespace="${e(item.namespace)}"` : ''}>
<td>${e(KIND_LABEL[item.kind])}<br><small><code>${e(item.workflowId)}</code>${link}</small>${namespace}</td>
<td>${ref ? `<a href="${e(page)}"><code>${e(ref)}</code></a>` : ''}</td><td>${e(item.stage)}</td>
<td>${renderBuild(item.build)}</td>
<td>${item.ageMinutes !== undefined ? `${e(item.ageMinutes)} min` : ''}</td>
<td>${e(item.summary)}${polls ? `<ul>${polls}</ul>` : ''}</td>
<td>${actions}</td></tr>`;
}

/** Who the notes and cancellations made here are recorded as, and (after a token login) the way out. */
function renderOperator(operator: string, signedIn: boolean): string {
  const logout = signedIn ? ' <form method="post" action="/logout"><button>Log out</button></form>' : '';
  return `<p><small>Acting as <strong id="operator">${escapeHtml(operator)}</strong>: notes and cancellations are recorded under this name.</small>${logout}</p>`;
}

function renderQuote(q: NonNullable<PageModel['quote']>): string {
  const e = escapeHtml;
  // A null fee is an unknown one (no readable policy): accepting it is accepting whatever the supplier charges.
  const fee = q.fee ? `${q.fee.amount} ${q.fee.currency}` : 'an unknown fee';
  const feeFields = q.fee
    ? `<input type="hidden" name="amount" value="${e(q.fee.amount)}"><input type="hidden" name="currency" value="${e(q.fee.currency)}">`
    : '<input type="hidden" name="unknownFee" value="1">';
  const where = q.namespace ? ` in namespace <code>${e(q.namespace)}</code>` : '';
  const namespaceField = q.namespace ? `<input type="hidden" name="namespace" value="${e(q.namespace)}">` : '';
  return `<div class="quote"><p>Cancelling <code>${e(q.customerReferenceNo)}</code>${where} costs <strong>${e(fee)}</strong> now${
    q.changesAt ? ` (until ${e(q.changesAt)})` : ''
  }. The order workflow quotes again before it sends Cancel and stops if the fee is higher.</p>
<form method="post" action="/actions/cancel">${namespaceField}<input type="hidden" name="ref" value="${e(q.customerReferenceNo)}">${feeFields}
<input name="reason" required maxlength="500" placeholder="Reason" aria-label="reason"><button>Cancel at ${e(fee)}</button></form></div>`;
}

/** Where a reference's own page is: in `namespace` when given (a console watching several), else its only one. */
export function bookingPath(ref: string, namespace?: string): string {
  return `/booking?ref=${encodeURIComponent(ref)}${namespace ? `&namespace=${encodeURIComponent(namespace)}` : ''}`;
}

/** A link to the run's history in the Web UI, in the run's namespace, when the UI's address is known. */
function historyLink(
  webUiUrl: string | undefined,
  run: { workflowId: string; runId: string },
  namespace = 'default',
): string {
  if (!webUiUrl) return '';
  const url = `${webUiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(run.workflowId)}/${encodeURIComponent(run.runId)}`;
  return ` <a href="${escapeHtml(url)}">history</a>`;
}

/** The build id, with how the run follows it and the deployment on hover; `unversioned` without one. */
function renderBuild(build: RunBuild | null): string {
  if (!build) return '<span class="build">unversioned</span>';
  return `<span class="build" title="${escapeHtml(describeRunBuild(build))}"><code>${escapeHtml(build.buildId)}</code> <small>${escapeHtml(build.behavior)}</small></span>`;
}

export interface BookingPageModel {
  /** The reference asked for; `detail` undefined when it has no booking and no order run. */
  customerReferenceNo: string;
  detail?: BookingDetail;
  /** Why the booking could not be read: shown instead of "no booking". */
  problem?: string;
  /** The namespace its runs were read in. */
  namespace?: string;
  namespaces?: string[];
  webUiUrl?: string;
  operator?: string;
  signedIn?: boolean;
}

/** A booking's own page: its booking workflow and the order's latest run, each with status, stage and build. */
export function renderBookingPage(model: BookingPageModel): string {
  const e = escapeHtml;
  const ref = model.customerReferenceNo;
  const runs = model.detail
    ? [
        renderRun('Booking', model.detail.booking, model.webUiUrl, model.namespace),
        renderRun('Order (latest run)', model.detail.order, model.webUiUrl, model.namespace),
      ].join('\n')
    : '';
  return documentOf(
    `Booking ${ref}`,
    `<h1>Booking <code>${e(ref)}</code></h1>
${model.namespace ? `<p>In namespace <code id="namespace">${e(model.namespace)}</code></p>` : ''}
${model.detail?.supplier ? `<p>On supplier account <code id="supplier-account">${e(model.detail.supplier)}</code></p>` : ''}
${model.operator ? renderOperator(model.operator, model.signedIn === true) : ''}
<p><a href="/">Back to what needs a person</a></p>
${
  model.problem
    ? `<p class="problem" role="alert">${e(model.problem)}</p>`
    : model.detail
      ? `<table><thead><tr><th>Workflow</th><th>Status</th><th>Stage</th><th>Build</th><th>Started</th><th>Closed</th></tr></thead>
<tbody>
${runs}
</tbody></table>
${renderWaits(model.detail.waits)}`
      : '<p class="problem" role="alert">No booking (and no order run) for this reference.</p>'
}`,
  );
}

/** What a running booking waits for, as its state says: a refused Book's next send, the next poll, the deadline. */
function renderWaits(waits: BookingWaits | undefined): string {
  if (!waits) return '';
  const e = escapeHtml;
  const lines = [
    waits.nextBookAt ? `Next Book at <code>${e(waits.nextBookAt)}</code> (the last was refused before any work)` : '',
    waits.nextPollAt ? `Next QueryOrders poll at <code>${e(waits.nextPollAt)}</code>` : '',
    waits.deadlineAt ? `Gives up at <code>${e(waits.deadlineAt)}</code>, and a person is told` : '',
  ].filter(Boolean);
  return `<ul class="waits" id="waits">${lines.map((l) => `<li>${l}</li>`).join('')}</ul>`;
}

function renderRun(
  label: string,
  run: RunSummary | null,
  webUiUrl: string | undefined,
  namespace: string | undefined,
): string {
  const e = escapeHtml;
  if (!run) return `<tr class="run"><td>${e(label)}</td><td colspan="5">none</td></tr>`;
  return `<tr class="run" data-workflow-id="${e(run.workflowId)}">
<td>${e(label)}<br><small><code>${e(run.workflowId)}</code>${historyLink(webUiUrl, run, namespace)}</small></td>
<td>${e(run.status)}</td><td>${e(run.stage ?? '')}</td><td>${renderBuild(run.build)}</td>
<td><code>${e(run.startTime)}</code></td><td>${run.closeTime ? `<code>${e(run.closeTime)}</code>` : ''}</td></tr>`;
}
