/**
 * Worker logs: the SDK's text lines for a terminal (the default), or with `LOG_FORMAT=json` one JSON
 * object per line for a log pipeline, with the keys an operator filters on named the same for workflow
 * and activity lines: `workflowId`, `runId`, `activity`, `bookingStage` (where known).
 *
 * Only what the SDK and our code put in a line's metadata is written, and neither puts secrets there
 * (the supplier's token never reaches an activity; supplier messages are kept out of errors' text).
 */
import { DefaultLogger, type LogEntry, type Logger, type LogLevel } from '@temporalio/worker';

export type LogFormat = 'text' | 'json';

/** The activity a booking stage is spent in, so activity lines say which stage they belong to. */
const STAGE_OF_ACTIVITY: Record<string, string> = {
  validateBookingRequest: 'checking-availability',
  checkAvail: 'checking-availability',
  checkRequestAndAvail: 'checking-availability',
  book: 'booking',
  queryOrder: 'recovering',
};

/** The booking stage an activity works for, if it is one of ours. */
export function stageOfActivity(activityType: string | undefined): string | undefined {
  return activityType ? STAGE_OF_ACTIVITY[activityType] : undefined;
}

/** The worker's logger in the given format; `write` receives each finished line (tests). */
export function createLogger(
  level: LogLevel,
  format: LogFormat,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  if (format === 'text') return new DefaultLogger(level);
  return new DefaultLogger(level, (entry) => write(jsonLine(entry)));
}

/** One log entry as one line of JSON. */
export function jsonLine(entry: LogEntry): string {
  const { taskToken: _token, workflowRunId, activityType, ...meta } = (entry.meta ?? {}) as Record<string, unknown>;
  const record: Record<string, unknown> = {
    time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    level: entry.level,
    message: entry.message,
    ...meta,
  };
  if (workflowRunId !== undefined && record.runId === undefined) record.runId = workflowRunId;
  if (activityType !== undefined) {
    record.activity = activityType;
    record.bookingStage ??= stageOfActivity(String(activityType));
  }
  return JSON.stringify(record, jsonValue);
}

function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
