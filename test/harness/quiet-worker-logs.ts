/**
 * Workers in tests print warnings and errors only (INFO lines about worker state drown the output), but
 * every line at INFO and above is also kept, so tests can scan what a worker logged (for secrets).
 */
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';

const kept: string[] = [];
(globalThis as { __workerLogLines?: string[] }).__workerLogLines = kept;

Runtime.install({
  logger: new DefaultLogger('INFO', (entry: LogEntry) => {
    const line = `${entry.level} ${entry.message} ${JSON.stringify(entry.meta ?? {}, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`;
    kept.push(line);
    if (entry.level === 'WARN' || entry.level === 'ERROR') process.stderr.write(`${line}\n`);
  }),
});

/** The worker log lines of this test file so far. */
export function workerLogLines(): readonly string[] {
  return kept;
}
