/**
 * The sandbox supplier in its own process, for benchmarks: started by bench/stack.ts, answering
 * stats/orders/calls over IPC, so its CPU is measured apart from the worker's.
 *
 * `memoizeOrderViews` works around a cost of the test double, not of the orchestrator: the sandbox's
 * QueryOrders builds the full HotelOrder of every stored order (with a sha256 per order) before it
 * applies the reference filter, about 27 µs per stored order, so at 1,000 orders one QueryOrders
 * costs ~27 ms of CPU and at 10,000 ~275 ms. That would make the sandbox the bottleneck of the storm
 * and parked benchmarks. The memo keeps each order's view until its status changes; a view depends
 * only on the order and its status, so the answers are identical.
 */
import { childInput, serveParent } from './ipc';
import { startSandbox, type SandboxOperation, type SandboxRuntimeConfig } from '../dev/sandbox/server';
import { OrderStore, type StoredOrder } from '../dev/sandbox/store';
import type { RateLimits } from '../dev/sandbox/rate-limit';
import type { HotelOrder } from '../src/runtime/supplier/schemas';

export interface SandboxProcessInput {
  rateLimits: RateLimits;
  confirmAfterMs: number;
  memoizeOrderViews: boolean;
}

export interface SandboxProcessReady {
  url: string;
  port: number;
}

function memoizeOrderViews(): void {
  const build = OrderStore.prototype.toHotelOrder;
  const memo = new WeakMap<StoredOrder, { status: number; view: HotelOrder }>();
  OrderStore.prototype.toHotelOrder = function (this: OrderStore, order: StoredOrder): HotelOrder {
    const status = this.statusOf(order);
    const hit = memo.get(order);
    if (hit && hit.status === status) return hit.view;
    const view = build.call(this, order);
    memo.set(order, { status, view });
    return view;
  };
}

async function main(): Promise<void> {
  const input = childInput<SandboxProcessInput>();
  if (input.memoizeOrderViews) memoizeOrderViews();
  const sandbox = await startSandbox({ port: 0, confirmAfterMs: input.confirmAfterMs, rateLimits: input.rateLimits });
  const { sendReady } = serveParent(
    {
      stats: () => sandbox.stats(),
      orders: () => sandbox.orders(),
      calls: (op) => sandbox.calls(op as SandboxOperation | undefined),
      configure: (config) => sandbox.configure(config as SandboxRuntimeConfig),
      memory: () => process.memoryUsage(),
    },
    () => sandbox.close(),
  );
  sendReady({ url: sandbox.url, port: sandbox.port } satisfies SandboxProcessReady);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
