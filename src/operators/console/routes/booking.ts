/** `GET /booking?ref=&namespace=`: a booking's own page, read-only: its runs, each with status, stage and build. */
import type { ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Actor } from '../access';
import { readBookingDetail } from '../booking';
import { linksFor, type ConsoleContext } from '../context';
import { NamespaceRefusedError } from '../namespaces';
import { escapeHtml, renderBookingPage } from '../page';
import { send } from '../respond';

const BookingQuery = z.object({ ref: z.string().trim().min(1).max(100) });

/** The page; 400 on a reference or namespace refused, 404 when the booking has no run, 503 when Temporal is silent. */
export async function bookingRoute(ctx: ConsoleContext, url: URL, who: Actor, res: ServerResponse): Promise<void> {
  const query = BookingQuery.safeParse({ ref: url.searchParams.get('ref') ?? '' });
  if (!query.success) return send(res, 400, 'expected ?ref=&lt;reference&gt; (up to 100 characters)');
  let client: Client;
  try {
    client = ctx.namespaces.clientFor(url.searchParams.get('namespace'));
  } catch (err) {
    if (err instanceof NamespaceRefusedError) return send(res, 400, escapeHtml(err.message));
    throw err;
  }
  const customerReferenceNo = query.data.ref;
  const page = { customerReferenceNo, ...linksFor(ctx, who.operator), namespace: client.options.namespace };
  try {
    const detail = await readBookingDetail(client, customerReferenceNo);
    send(res, detail ? 200 : 404, renderBookingPage({ ...page, ...(detail ? { detail } : {}) }));
  } catch (err) {
    const problem = `Temporal did not answer for this booking (${err instanceof Error ? err.message : String(err)}).`;
    send(res, 503, renderBookingPage({ ...page, problem: problem.slice(0, 400) }));
  }
}
