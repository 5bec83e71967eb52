/**
 * Whether a supplier account answers at all, asked once as the worker starts. A base URL with no such host, a port
 * nothing listens on, a TLS mismatch or a Ticket credential the supplier refuses would otherwise show only when the
 * first booking on that account fails its CheckAvail, minutes after the deploy that broke it.
 *
 * The probe acts on nothing upstream: an HTTP HEAD of the base URL (any status means something answers there), then,
 * for a Ticket account, one Ticket (kept in the account's token cache, so its first booking uses it). A static
 * token is not tried: the only way to try one is an operation, and none is called before a booking asks.
 */
import { Agent, request } from 'undici';
import { SupplierError } from './errors';
import { transportCode } from './http-client';
import type { TokenProvider } from './interface';

/** How long the probe waits for each of its two requests. */
export const REACH_TIMEOUT_MS = 5_000;

export type Reach = { ok: true; said: string } | { ok: false; reason: string };

export interface ReachOptions {
  baseUrl: string;
  /** Given for a Ticket account only: the probe then asks for a Ticket too. */
  tickets?: TokenProvider;
  timeoutMs?: number;
}

/** What answers at the base URL, and whether the Ticket credential is taken; never throws. */
export async function reachSupplier(options: ReachOptions): Promise<Reach> {
  const timeoutMs = options.timeoutMs ?? REACH_TIMEOUT_MS;
  const agent = new Agent({ connections: 1, connect: { timeout: timeoutMs } });
  try {
    const res = await request(options.baseUrl, {
      method: 'HEAD',
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump();
  } catch (err) {
    return { ok: false, reason: transportReason(err, timeoutMs) };
  } finally {
    void agent.close().catch(() => undefined);
  }
  if (!options.tickets) return { ok: true, said: 'it answers' };
  try {
    await options.tickets.getToken(AbortSignal.timeout(timeoutMs));
    return { ok: true, said: 'it answers and issued a Ticket' };
  } catch (err) {
    // The Ticket client's errors name the key, never the secret (src/runtime/supplier/token.ts).
    const why = err instanceof SupplierError ? `${err.type}: ${err.message}` : String(err);
    return { ok: false, reason: `it answers, but no Ticket was issued (${why})` };
  }
}

/** One line for the worker's log, naming the account. */
export function describeReach(account: string, baseUrl: string, reach: Reach): string {
  return reach.ok
    ? `Supplier account ${account} (${baseUrl}) answered at start: ${reach.said}`
    : `Supplier account ${account} (${baseUrl}) is not usable at start: ${reach.reason}. ` +
        'Its bookings fail at CheckAvail, nothing booked, until it answers; the other accounts serve.';
}

function transportReason(err: unknown, timeoutMs: number): string {
  const code = transportCode(err);
  const name = (err as Error)?.name;
  if (name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT')
    return `no answer within ${timeoutMs} ms`;
  if (code === 'ECONNREFUSED') return 'nothing listens there (ECONNREFUSED)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `no such host (${code})`;
  if (code && /CERT|TLS|SSL/.test(code)) return `TLS refused (${code})`;
  return `could not connect (${code ?? name ?? 'unknown'})`;
}
