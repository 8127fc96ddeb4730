// A tiny local HTTP(S) server for registry protocol tests: records every request, answers with a handler.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface SeenRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Client port of the connection that carried the request. */
  remotePort: number;
}

export interface FakeServer {
  origin: string;
  /** host:port */
  host: string;
  requests: SeenRequest[];
  close: () => Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => void;

export interface TlsMaterial {
  key: string;
  cert: string;
}

/** A self-signed certificate for 127.0.0.1 (openssl). */
export function selfSignedCert(): TlsMaterial {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function fakeServer(
  handler: Handler,
  options: { tls?: TlsMaterial; hostname?: string } = {},
): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      remotePort: req.socket.remotePort ?? 0,
    };
    requests.push(seen);
    req.resume();
    req.on('end', () => handler(req, res, seen));
  };
  const server = options.tls ? https.createServer(options.tls, listener) : http.createServer(listener);
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const host = `${options.hostname ?? '127.0.0.1'}:${port}`;
  return {
    origin: `${options.tls ? 'https' : 'http'}://${host}`,
    host,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const json = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
};
