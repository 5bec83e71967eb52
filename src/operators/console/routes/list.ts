/**
 * `GET /`: what needs a person in every watched namespace, or (503) why a namespace could not be listed: an operator
 * must never read an empty list as "all is well".
 */
import type { ServerResponse } from 'node:http';
import { SEARCH_ATTRIBUTES } from '../../../api/contract/definitions';
import type { Actor } from '../access';
import { linksFor, type ConsoleContext } from '../context';
import { readFlash } from '../flash';
import { listEveryNamespace } from '../items';
import { renderPage, type PageModel } from '../page';
import { send } from '../respond';

/** The list; a namespace that failed is named above the others' items; when none could be listed, no list is shown. */
export async function listRoute(ctx: ConsoleContext, url: URL, who: Actor, res: ServerResponse): Promise<void> {
  const { namespaces } = ctx;
  // Nothing else from the address is read: a message or a quote is shown only if the console made it for this login.
  const flash = readFlash(ctx.keys.secret, who.login, url.searchParams.get('flash'), ctx.now());
  const said = {
    ...(flash?.message ? { message: flash.message } : {}),
    ...(flash?.quote && namespaces.names.includes(flash.quote.namespace) ? { quote: flash.quote } : {}),
  };
  const model: PageModel = { items: [], ...linksFor(ctx, who.operator), ...said };
  const listing = await listEveryNamespace(namespaces.clients);
  const problems = listing.failed.map((f) => listingProblem(f.error, f.namespace));
  if (listing.failed.length === namespaces.names.length) {
    return send(res, 503, renderPage({ ...model, problem: problems.join(' ') }));
  }
  model.items = listing.items;
  if (problems.length > 0) model.unlisted = problems;
  send(res, problems.length ? 503 : 200, renderPage(model));
}

/**
 * Why the console could not list what needs a person, as one sentence for the page. The likeliest cause on a
 * cluster we did not set up: the namespace lacks the search attributes the console's queries filter on.
 */
export function listingProblem(err: unknown, namespace: string): string {
  const text = [err, (err as { cause?: unknown })?.cause].map((e) => (e instanceof Error ? e.message : '')).join(' ');
  if (/not a valid search attribute|no mapping defined for search attribute/i.test(text)) {
    return (
      `Nothing can be listed: namespace "${namespace}" lacks the search attributes the console filters on ` +
      `(${SEARCH_ATTRIBUTES.map((a) => a.name).join(', ')}). Run \`npm run temporal:setup\` against this ` +
      'cluster, or start a booking worker with WORKER_REGISTER_SEARCH_ATTRIBUTES=on, then reload.'
    );
  }
  const detail = text.trim().slice(0, 300) || String(err).slice(0, 300);
  return `Nothing can be listed: Temporal did not answer the list of namespace "${namespace}" (${detail}). Reload to try again.`;
}
