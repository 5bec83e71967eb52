/**
 * A booking worker in its own process, for benchmarks that measure the worker's memory or CPU
 * alone: built exactly like the in-process one (bench/workers.ts). Started by
 * bench/stack.ts; answers status and memory over IPC; drains and exits when asked or when the
 * parent goes away.
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { buildBookingWorker, type BookingWorkerSpec } from './workers';
import { childInput, serveParent } from './ipc';

export interface WorkerProcessInput extends BookingWorkerSpec {
  address: string;
}

async function main(): Promise<void> {
  const input = childInput<WorkerProcessInput>();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: input.address });
  const { worker, close } = await buildBookingWorker(connection, input);
  const running = worker.run();
  const gc = (globalThis as { gc?: () => void }).gc;
  const { sendReady } = serveParent(
    {
      status: () => worker.getStatus(),
      /** After a full GC when --expose-gc is on, so heap figures are live data, not garbage. */
      memory: () => {
        gc?.();
        return { ...process.memoryUsage(), gcForced: gc !== undefined };
      },
    },
    async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await close();
      await connection.close();
    },
  );
  sendReady({ pid: process.pid });
  await running.catch((err: unknown) => {
    console.error('worker failed:', err);
    process.exit(1);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
