/**
 * What every chaos class that drives its own bookings (waits, accounts) does around them: starts a booking through
 * the server's bad moments, kills the workers in turn, and waits for every workflow to close.
 */
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { startBooking } from '../src/api/client/index';
import type { BookingRequest, RecoveryOptions } from '../src/api/contract/index';
import { createEncryptionCodec } from '../src/api/codec/encryption';
import type { HistoryEvent } from './history';
import { CHAOS_SUPPLIER_TIMEOUTS_MS, type ChaosOptions } from './options';
import type { Cleanups, Stack } from './setup';
import type { WorkerFleet } from './stack';
import { forEachLimit, retry, sleep } from './timing';

/** What every class of its own is run with: its size, seed and pace, where its report goes. */
export interface ClassOptions {
  n: number;
  seed: number;
  /** Bookings are started evenly over this many minutes. */
  minutes: number;
  killEverySeconds: number;
  resultsDir: string | null;
  /** Keep the temp dir (database, worker logs, build) even when every invariant held. */
  keepTempDir: boolean;
  log: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Runs one class in a temp dir of its own: the cleanups `body` registers run last first, whatever happens; the dir is
 * kept when asked, when the run failed, or when an invariant did not hold; the report goes to
 * `<resultsDir>/chaos-<name>-<seed>.json`.
 */
export async function inTempDir<R extends { ok: boolean }>(
  w: ClassOptions,
  name: string,
  body: (dir: string, cleanups: Cleanups) => Promise<R>,
): Promise<R & { tempDir?: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `chaos-${name}-${w.seed}-`));
  const cleanups: Cleanups = [];
  let keep = w.keepTempDir;
  try {
    const report = await body(dir, cleanups);
    if (!report.ok) keep = true;
    const out = { ...report, ...(keep ? { tempDir: dir } : {}) };
    if (w.resultsDir) {
      mkdirSync(w.resultsDir, { recursive: true });
      writeFileSync(path.join(w.resultsDir, `chaos-${name}-${w.seed}.json`), `${JSON.stringify(out, null, 2)}\n`);
    }
    return out;
  } catch (err) {
    keep = true;
    w.log(`run failed; kept ${dir}`);
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** The chaos stack's options for a class of its own: workers killed in turn, no server restart, no orphans. */
export function classStackOptions(w: ClassOptions, bundlePath: string, recovery: RecoveryOptions): ChaosOptions {
  return {
    n: w.n,
    seed: w.seed,
    minutes: w.minutes,
    killEverySeconds: w.killEverySeconds,
    maxKills: 1000,
    chaosTailSeconds: 0,
    serverRestart: 'none',
    engine: 'dev',
    nodeDownSeconds: 0,
    deploy: false,
    recovery,
    supplierTimeoutsMs: CHAOS_SUPPLIER_TIMEOUTS_MS,
    resultsDir: null,
    bundlePath,
    startConcurrency: 8,
    startOrder: 'plan',
    orphans: 0,
    keepTempDir: w.keepTempDir,
    log: w.log,
  };
}

/**
 * The run's own stop: aborted with `outer` (at once when it already is: a Ctrl-C during the setup), or by the run when
 * its bookings are done. Every booking's waits listen on it.
 */
export function runAbort(outer?: AbortSignal): AbortController {
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  if (outer?.aborted) abort.abort();
  else outer?.addEventListener('abort', () => abort.abort(), { once: true });
  return abort;
}

/** Starts the booking, asking again (20 times at most, until `until`) when the start is not answered. */
export async function startPersistently(client: Client, request: BookingRequest, until: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await startBooking(client, request);
      return;
    } catch (err) {
      if (Date.now() > until || attempt > 20) throw err;
      await sleep(Math.min(500 * attempt, 3_000));
    }
  }
}

/** SIGKILLs the slots' workers in turn, one every `everySeconds` (each restarted at once), until stopped; how many. */
export async function killInTurn(
  fleet: WorkerFleet,
  slots: string[],
  everySeconds: number,
  signal: AbortSignal,
): Promise<number> {
  let n = 0;
  for (;;) {
    await sleep(everySeconds * 1000, signal);
    if (signal.aborted) return n;
    await fleet.kill(slots[n % slots.length]!);
    n++;
  }
}

