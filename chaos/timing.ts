/** The small helpers of time and pace every step of the chaos run shares. */

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Milliseconds as seconds with one decimal, as the report and the log lines show them. */
export const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** A few attempts for calls made after the chaos, when the server should answer. */
export async function retry<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await sleep(500 * i);
    }
  }
}

/** Runs `fn` over the items, at most `limit` at once, so the server is asked at a bounded pace. */
export async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/** An error as one line: its message, and its cause's when it has one. */
export function errorLine(err: unknown): string {
  return err instanceof Error
    ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
    : String(err);
}
