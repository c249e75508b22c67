import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Stops listening and destroys every open connection: the dependency looks gone. */
  cut(): Promise<void>;
  /** Listens again on the same port (no-op when listening). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy to 127.0.0.1:<targetPort>, so a test can take a dependency away from one app. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect({ host: '127.0.0.1', port: targetPort });
        track(client);
        track(upstream);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });

  const cut = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };

  server = await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    cut,
    restore: async () => {
      if (!server) server = await listen(port);
    },
    close: cut,
  };
}
