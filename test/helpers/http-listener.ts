// A tiny local HTTP listener for receiver helpers: collects request bodies (gunzipped when needed).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = req.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(raw);
  if (encoding === 'deflate') return inflateSync(raw);
  return raw;
}

/** Listens on 127.0.0.1:0; `handle` gets each request with its decoded body and answers it. */
export async function listen(
  handle: (request: ReceivedRequest) => { status: number; body: string },
): Promise<{ server: Server; origin: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => {
        const answer = handle({
          method: req.method ?? '',
          path: (req.url ?? '').split('?')[0] ?? '',
          headers: req.headers,
          body,
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      })
      .catch(() => res.writeHead(400).end());
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
