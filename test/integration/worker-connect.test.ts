/**
 * A starting worker waits for an unreachable frontend, up to its ceiling (src/runtime/namespace/connect.ts): against the dev
 * server behind a TCP forwarder that is not listening yet, as a node restarting would be; and it gives up with the
 * transport's own error once the ceiling passes, or at once when it is let in nowhere.
 */
import { createServer, connect as tcpConnect, type Server } from 'node:net';
import { connectWorkerConnection, isUnreachable } from '../../src/runtime/namespace/connect';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Forwards every connection on `port` to the dev server, once started. */
function forwarder(port: number, target: string): Promise<Server> {
  const [host, targetPort] = target.split(':') as [string, string];
  const server = createServer((inbound) => {
    const outbound = tcpConnect(Number(targetPort), host);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

test('a frontend that comes up a moment later is waited for, each wait told', async () => {
  const port = await freePort();
  const retries: number[] = [];
  let server: Server | undefined;
  const upLater = new Promise<void>((resolve) =>
    setTimeout(() => {
      void forwarder(port, process.env.TEST_DEV_SERVER_ADDRESS!).then((s) => {
        server = s;
        resolve();
      });
    }, 1500),
  );
  const connection = await connectWorkerConnection(
    { address: `127.0.0.1:${port}` },
    { retryForMs: 30_000, onRetry: (_err, delayMs) => retries.push(delayMs) },
  );
  try {
    await upLater;
    expect(retries.length).toBeGreaterThanOrEqual(1);
    // Reached through the forwarder: the dev server answers as itself.
    const info = await connection.workflowService.getSystemInfo({});
    expect(info.capabilities).toBeDefined();
  } finally {
    await connection.close();
    server?.close();
  }
});

test('past its ceiling the worker gives up with the transport error', async () => {
  const port = await freePort();
  const retries: number[] = [];
  await expect(
    connectWorkerConnection(
      { address: `127.0.0.1:${port}` },
      { retryForMs: 1200, onRetry: (_err, delayMs) => retries.push(delayMs) },
    ),
  ).rejects.toThrow(/GetSystemInfo|transport|refused/i);
  expect(retries.length).toBeGreaterThanOrEqual(1);
  // The waits stay within the ceiling.
  expect(retries.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1200);
});

test.each([
  ['Failed to call GetSystemInfo: transport error (ConnectionReset)', true],
  ['tcp connect error: Connection refused (os error 111)', true],
  // What a node killed mid-handshake left a restarting worker with, in the chaos run's prod mode.
  [
    `Failed to call GetSystemInfo: code: 'The operation was cancelled', message: "operation was canceled", source: ` +
      'tonic::transport::Error(Transport, hyper::Error(Canceled, "connection closed"))',
    true,
  ],
  ['Failed to call GetSystemInfo: status: Unavailable, message: "node down"', true],
  ['invalid peer certificate: UnknownIssuer', false],
  ['Failed to call GetSystemInfo: status: PermissionDenied, message: "Request unauthorized."', false],
])('%p is waited out: %p', (message, waited) => {
  expect(isUnreachable(new Error(message))).toBe(waited);
});
