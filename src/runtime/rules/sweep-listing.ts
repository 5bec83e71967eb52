/**
 * What one listing of the sweep carries, and how big it may get. Every listing's result is recorded in the
 * sweep's history, where Temporal refuses a payload over 2 MB (and warns from 1 MB): so a listing carries per
 * order only what the sweep reads, and a slice listing more orders than the ceiling is listed again in halves.
 * Workflow-safe (no I/O); shared by the activity (src/activities/sweep.ts) and the sweep workflow.
 */

/** One order as the sweep judges it: the fields classify.ts reads, the cancel decision and a finding's report. */
export interface SweepOrder {
  customerReferenceNo: string;
  status: number;
  /** The status read through the profile (see viewOf): an orphan is cancelled only when `confirmed`. */
  state: 'pending' | 'confirmed' | 'failed' | 'cancelled' | 'cancel-failed';
  platformReferenceNo?: string;
  supplierReferenceNo?: string;
}

/**
 * The most orders one listing returns. A slim order measured 166 bytes as JSON with the sandbox's references
 * (test/unit/sweep-listing.test.ts), so 3,000 are about 0.5 MB, well under the 1 MB warning and 2 MB limit even
 * with a supplier's references twice as long; the full order views listed before took 485 bytes each.
 */
export const SWEEP_SLICE_CEILING = 3_000;

/**
 * The failure type of a listing over the ceiling, or of one the supplier may have cut short at its page (as many
 * orders as the profile's `queryOrders.pageSize`, or "page size exceeded"): non-retryable, the workflow lists its
 * window again in halves, and a minimal slice still too large is a failed listing, never a window read as complete.
 */
export const SWEEP_SLICE_TOO_LARGE = 'SweepSliceTooLarge';

/** A listing's window, ISO timestamps as QueryOrders takes them. */
export interface TimeWindow {
  start: string;
  end: string;
}

/** A window is halved no finer than this; a slice this short still too large is a failed listing. */
export const MIN_SLICE_MS = 60_000;

/**
 * A window's two halves, cut at a whole second (the supplier's timestamps carry no finer time), or undefined when
 * a half would be shorter than MIN_SLICE_MS.
 */
export function halves(window: TimeWindow): [TimeWindow, TimeWindow] | undefined {
  const startMs = Date.parse(window.start);
  const endMs = Date.parse(window.end);
  const middleMs = Math.floor((startMs + endMs) / 2 / 1000) * 1000;
  if (middleMs - startMs < MIN_SLICE_MS || endMs - middleMs < MIN_SLICE_MS) return undefined;
  const middle = new Date(middleMs).toISOString();
  return [
    { start: window.start, end: middle },
    { start: middle, end: window.end },
  ];
}

const DAY_MS = 24 * 3600_000;

/**
 * A check-in window's two halves. Check-ins are dates, so halving a window around one day's midnight would list
 * that whole day again in each half, down to a minute, and fail all the same: a check-in window is cut only
 * between two midnights inside it (at noon UTC, so a supplier reading dates in any time zone within ±12 h puts
 * each date in one half), and undefined when it holds one midnight or none: a day over the ceiling is one failed
 * listing at once.
 */
export function checkInHalves(window: TimeWindow): [TimeWindow, TimeWindow] | undefined {
  const startMs = Date.parse(window.start);
  const endMs = Date.parse(window.end);
  const midnights: number[] = [];
  for (let m = Math.ceil(startMs / DAY_MS) * DAY_MS; m <= endMs; m += DAY_MS) midnights.push(m);
  if (midnights.length < 2) return undefined;
  const cut = new Date(midnights[Math.floor((midnights.length - 1) / 2)]! + DAY_MS / 2).toISOString();
  return [
    { start: window.start, end: cut },
    { start: cut, end: window.end },
  ];
}
