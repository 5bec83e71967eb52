/**
 * The sandbox supplier: a real HTTP server that behaves like the supplier of
 * shared/spec/hotel-booking-interface.md with the profile's codes and statuses, including its bad
 * days (chosen per request by the `Test` header, see scenario.ts) and a control API under /_sandbox/
 * for tests, benchmarks and demos. Everything is in memory.
 *
 * Where things are: this file starts the server and hands out its handle; options.ts the options and the
 * handle's types, which every part shares; state.ts what a sandbox holds and the rules every operation shares;
 * requests.ts one request from start to end; routes/ one file per supplier operation; callbacks.ts the
 * order-status callbacks; control.ts the /_sandbox/ surface; http.ts answers, envelopes and reading a request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { configureSandbox, forceOrderStatus, orderViews, resetSandbox, statsOf } from './control';
import { defaultSandboxOptions, type Sandbox, type SandboxOptions } from './options';
import { requestHandler } from './requests';
import { SandboxState } from './state';

export {
  defaultSandboxOptions,
  SANDBOX_PROFILE,
  type QueryOrdersFault,
  type Sandbox,
  type SandboxCall,
  type SandboxCallbackAttempt,
  type SandboxOperation,
  type SandboxOptions,
  type SandboxOrderView,
  type SandboxRuntimeConfig,
  type SandboxStats,
} from './options';
export { basePriceFor } from './store';

/** Starts the sandbox supplier on its port, with its memory empty; the handle inspects, steers and closes it. */
export async function startSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const options: SandboxOptions = { ...defaultSandboxOptions(), ...overrides };
  const state = new SandboxState(options);
  const handle = requestHandler(state);
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  return sandboxHandle(state, server, url, port);
}

/** The in-process handle on a started sandbox: the control surface, and a close that stops its timers too. */
function sandboxHandle(state: SandboxState, server: http.Server, url: string, port: number): Sandbox {
  return {
    url,
    port,
    orders: () => orderViews(state),
    calls: (op) => (op ? state.calls.filter((c) => c.op === op) : [...state.calls]),
    stats: () => statsOf(state),
    reset: () => resetSandbox(state),
    configure: (config) => configureSandbox(state, config),
    setOrderStatus: (ref, status) => forceOrderStatus(state, ref, status),
    callbacks: () => [...state.callbackAttempts],
    close: () =>
      new Promise<void>((resolve) => {
        state.closed = true;
        for (const t of state.timers) clearTimeout(t);
        state.timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
