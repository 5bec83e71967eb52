/**
 * A worker's first connection to Temporal, with a ceiling on how long it waits for the frontend. A worker restarted
 * while a frontend node is down (a rolling restart, a node's crash: the chaos run's prod mode caught one restarting
 * within a node's 5 s of downtime, and the process exited) waits for it to come back instead of exiting at once and
 * leaving the restart to a supervisor, if there is one. Only transport failures are waited out: a refused
 * certificate or a denied call is not going to change, so it fails at once.
 */
import { NativeConnection, TransportError, type NativeConnectionOptions } from '@temporalio/worker';

/** How long a starting worker waits for an unreachable frontend, by default: longer than a node's restart. */
export const CONNECT_RETRY_FOR_MS = 60_000;

/**
 * Failures of reaching the frontend at all (refused, reset, closed mid-call, unresolved, timed out: the SDK's
 * TransportError), not of being let in (a certificate, a denied call: those say so).
 */
const UNREACHABLE =
  /connection (refused|reset|closed)|connectionreset|broken pipe|dns error|timed out|unavailable|cancel/i;
const NOT_LET_IN = /certificate|tls|handshake|permission|unauthenticated|denied/i;

export function isUnreachable(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return (err instanceof TransportError || UNREACHABLE.test(message)) && !NOT_LET_IN.test(message);
}

export interface ConnectRetry {
  /** How long to keep trying; 0 tries once. */
  retryForMs?: number;
  /** Told before each wait, with the failure and the wait. */
  onRetry?: (err: unknown, delayMs: number) => void;
  /** The clock and the pause, for tests. */
  now?: () => number;
}

export async function connectWorkerConnection(
  options: NativeConnectionOptions,
  { retryForMs = CONNECT_RETRY_FOR_MS, onRetry, now = Date.now }: ConnectRetry = {},
): Promise<NativeConnection> {
  const giveUpAtMs = now() + retryForMs;
  let delayMs = 500;
  for (;;) {
    try {
      return await NativeConnection.connect(options);
    } catch (err) {
      const waitMs = Math.min(delayMs, giveUpAtMs - now());
      if (!isUnreachable(err) || waitMs <= 0) throw err;
      onRetry?.(err, waitMs);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      delayMs = Math.min(delayMs * 2, 5_000);
    }
  }
}
