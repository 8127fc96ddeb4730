// A counting TCP proxy in front of a registry: pipes bytes both ways and counts the HTTP
// requests (round trips) and TCP connections that went through it.
import net from 'node:net';

export interface CountingProxy {
  /** host:port to give the service instead of the registry's */
  host: string;
  /** HTTP requests seen, in order (`METHOD path`). */
  requests: string[];
  connections: () => number;
  reset: () => void;
  close: () => Promise<void>;
}

const REQUEST_LINE = /(?:^|\r\n)(GET|HEAD|DELETE|PUT|POST|PATCH|OPTIONS) (\S+) HTTP\/1\.[01]\r\n/g;

export async function countingProxy(target: string): Promise<CountingProxy> {
  const [targetHost = '127.0.0.1', targetPort = '80'] = target.split(/:(?=\d+$)/);
  const requests: string[] = [];
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(targetPort), targetHost);
    sockets.add(client).add(upstream);
    let tail = '';
    client.on('data', (chunk: Buffer) => {
      // requests without bodies (GET/HEAD/DELETE): request lines are found in the stream as is
      const text = tail + chunk.toString('latin1');
      for (const m of text.matchAll(REQUEST_LINE)) requests.push(`${m[1]} ${m[2]}`);
      const cut = text.lastIndexOf('\r\n');
      tail = cut >= 0 ? text.slice(cut) : text.slice(-2048);
    });
    client.pipe(upstream).pipe(client);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    reset: () => {
      requests.length = 0;
      connections = 0;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
