/**
 * Where a booking's time goes, read from its workflow history: the server stamps every event, and
 * the server runs on this machine's clock, so the client's own timestamps line up with the events.
 *
 * Each gap between consecutive events is charged to the event that ends it (a gap ending in
 * WorkflowTaskStarted is time the task waited in the queue; one ending in ActivityTaskCompleted is
 * the activity's own run, here the supplier's HTTP call).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { forEachConcurrently, percentiles, round } from './measure';

const EventType = temporal.api.enums.v1.EventType;

export const PHASES = [
  'client → server: start request',
  'workflow task: waiting in queue',
  'workflow task: running in worker',
  'activity: waiting in queue',
  'activity: running (supplier HTTP)',
  'server: between tasks',
  'server → client: result delivered',
] as const;
export type Phase = (typeof PHASES)[number];

type Timestamp = { seconds?: number | { toString(): string } | null; nanos?: number | null } | null | undefined;

function timestampMs(ts: Timestamp): number {
  if (!ts) return NaN;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : Number(ts.seconds?.toString() ?? 0);
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

function phaseOf(eventType: number | null | undefined): Phase {
  switch (eventType) {
    case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
      return 'workflow task: waiting in queue';
    case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
      return 'workflow task: running in worker';
    case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
      return 'activity: waiting in queue';
    case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
    case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      return 'activity: running (supplier HTTP)';
    default:
      return 'server: between tasks';
  }
}

export interface TimedRun {
  workflowId: string;
  /** Date.now() just before the start request was sent. */
  sentAtMs: number;
  /** Date.now() when the outcome arrived at the client. */
  resultAtMs: number;
}

/** Milliseconds per phase for one booking. */
export async function phasesOf(client: Client, run: TimedRun): Promise<Record<Phase, number>> {
  const history = await client.workflow.getHandle(run.workflowId).fetchHistory();
  const events = history.events ?? [];
  const out = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
  const times = events.map((e) => timestampMs(e.eventTime as Timestamp));
  if (times.length === 0) return out;
  out['client → server: start request'] = times[0]! - run.sentAtMs;
  for (let i = 1; i < events.length; i++) out[phaseOf(events[i]!.eventType)] += times[i]! - times[i - 1]!;
  out['server → client: result delivered'] = run.resultAtMs - times[times.length - 1]!;
  return out;
}

export interface PhaseFigures {
  phase: Phase;
  p50Ms: number;
  meanMs: number;
  /** Share of the mean end-to-end time. */
  sharePercent: number;
}

/** Per-phase medians and means over many bookings (histories fetched a few at a time). */
export async function phaseBreakdown(client: Client, runs: TimedRun[]): Promise<PhaseFigures[]> {
  const all: Record<Phase, number>[] = [];
  await forEachConcurrently(runs.length, 8, async (i) => {
    all.push(await phasesOf(client, runs[i]!));
  });
  const meanTotal = PHASES.reduce((s, p) => s + percentiles(all.map((r) => r[p])).mean, 0);
  return PHASES.map((phase) => {
    const stats = percentiles(all.map((r) => r[phase]));
    return {
      phase,
      p50Ms: round(stats.p50, 2),
      meanMs: round(stats.mean, 2),
      sharePercent: round((stats.mean / meanTotal) * 100, 1),
    };
  });
}

/** What one booking writes to its history, averaged over runs: the events, and the kinds that cost the most. */
export interface HistoryCounts {
  events: number;
  workflowTasks: number;
  activities: number;
  /** Markers: local activities' results and patch markers. */
  markers: number;
  /** Search-attribute upserts: each is also a visibility write. */
  upserts: number;
}

export async function historyCounts(client: Client, runs: TimedRun[]): Promise<HistoryCounts> {
  const totals: HistoryCounts = { events: 0, workflowTasks: 0, activities: 0, markers: 0, upserts: 0 };
  await forEachConcurrently(runs.length, 8, async (i) => {
    const history = await client.workflow.getHandle(runs[i]!.workflowId).fetchHistory();
    for (const e of history.events ?? []) {
      totals.events++;
      if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) totals.workflowTasks++;
      if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) totals.activities++;
      if (e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) totals.markers++;
      if (e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) totals.upserts++;
    }
  });
  const n = Math.max(1, runs.length);
  return {
    events: round(totals.events / n, 1),
    workflowTasks: round(totals.workflowTasks / n, 1),
    activities: round(totals.activities / n, 1),
    markers: round(totals.markers / n, 1),
    upserts: round(totals.upserts / n, 1),
  };
}
