/**
 * A front for several replicas, as a Kubernetes Service is: each request goes to the replica
 * `pick` names (one that is ready); a replica that breaks the connection is answered 502, as a
 * gateway answers, and the client sends the request again.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReplicaFront {
  readonly url: string;
  close(): Promise<void>;
}

export async function replicaFront(pick: () => { readonly url: string }): Promise<ReplicaFront> {
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', pick().url);
    const out = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
