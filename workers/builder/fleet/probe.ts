/**
 * The cheap call that tells whether a builder answers (docs/fleet.md): an HTTP/2 connection (TLS
 * with ALPN h2 and the client certificate when configured, else h2c) and one PING, within a short
 * timeout. BuildKit's gRPC server acknowledges it; a refused connection, a refused handshake or
 * silence is a failure whose text names what went wrong (never a key's content).
 */
import { readFileSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { reasonOf } from '../../../src/errors/errors.js';
import type { BuilderTls } from '../../../src/config/types.js';

export type ProbeResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };
export type Probe = (endpoint: string) => Promise<ProbeResult>;

/** The TLS material of a probe, read once (the key stays in memory only). */
interface TlsMaterial {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
}

function tlsMaterial(tls: BuilderTls | undefined): TlsMaterial | undefined {
  if (tls === undefined) return undefined;
  return {
    ...(tls.caPath === undefined ? {} : { ca: readFileSync(tls.caPath) }),
    ...(tls.certPath === undefined ? {} : { cert: readFileSync(tls.certPath) }),
    ...(tls.keyPath === undefined ? {} : { key: readFileSync(tls.keyPath) }),
    ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
  };
}

/** What a failed probe says: the kind of failure, then the error's code. */
function failureReason(err: unknown, tls: boolean): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const message = reasonOf(err);
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (/^ERR_SSL_/.test(code)) return `TLS handshake failed (${code})`;
  if (/SSL|TLS|CERT/i.test(`${code} ${message}`) || (tls && code === 'ECONNRESET')) {
    return `TLS handshake failed (${code === '' ? message : `${code}: ${message}`})`;
  }
  return code === '' ? message : `${code}: ${message}`;
}

interface ProbeSession {
  readonly client: ClientHttp2Session;
  /** What the TLS socket said before the session saw it close (a refused client certificate), if anything. */
  readonly tlsFailure: () => string | undefined;
}

function session(endpoint: string, tls: TlsMaterial | undefined): ProbeSession {
  const url = new URL(endpoint);
  if (url.protocol === 'unix:') {
    const client = connect('http://localhost', { createConnection: () => netConnect(url.pathname) });
    return { client, tlsFailure: () => undefined };
  }
  if (tls === undefined) return { client: connect(`http://${url.host}`), tlsFailure: () => undefined };
  let error: unknown;
  let secured = false;
  const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ...tls, ALPNProtocols: ['h2'] });
  socket.on('error', (err) => (error ??= err));
  socket.once('secureConnect', () => (secured = true));
  const client = connect(`https://${url.host}`, { createConnection: () => socket });
  const tlsFailure = (): string | undefined => {
    if (error !== undefined) return failureReason(error, true);
    // TLS 1.3: a client certificate is judged after the client's handshake ends; a refusal closes.
    return secured
      ? 'TLS handshake failed (the builder closed the connection: client certificate refused?)'
      : undefined;
  };
  return { client, tlsFailure };
}

function probeOnce(
  endpoint: string,
  material: TlsMaterial | undefined,
  timeoutMs: number,
): Promise<ProbeResult> {
  const tls = material !== undefined;
  let probe: ProbeSession;
  try {
    probe = session(endpoint, material);
  } catch (err) {
    return Promise.resolve({ ok: false, reason: failureReason(err, tls) });
  }
  const { client } = probe;
  return new Promise<ProbeResult>((resolve) => {
    const done = (result: ProbeResult): void => {
      clearTimeout(timer);
      client.destroy();
      resolve(result);
    };
    const fail = (err: unknown): void =>
      done({ ok: false, reason: probe.tlsFailure() ?? failureReason(err, tls) });
    const timer = setTimeout(
      () => done({ ok: false, reason: `no answer within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    client.on('error', fail);
    client.on('close', () => fail('connection closed'));
    // A PING sent before the connection is up is cancelled: send it once connected.
    client.on('connect', () => client.ping((err) => (err === null ? done({ ok: true }) : fail(err))));
  });
}

/** A probe of any endpoint with the fleet's TLS settings; each call answers within `timeoutMs`. */
export function createProbe(tls: BuilderTls | undefined, timeoutMs: number): Probe {
  const material = tlsMaterial(tls);
  return (endpoint) => probeOnce(endpoint, material, timeoutMs);
}
