/**
 * `npm run console`: the operator console on its own (`npm start` runs it beside the worker). Configured by
 * CONSOLE_HOST, CONSOLE_PORT, CONSOLE_TOKEN, TEMPORAL_UI_URL, BOOKING_TASK_QUEUE, Temporal's own connection
 * variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*) and the workers' PAYLOAD_ENCRYPTION_KEYS /
 * PAYLOAD_ENCRYPTION_KEY_ID, with which it reads results server-side. Beyond loopback it will not start without a
 * token.
 */
import { z } from 'zod';
import { connectClient } from '../client';
import { DEFAULT_TASK_QUEUE } from '../contract';
import { startConsole } from './server';

export const ConsoleEnv = z.object({
  /** Interface to listen on; beyond loopback CONSOLE_TOKEN is required. */
  CONSOLE_HOST: z.string().default('127.0.0.1'),
  CONSOLE_PORT: z.coerce.number().int().nonnegative().default(8238),
  /** Operators open `/?token=<token>` once (then a cookie) or send `Authorization: Bearer <token>`. */
  CONSOLE_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  /** The Temporal Web UI's address, for a link to each item's history. */
  TEMPORAL_UI_URL: z.url().optional(),
  BOOKING_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
});

async function main(): Promise<void> {
  const parsed = ConsoleEnv.safeParse(process.env);
  if (!parsed.success) {
    throw new Error(
      `Invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`,
    );
  }
  const e = parsed.data;
  const client = await connectClient(process.env);
  const server = await startConsole({
    client,
    host: e.CONSOLE_HOST,
    port: e.CONSOLE_PORT,
    token: e.CONSOLE_TOKEN,
    taskQueue: e.BOOKING_TASK_QUEUE,
    ...(e.TEMPORAL_UI_URL ? { webUiUrl: e.TEMPORAL_UI_URL } : {}),
  });
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`Operator console on ${server.url}${e.CONSOLE_TOKEN ? ' (token required)' : ' (loopback only)'}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
