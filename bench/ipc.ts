/**
 * Benchmark parts that run as child processes (the sandbox supplier, a booking worker), so their
 * CPU and memory can be read from /proc apart from the process that drives the load.
 *
 * A child runs this repository's code compiled to JavaScript (bench/compile.ts), or TypeScript
 * through ts-node when given a .ts entry, and talks to the parent over Node's IPC channel with small
 * request/answer messages. A child stops when asked, and
 * also when the channel closes, so a parent that dies leaves no orphan behind.
 */
import { fork, type ChildProcess } from 'node:child_process';

interface Request {
  id: number;
  method: string;
  params?: unknown;
}
type Answer = { id: number; result: unknown } | { id: number; error: string };
type ReadyMessage = { ready: unknown };

/** The parent's view of a child: its pid, what it said when ready, and calls into it. */
export interface ChildHandle<Ready> {
  pid: number;
  ready: Ready;
  call<T>(method: string, params?: unknown, timeoutMs?: number): Promise<T>;
  /** Asks the child to stop and waits for it to exit; kills it if it has not within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Forks `entry` (.js, or .ts through ts-node) with `input` as JSON in BENCH_CHILD_INPUT and waits for it to be ready. */
export async function startChild<Ready>(
  entry: string,
  input: unknown,
  options: { readyTimeoutMs?: number; execArgv?: string[] } = {},
): Promise<ChildHandle<Ready>> {
  const child: ChildProcess = fork(entry, [], {
    execArgv: [
      ...(entry.endsWith('.ts') ? ['-r', require.resolve('ts-node/register/transpile-only')] : []),
      ...(options.execArgv ?? []),
    ],
    env: { ...process.env, BENCH_CHILD_INPUT: JSON.stringify(input) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  child.on('message', (message: Answer | ReadyMessage) => {
    if ('ready' in message) return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if ('error' in message) waiter.reject(new Error(message.error));
    else waiter.resolve(message.result);
  });
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${entry} exited`));
    pending.clear();
  });

  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  const ready = await Promise.race([
    new Promise<Ready>((resolve) => {
      const onMessage = (message: Answer | ReadyMessage) => {
        if (!('ready' in message)) return;
        child.off('message', onMessage);
        resolve(message.ready as Ready);
      };
      child.on('message', onMessage);
    }),
    exited.then(() => {
      throw new Error(`${entry} exited with code ${child.exitCode} before it was ready`);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${entry} was not ready after ${readyTimeoutMs} ms`)), readyTimeoutMs);
    }),
  ]).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  clearTimeout(timer);

  const handle: ChildHandle<Ready> = {
    pid: child.pid!,
    ready,
    call<T>(method: string, params?: unknown, timeoutMs = 60_000): Promise<T> {
      if (child.exitCode !== null || child.signalCode !== null || !child.connected) {
        return Promise.reject(new Error(`${entry} is not running`));
      }
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const t = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${entry}: ${method} got no answer within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (v) => {
            clearTimeout(t);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(t);
            reject(e);
          },
        });
        child.send({ id, method, params } satisfies Request);
      });
    },
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await handle.call('stop', undefined, graceMs).catch(() => undefined);
      const killTimer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(killTimer);
    },
  };
  return handle;
}

/**
 * The child's side: reads its input, answers the parent's calls with `handlers`, and runs `stop`
 * once (asked to, or the parent went away) before exiting.
 */
export function serveParent(
  handlers: Record<string, (params: unknown) => unknown>,
  stop: () => Promise<void>,
): { sendReady(info: unknown): void } {
  if (!process.send) throw new Error('This file runs as a child of the benchmark (bench/main.ts), not on its own');
  let stopping: Promise<void> | undefined;
  const stopOnce = () => (stopping ??= stop().catch((err: unknown) => console.error(err)));
  process.on('message', (message: Request) => {
    if (message.method === 'stop') {
      void stopOnce().then(() => {
        process.send?.({ id: message.id, result: null });
        process.disconnect?.();
        process.exit(0);
      });
      return;
    }
    const handler = handlers[message.method];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown method ${message.method}`);
        return handler(message.params);
      })
      .then(
        (result) => process.send?.({ id: message.id, result: result ?? null }),
        (err: unknown) => process.send?.({ id: message.id, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  // The parent died or closed the channel: clean up rather than linger as an orphan.
  process.once('disconnect', () => void stopOnce().then(() => process.exit(0)));
  return { sendReady: (info) => process.send?.({ ready: info }) };
}

export function childInput<T>(): T {
  const raw = process.env.BENCH_CHILD_INPUT;
  if (!raw) throw new Error('BENCH_CHILD_INPUT is not set: this file is started by bench/main.ts');
  return JSON.parse(raw) as T;
}
