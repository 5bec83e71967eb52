/**
 * The one address clients and workers dial for a cluster of several frontends, as a load balancer gives
 * them in production: each new TCP connection goes to the next frontend that accepts it. When a node dies
 * its gRPC connections drop, and the SDK's reconnect lands on a live node.
 */
import net from 'node:net';

export interface FrontendProxy {
  address: string;
  port: number;
  close(): Promise<void>;
}

export async function startFrontendProxy(options: {
  port: number;
  backends: () => Array<{ host: string; port: number }>;
}): Promise<FrontendProxy> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const connectAny = (tried: number, client: net.Socket) => {
    const backends = options.backends();
    if (tried >= backends.length || client.destroyed) {
      client.destroy();
      return;
    }
    const target = backends[next++ % backends.length]!;
    const upstream = net.connect(target);
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.once('error', () => {
      // Refused before any byte flowed: try the next frontend for the same client.
      if (upstream.bytesRead === 0 && upstream.bytesWritten === 0) connectAny(tried + 1, client);
      else client.destroy();
    });
    upstream.once('connect', () => {
      // gRPC writes small frames and waits for answers: Nagle's algorithm would hold each back for an ACK.
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };
  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    connectAny(0, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