/** Waits until no workflow runs (visibility), or the hard limit. */
export async function untilClosed(raw: Client, until: number, signal: AbortSignal): Promise<void> {
  while (Date.now() < until && !signal.aborted) {
    const open = await raw.workflow
      .count(`ExecutionStatus = 'Running'`)
      .then((c) => c.count)
      .catch(() => 1);
    if (open === 0) return;
    await sleep(2_000, signal);
  }
}

/**
 * Calls `fn` until it answers, through transport errors and worker kills, until the hard limit; a workflow's or an
 * update's own answer (failed, not found, refused) is final and thrown.
 */
export async function untilAnswered<T>(o: { until: number; signal: AbortSignal }, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const limit = Math.max(1, o.until - Date.now());
    try {
      return await Promise.race([
        fn(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('no answer by the hard limit')), limit).unref(),
        ),
      ]);
    } catch (err) {
      const final = err instanceof Error && /WorkflowFailed|WorkflowNotFound|UpdateFailed/.test(err.name);
      if (final || Date.now() > o.until || o.signal.aborted) throw err;
      await sleep(Math.min(500 * attempt, 3_000), o.signal);
    }
  }
}

export interface CollectedRun {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  events: HistoryEvent[];
}

/**
 * Every run the namespace holds, each history read raw. Listed through `lister`: a run whose memo is encrypted (a
 * booking's account) is listed only by a client with the codec.
 */
export async function collectRuns(raw: Client, lister: Client = raw): Promise<CollectedRun[]> {
  const infos: Array<Omit<CollectedRun, 'events'>> = [];
  for await (const i of lister.workflow.list({ query: '' })) {
    infos.push({ workflowId: i.workflowId, runId: i.runId, type: i.type, status: i.status.name });
  }
  const out: CollectedRun[] = [];
  await forEachLimit(infos, 8, async (i) => {
    const h = await retry(() => raw.workflow.getHandle(i.workflowId, i.runId).fetchHistory());
    out.push({ ...i, events: h.events ?? [] });
  });
  return out;
}

/** Replays every run against the bundle; the runs that did not replay, with why. */
export async function replayAll(
  runs: CollectedRun[],
  bundlePath: string,
  dataConverter: DataConverter,
): Promise<{ replayed: number; failed: Array<{ workflowId: string; runId: string; error: string }> }> {
  // The replayer's workers log each state change at INFO: this process only replays, so warnings and errors only.
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // A runtime installed already (a test's) keeps its logger.
  }
  const failed: Array<{ workflowId: string; runId: string; error: string }> = [];
  let replayed = 0;
  const queue = [...runs];
  const sent: CollectedRun[] = [];
  async function* histories() {
    for (const r of queue) {
      sent.push(r);
      yield { workflowId: r.workflowId, history: { events: r.events } };
    }
  }
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: bundlePath }, dataConverter },
    histories(),
  )) {
    const r = sent.shift();
    replayed++;
    if (result.error && r) {
      failed.push({
        workflowId: r.workflowId,
        runId: r.runId,
        error: result.error.message.split('\n')[0]!.slice(0, 300),
      });
    }
  }
  return { replayed, failed };
}

/** Every run of the stack's namespace, read raw, and each replayed against the bundle with the run's payload key. */
export async function collectAndReplay(
  stack: Stack,
  bundlePath: string,
): Promise<{ runs: CollectedRun[]; replay: Awaited<ReturnType<typeof replayAll>> }> {
  const runs = await collectRuns(stack.raw, stack.client);
  const codec = createEncryptionCodec({
    keys: new Map([[stack.keyId, Buffer.from(stack.key, 'base64')]]),
    activeKeyId: stack.keyId,
  });
  return { runs, replay: await replayAll(runs, bundlePath, { payloadCodecs: [codec] }) };
}
