/**
 * A TCP proxy in front of a Redis server that can lose one answer: armed with a text, it passes
 * the next command whose bytes hold it to the server, waits for the server's answer (the write
 * has landed), then closes both connections instead of passing the answer on. The client
 * reconnects through it and sends the command again, as after a failover that broke the
 * connection at the worst moment.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttingProxy {
  readonly port: number;
  /** Loses the answer of the next command holding `text`; resolves once it was lost. */
  loseAnswerTo(text: string): Promise<void>;
  close(): Promise<void>;
}

export async function cuttingProxy(targetPort: number): Promise<CuttingProxy> {
  let armed: { text: string; lost: () => void } | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let cutting: (() => void) | undefined;
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (armed !== undefined && chunk.includes(armed.text)) {
        cutting = armed.lost;
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutting === undefined) {
        client.write(chunk);
        return;
      }
      drop();
      cutting();
    });
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', () => {
        sockets.delete(socket);
        drop();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    loseAnswerTo: (text) => new Promise((lost) => (armed = { text, lost })),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
