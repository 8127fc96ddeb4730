/**
 * Raw HTTP for registry calls: one keep-alive agent per origin, an overall deadline per call,
 * a response size cap enforced while the body streams in, and redirects that never carry an
 * Authorization header to another origin (nor from https down to http).
 */
import http from 'node:http';
import https from 'node:https';
import { transportReason } from '../errors/errors.js';

export type TransportFailure = 'timeout' | 'too_large' | 'network' | 'redirect';

/** A call that produced no usable HTTP answer. `reason` is safe to show (no credential). */
export class TransportError extends Error {
  constructor(
    readonly kind: TransportFailure,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
    this.name = 'TransportError';
  }
}

export interface TransportRequest {
  method: 'GET' | 'HEAD' | 'DELETE' | 'PUT' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  /** Body bytes beyond this abort the call (TransportError too_large). */
  maxBytes: number;
  /** Overall deadline for the call, redirects and body included. */
  timeoutMs: number;
  /** Redirects to follow for GET/HEAD (default 5); other methods never follow. */
  maxRedirects?: number;
  /** Request body (PUT/POST), sent with its Content-Length. */
  body?: Buffer;
}

export interface TransportResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The URL that produced this response (after redirects). */
  url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_AGENTS = 256;

export interface TransportOptions {
  /** Max sockets per origin (default 32). */
  maxSockets?: number;
  /** Extra trusted CA certificates (PEM) for https; the default trust store otherwise. */
  ca?: string;
}

export class Transport {
  private readonly agents = new Map<string, http.Agent>();
  private readonly maxSockets: number;
  private readonly ca: string | undefined;

  constructor(options: TransportOptions = {}) {
    this.maxSockets = options.maxSockets ?? 32;
    this.ca = options.ca;
  }

  /** The keep-alive agent of one origin (created on first use). */
  private agentFor(url: URL): http.Agent {
    let agent = this.agents.get(url.origin);
    if (!agent) {
      const opts = { keepAlive: true, maxSockets: this.maxSockets, maxFreeSockets: 8, timeout: 60_000 };
      agent =
        url.protocol === 'https:'
          ? new https.Agent(this.ca === undefined ? opts : { ...opts, ca: this.ca })
          : new http.Agent(opts);
      this.agents.set(url.origin, agent);
      this.evictIdleAgents(url.origin);
    }
    return agent;
  }

  /** Origins come from requests: beyond MAX_AGENTS, the oldest idle agents are dropped. */
  private evictIdleAgents(keep: string): void {
    for (const [origin, agent] of this.agents) {
      if (this.agents.size <= MAX_AGENTS) return;
      if (origin === keep || Object.keys(agent.sockets).length > 0 || Object.keys(agent.requests).length > 0)
        continue;
      agent.destroy();
      this.agents.delete(origin);
    }
  }

