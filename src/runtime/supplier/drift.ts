/**
 * Schema drift: a supplier answer whose informational field (one no decision reads) does not have the
 * shape the spec gives it. Such a field is read when its value is plain (a whole number as text, a decimal
 * string as a number: ./read.ts) and left out otherwise. Drift never changes an outcome; it is reported so
 * someone can update the profile or ask the supplier, and counted so the metrics work can export it.
 *
 * A report names the operation and the JSON path with array indices folded (`data.orders[].hotel.rating`),
 * never the value: informational fields include guests' names and e-mails.
 */

/** Receives each drift path the first time this process sees it. */
export type DriftLog = (message: string, meta: { operation: string; path: string }) => void;

export interface DriftReporter {
  /** Records the paths (already folded); logs each (operation, path) pair once per reporter. */
  report(operation: string, paths: readonly string[]): void;
  /** Occurrences per `operation path` so far, for metrics. */
  counts(): ReadonlyMap<string, number>;
}

/** One reporter per worker process: "once per field path" is per reporter. */
export function createDriftReporter(log: DriftLog = consoleDriftLog): DriftReporter {
  const counts = new Map<string, number>();
  return {
    report(operation, paths) {
      for (const path of new Set(paths)) {
        const key = `${operation} ${path}`;
        const seen = counts.get(key) ?? 0;
        counts.set(key, seen + 1);
        if (seen === 0) {
          log(
            `Supplier answer drift: ${operation} ${path} does not have the shape the spec gives it; read where ` +
              `its value is plain (a whole number as text, a decimal string as a number), else ignored (no ` +
              `decision reads it). Logged once per path.`,
            { operation, path },
          );
        }
      }
    },
    counts: () => counts,
  };
}

function consoleDriftLog(message: string): void {
  console.warn(message);
}

/** A spec field name; any other key in a path is data (a map key) and may be personal or secret. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * `data.orders.3.rooms.0.rating` → `data.orders[].rooms[].rating`: one path however many elements drift.
 * A key that is not a field name is shown as `{}`.
 */
export function foldIndices(path: readonly PropertyKey[], prefix: string): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += '[]';
    else {
      const name = typeof key === 'string' && FIELD_NAME.test(key) ? key : '{}';
      out += out ? `.${name}` : name;
    }
  }
  return out || '(root)';
}
