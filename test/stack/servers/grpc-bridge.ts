// TCP -> dockerd BuildKit bridge. Each accepted TCP connection is upgraded on dockerd's socket with
// `POST /grpc` (Upgrade: h2c); after the 101 the connection carries raw gRPC, piped both ways.
// This makes dockerd's embedded BuildKit reachable as tcp://127.0.0.1:PORT for
// `docker buildx create --driver remote`. With a TLS port it also serves the same BuildKit over
// mutual TLS (a client certificate from the CA is required; ALPN h2, which gRPC clients insist on).
// Usage: node --import tsx grpc-bridge.ts <port> <docker socket> [<tls port> <cert> <key> <client ca>]
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

const [portArg, socketPath, tlsPortArg, certFile, keyFile, caFile] = process.argv.slice(2);
if (!portArg || !socketPath || (tlsPortArg && !(certFile && keyFile && caFile))) {
  console.error('usage: grpc-bridge.ts <port> <docker socket> [<tls port> <cert> <key> <client ca>]');
  process.exit(2);
}

const UPGRADE_REQUEST =
  'POST /grpc HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nContent-Length: 0\r\n\r\n';
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER = 64 * 1024;

function handle(client: net.Socket | tls.TLSSocket): void {
  client.pause();
  const upstream = net.connect(socketPath!);
  let head = Buffer.alloc(0);
  const fail = (why: string): void => {
    console.error(`bridge: ${why}`);
    client.destroy();
    upstream.destroy();
  };
  client.on('error', () => upstream.destroy());
  upstream.on('error', (err) => fail(`upstream error: ${err.message}`));
  upstream.on('connect', () => upstream.write(UPGRADE_REQUEST));
  const onHead = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(HEADER_END);
    if (end < 0) {
      if (head.length > MAX_HEADER) fail('upgrade response too large');
      return;
    }
    upstream.off('data', onHead);
    const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
    if (!/^HTTP\/1\.[01] 101 /.test(status)) {
      fail(`upgrade refused: ${status}`);
      return;
    }
    const rest = head.subarray(end + HEADER_END.length);
    if (rest.length > 0) client.write(rest);
    upstream.pipe(client);
    client.pipe(upstream);
    client.resume();
  };
  upstream.on('data', onHead);
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}

const server = net.createServer(handle);
server.listen(Number(portArg), '127.0.0.1', () => {
  console.log(`grpc bridge listening on 127.0.0.1:${portArg} -> ${socketPath}`);
});
if (tlsPortArg) {
  const tlsServer = tls.createServer(
    {
      cert: fs.readFileSync(certFile!),
      key: fs.readFileSync(keyFile!),
      ca: fs.readFileSync(caFile!),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    handle,
  );
  // A refused handshake (no client certificate, one from another CA) is one line in the log.
  // Node closes the connection without an alert when the certificate is from another CA.
  tlsServer.on('tlsClientError', (err, socket) => {
    const why = socket.authorizationError ? ` (${String(socket.authorizationError)})` : '';
    console.error(`tls: handshake refused: ${err.message}${why}`);
  });
  tlsServer.listen(Number(tlsPortArg), '127.0.0.1', () => {
    console.log(`grpc bridge (mutual TLS) listening on 127.0.0.1:${tlsPortArg} -> ${socketPath}`);
  });
}
const stop = (): void => {
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
