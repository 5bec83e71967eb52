/**
 * Step 3 of the chaos run: the chaos itself, loops that run while the bookings start. Workers SIGKILLed in
 * turn, bursts of 429s and 500s on QueryOrders, the dev server killed and restarted once (or, on the
 * production engine, a node killed, PostgreSQL restarted, the other node killed), and a progress line.
 */
import type { Client } from '@temporalio/client';
import type { Sandbox } from '../dev/sandbox/server';
import { substream } from './mix';
import type { Log, ProdServerHandle, ServerHandle, WorkerFleet } from './stack';
import { seconds, sleep } from './timing';
import { RUNNING_QUERY } from './workflows';

/** Prod engine: a Temporal node SIGKILLed and started again (downMs until the node's frontend answered). */
export interface NodeKill {
  node: string;
  atSeconds: number;
  downMs: number;
}

/** Prod engine: PostgreSQL stopped (connections cut) and started again. */
export interface PostgresRestart {
  atSeconds: number;
  downMs: number;
}

/**
 * SIGKILLs the workers in turn (every slot running at the time, of every build), each restarted at once as the
 * same build, skipping a turn while the target is still starting.
 */
export async function killLoop(
  fleet: WorkerFleet,
  opts: {
    everyMs: number;
    firstAt: number;
    endsAt: number;
    keepGoing: () => boolean;
    maxKills: number;
    isDone: () => boolean;
    signal: AbortSignal;
    mark: (event: string) => void;
  },
): Promise<void> {
  let turn = 0;
  for (
    let at = opts.firstAt;
    (at < opts.endsAt || opts.keepGoing()) && fleet.stats.kills < opts.maxKills;
    at += opts.everyMs
  ) {
    await sleep(at - Date.now(), opts.signal);
    if (opts.signal.aborted || opts.isDone()) return;
    const live = fleet.liveSlots();
    const slot = live[turn % live.length];
    if (slot === undefined || !fleet.isReady(slot)) continue;
    opts.mark(`SIGKILL worker ${slot}`);
    await fleet.kill(slot);
    turn++;
  }
}

/** Every few seconds, the next k QueryOrders requests fail with 429 or 500 (whoever sends them). */
export async function queryOrdersFaults(
  sandbox: Sandbox,
  opts: { seed: number; endsAt: number; injected: Record<string, number>; signal: AbortSignal; log: Log },
): Promise<void> {
  const rng = substream(opts.seed, 'queryOrders');
  for (let i = 0; i < 10_000 && Date.now() < opts.endsAt; i++) {
    await sleep(rng.int(3_000, 8_000), opts.signal);
    if (opts.signal.aborted) return;
    const fault = i % 2 === 0 ? '429' : '500';
    sandbox.configure({ queryOrders: { fault, times: rng.int(2, 8) } });
    opts.injected[fault] = (opts.injected[fault] ?? 0) + 1;
  }
}

/** Brings the dev server down once, at its time, and starts it again on the same database and ports. */
export async function restartServerOnce(
  server: ServerHandle,
  opts: {
    at: number;
    how: 'SIGKILL' | 'SIGTERM';
    signal: AbortSignal;
    log: Log;
    mark: (event: string) => void;
    done: (downMs: number) => void;
  },
): Promise<void> {
  await sleep(opts.at - Date.now(), opts.signal);
  if (opts.signal.aborted) return;
  opts.log(`dev server: ${opts.how}, then a restart on the same database and ports`);
  opts.mark(`dev server ${opts.how}`);
  const downMs = await server.restart(opts.how);
  opts.log(`dev server back after ${downMs} ms`);
  opts.done(downMs);
}

/**
 * The production engine's faults: at a third of the start phase one Temporal node is SIGKILLed (its shards
 * move to the other node, then back when it returns), at half PostgreSQL is restarted under load, and at
 * two thirds the other node is SIGKILLed.
 */
export async function prodFaults(
  server: ProdServerHandle,
  opts: {
    phaseStart: number;
    startPhaseMs: number;
    nodeDownMs: number;
    signal: AbortSignal;
    log: Log;
    mark: (event: string) => void;
    live: { nodeKills: NodeKill[]; postgresRestarts: PostgresRestart[] };
  },
): Promise<void> {
  const at = (fraction: number) => opts.phaseStart + opts.startPhaseMs * fraction;
  const since = () => seconds(Date.now() - opts.phaseStart);
  const killNode = async (index: number, fraction: number) => {
    await sleep(at(fraction) - Date.now(), opts.signal);
    if (opts.signal.aborted) return;
    const node = server.nodeNames[index]!;
    const atSeconds = since();
    opts.mark(`SIGKILL Temporal ${node}`);
    const downMs = await server.killNode(index, opts.nodeDownMs);
    opts.log(`Temporal ${node} back after ${downMs} ms`);
    opts.mark(`Temporal ${node} back after ${downMs} ms`);
    opts.live.nodeKills.push({ node, atSeconds, downMs });
  };
  await killNode(0, 1 / 3);
  await sleep(at(1 / 2) - Date.now(), opts.signal);
  if (!opts.signal.aborted) {
    const atSeconds = since();
    opts.mark('PostgreSQL restart');
    const downMs = await server.restartPostgres();
    opts.log(`PostgreSQL back after ${downMs} ms`);
    opts.mark(`PostgreSQL back after ${downMs} ms`);
    opts.live.postgresRestarts.push({ atSeconds, downMs });
  }
  await killNode(1, 2 / 3);
}

/** A line every 15 s, so a long run shows it is alive. */
export async function progress(
  client: Client,
  opts: { signal: AbortSignal; onCount: (n: number) => void; line: () => string; log: Log },
): Promise<void> {
  for (let i = 0; i < 100_000 && !opts.signal.aborted; i++) {
    await sleep(15_000, opts.signal);
    if (opts.signal.aborted) return;
    try {
      opts.onCount((await client.workflow.count(RUNNING_QUERY)).count);
    } catch {
      // The server may be restarting; the next tick will tell.
    }
    opts.log(opts.line());
  }
}