  /** Closes every pooled connection. */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const deadline = Date.now() + request.timeoutMs;
    const maxRedirects =
      request.method === 'GET' || request.method === 'HEAD' ? (request.maxRedirects ?? 5) : 0;
    let url = request.url;
    let method = request.method;
    const headers = { ...request.headers };
    for (let hop = 0; ; hop++) {
      const res = await this.once({ ...request, method, url, headers }, deadline);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.status) || typeof location !== 'string' || hop >= maxRedirects) return res;
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new TransportError('redirect', transportReason('REDIRECT_INVALID', {}));
      }
      if (next.protocol !== 'https:' && next.protocol !== 'http:') {
        throw new TransportError(
          'redirect',
          transportReason('REDIRECT_SCHEME_REFUSED', { protocol: next.protocol }),
        );
      }
      if (url.protocol === 'https:' && next.protocol === 'http:') {
        throw new TransportError('redirect', transportReason('REDIRECT_DOWNGRADE_REFUSED', {}));
      }
      if (next.origin !== url.origin) {
        // Credentials belong to the origin that asked for them, never to where it points us.
        for (const name of Object.keys(headers))
          if (name.toLowerCase() === 'authorization') delete headers[name];
      }
      if (res.status === 303) method = 'GET';
      url = next;
    }
  }

  private async once(
    request: TransportRequest & { url: URL },
    deadline: number,
    retried = false,
  ): Promise<TransportResponse> {
    try {
      return await this.attempt(request, deadline);
    } catch (err) {
      // A pooled connection the server closed meanwhile: retry an idempotent call once.
      if (
        !retried &&
        err instanceof StaleSocketError &&
        (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE')
      ) {
        return this.once(request, deadline, true);
      }
      if (err instanceof StaleSocketError) throw err.failure;
      throw err;
    }
  }

  private attempt(request: TransportRequest & { url: URL }, deadline: number): Promise<TransportResponse> {
    const { url, body } = request;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(timeoutError(request.timeoutMs));
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise<TransportResponse>((resolve, reject) => {
      // The timer is made below, before anything can settle.
      const settle = settleOnce(resolve, reject, () => clearTimeout(timer));
      const req = lib.request(url, {
        method: request.method,
        headers:
          body === undefined
            ? request.headers
            : { ...request.headers, 'content-length': String(body.length) },
        agent: this.agentFor(url),
      });
      const timer = setTimeout(() => {
        const err = timeoutError(request.timeoutMs);
        settle.reject(err);
        req.destroy(err);
      }, remaining);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const failure = new TransportError('network', networkReason(err), { cause: err });
        const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
        settle.reject(stale ? new StaleSocketError(failure) : failure);
      });
      req.on('response', (res) => receive(res, req, request, settle));
      req.end(body);
    });
  }
}

/** A call's promise, settled once (by its answer, an error, the size cap or the deadline). */
interface Settle {
  resolve(response: TransportResponse): void;
  reject(err: Error): void;
}

function settleOnce(
  resolve: (response: TransportResponse) => void,
  reject: (err: Error) => void,
  onSettle: () => void,
): Settle {
  let settled = false;
  const once =
    <T>(fn: (value: T) => void) =>
    (value: T): void => {
      if (settled) return;
      settled = true;
      onSettle();
      fn(value);
    };
  return { resolve: once(resolve), reject: once(reject) };
}

/** Reads the answer's body up to the request's size cap. */
function receive(
  res: http.IncomingMessage,
  req: http.ClientRequest,
  request: TransportRequest & { url: URL },
  settle: Settle,
): void {
  const tooBig = (): void => {
    settle.reject(tooLarge(request.maxBytes));
    res.destroy();
    req.destroy();
  };
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > request.maxBytes && request.method !== 'HEAD') return tooBig();
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > request.maxBytes) return tooBig();
    chunks.push(chunk);
  });
  res.on('end', () =>
    settle.resolve({
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: Buffer.concat(chunks),
      url: request.url,
    }),
  );
  res.on('error', (err) => settle.reject(new TransportError('network', networkReason(err), { cause: err })));
  res.on('aborted', () => settle.reject(new TransportError('network', transportReason('CLOSED_EARLY', {}))));
}

class StaleSocketError extends Error {
  constructor(readonly failure: TransportError) {
    super(failure.message);
  }
}

const timeoutError = (ms: number): TransportError =>
  new TransportError('timeout', transportReason('TIMEOUT', { seconds: Math.round(ms / 1000) }));

const tooLarge = (max: number): TransportError =>
  new TransportError('too_large', transportReason('TOO_LARGE', { max }));

/** A short, credential-free description of a network failure. */
function networkReason(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return transportReason('CONNECTION_REFUSED', {});
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return transportReason('NOT_RESOLVED', {});
    case 'ECONNRESET':
      return transportReason('CONNECTION_RESET', {});
    case 'ETIMEDOUT':
      return transportReason('CONNECTION_TIMED_OUT', {});
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return transportReason('HOST_UNREACHABLE', {});
    default:
      if (err.code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(err.code))
        return transportReason('TLS_FAILED', { code: err.code });
      if (err.code?.startsWith('HPE_')) return transportReason('INVALID_HTTP', {});
      return err.code ? transportReason('NETWORK_CODE', { code: err.code }) : transportReason('NETWORK', {});
  }
}
