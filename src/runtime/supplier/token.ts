/**
 * Where the bearer token comes from: a static token, or the supplier's Ticket operation.
 *
 * Tickets have a sliding idle expiry (each call renews it) and a hard maximum of 365 days, so the
 * cached ticket is renewed when it has been idle close to its ttl, and shared by concurrent callers.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { SupplierError } from './errors';
import type { TokenProvider } from './interface';
import type { SupplierProfile } from '../config/supplier-profile';
import { describeIssues } from '../../api/values/index';
import { Envelope, TicketData } from './schemas';
import { classifyTransport } from './http-client';

export function staticToken(token: string): TokenProvider {
  return { getToken: async () => token, invalidate: () => undefined };
}

export interface TicketTokenOptions {
  baseUrl: string;
  profile: SupplierProfile;
  appKey: string;
  appSecret: string;
  /** Used for Ticket requests and left open by close(): whoever passes it owns it. Default: an Agent of the provider's own. */
  dispatcher?: Dispatcher;
  now?: () => number;
}

const HARD_MAX_MS = 365 * 24 * 3600 * 1000;

export function ticketTokens(options: TicketTokenOptions): TokenProvider {
  const { profile, appKey, appSecret } = options;
  const now = options.now ?? Date.now;
  const url = `${options.baseUrl.replace(/\/+$/, '')}${profile.paths.ticket}`;
  // Only an Agent made here is closed by close(): a given dispatcher may serve others.
  let ownAgent: Agent | undefined;
  const dispatcher = options.dispatcher ?? (ownAgent = new Agent({ connections: 2, keepAliveTimeout: 30_000 }));
  const ttlMs = profile.ticket.ttlSeconds * 1000;
  const renewBeforeMs = profile.ticket.renewBeforeSeconds * 1000;

  let cached: { token: string; issuedAt: number; lastUsed: number } | undefined;
  let inFlight: Promise<string> | undefined;
  let closing: Promise<void> | undefined;

  async function issue(): Promise<string> {
    const timeoutMs = profile.timeoutsMs.ticket;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      let status: number;
      let text: string;
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ appKey, appSecret, ttl: profile.ticket.ttlSeconds }),
          dispatcher,
          signal: controller.signal,
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (err) {
        throw classifyTransport(err, { operation: 'ticket' }, timedOut, timeoutMs);
      }
      let envelope: Envelope | undefined;
      try {
        const parsed = Envelope.safeParse(JSON.parse(text));
        if (parsed.success) envelope = parsed.data;
      } catch {
        envelope = undefined;
      }
      // A supplier that echoes the request would put the secret into errors, logs and history: cut it out.
      const supplierMessage = envelope?.msg?.split(appSecret).join('[redacted]');
      const details = { operation: 'ticket' as const, httpStatus: status, code: envelope?.code, supplierMessage };
      if (status === 401 || envelope?.code === profile.codes.unauthorized) {
        // The message names the key, never the secret.
        throw new SupplierError(
          'SupplierUnauthorized',
          `ticket: credentials for app key "${appKey}" were refused`,
          details,
        );
      }
      if (status === 403) throw new SupplierError('SupplierForbidden', 'ticket: forbidden', details);
      if (status === 429) throw new SupplierError('SupplierRateLimited', 'ticket: rate limited', details);
      if (status >= 500) throw new SupplierError('SupplierServerError', `ticket: HTTP ${status}`, details);
      if (status !== 200 || !envelope || envelope.code !== profile.codes.success) {
        throw new SupplierError(
          'SupplierInvalidResponse',
          `ticket: unexpected answer (HTTP ${status}, code ${envelope?.code})`,
          details,
        );
      }
      const data = TicketData.safeParse(envelope.data);
      if (!data.success) {
        const issues = describeIssues(data.error, 'data');
        throw new SupplierError('SupplierInvalidResponse', `ticket: invalid response: ${issues.join('; ')}`, {
          ...details,
          issues,
        });
      }
      const t = now();
      cached = { token: data.data.ticket, issuedAt: t, lastUsed: t };
      return data.data.ticket;
    } finally {
      clearTimeout(timer);
    }
  }

  function fresh(t: number): boolean {
    if (!cached) return false;
    return t - cached.lastUsed < ttlMs - renewBeforeMs && t - cached.issuedAt < HARD_MAX_MS - renewBeforeMs;
  }

  return {
    async getToken(signal) {
      // Refused even with a ticket cached: a caller still asking after close has outlived its supplier client.
      if (closing) throw closedProvider();
      const t = now();
      if (cached && fresh(t)) {
        cached.lastUsed = t;
        return cached.token;
      }
      // A caller that has already given up sends nothing.
      if (signal?.aborted) throw abortedByCaller();
      // Concurrent callers share one Ticket request. It runs to its own timeout, not to the first caller's
      // signal: one caller's cancellation must not fail the others; each stops waiting on its own signal.
      inFlight ??= issue().finally(() => (inFlight = undefined));
      return signal ? untilAborted(inFlight, signal) : inFlight;
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
    close() {
      // Idempotent; undici's close lets a Ticket request in flight finish first.
      closing ??= (async () => {
        cached = undefined;
        await ownAgent?.close();
      })();
      return closing;
    },
  };
}

/** Nothing was sent: the Book rule reads it as refused, never as a Book that may have been made. */
const closedProvider = () =>
  new SupplierError('SupplierNetworkBeforeSend', 'ticket: the token provider was closed', { operation: 'ticket' });

const abortedByCaller = () =>
  new SupplierError('SupplierClientTimeout', 'ticket: aborted by the caller', { operation: 'ticket' });

/** The shared Ticket promise as one caller sees it: rejected when that caller's signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedByCaller());
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
