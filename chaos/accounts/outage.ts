/**
 * The failing account's bad days, in turn: stopped (nothing listens: connection refused, open connections cut), then
 * rate limited (the supplier's own limiter answers 429 to every request), then slow (every answer held back), then
 * well again. Its supplier (a sandbox) keeps running throughout, behind a TCP relay the workers reach it by: a stop
 * is the relay closing, so the supplier's record of orders and calls outlives the outage, as a real one's would.
 */
import net from 'node:net';
import type { Sandbox } from '../../dev/sandbox/server';
import { sleep } from '../timing';

export type OutageMode = 'up' | 'stopped' | '429' | 'slow';

/** One phase of the outage as it went: when it began and ended, from the run's start of bookings. */
export interface OutagePhase {
  mode: OutageMode;
  fromMs: number;
  toMs: number;
}

/** A TCP relay to `target`; `stop()` closes its port and cuts every connection, `start()` listens again on it. */
export class Relay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** Milliseconds each chunk of an answer is held back (0: passed at once). */
  delayMs = 0;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk) => upstream.write(chunk));
    // Answers held back chunk by chunk with one delay at a time, so their order on the connection is kept.
    upstream.on('data', (chunk) => {
      const delay = this.delayMs;
      if (delay <= 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), delay).unref();
    });
  }
}

/** Rate limits the supplier's limiter never reaches (up) or never refills to one request (429). */
const UNLIMITED = { overall: 1e6, checkAvail: 1e6, book: 1e6, queryOrders: 1e6 };
const NONE = { overall: 1e-9, checkAvail: 1e-9, book: 1e-9, queryOrders: 1e-9 };

export interface OutagePlan {
  /** Up this long after the first start, before the first fault. */
  leadSeconds: number;
  stoppedSeconds: number;
  rateLimitedSeconds: number;
  slowSeconds: number;
  /** Each answer held back this long while slow. */
  slowDelayMs: number;
}

/** Puts the failing account through its phases from `startMs`; resolves with them once it is up again. */
export async function runOutage(
  plan: OutagePlan,
  failing: { relay: Relay; sandbox: Sandbox },
  startMs: number,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<OutagePhase[]> {
  const phases: OutagePhase[] = [];
  const at = () => Date.now() - startMs;
  const phase = async (mode: OutageMode, seconds: number, enter: () => Promise<void> | void) => {
    // From before the change, so a booking started while it is made counts in the new phase.
    const fromMs = at();
    await enter();
    log(`failing account ${mode} for ${seconds} s (t+${Math.round(fromMs / 1000)} s)`);
    await sleep(seconds * 1000, signal);
    phases.push({ mode, fromMs, toMs: at() });
  };
  await sleep(plan.leadSeconds * 1000, signal);
  await phase('stopped', plan.stoppedSeconds, () => failing.relay.stop());
  await phase('429', plan.rateLimitedSeconds, async () => {
    failing.sandbox.configure({ rateLimits: NONE });
    await failing.relay.start();
  });
  await phase('slow', plan.slowSeconds, () => {
    failing.sandbox.configure({ rateLimits: UNLIMITED });
    failing.relay.delayMs = plan.slowDelayMs;
  });
  failing.relay.delayMs = 0;
  log(`failing account up again (t+${Math.round(at() / 1000)} s)`);
  return phases;
}
