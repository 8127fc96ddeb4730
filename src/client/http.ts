/**
 * The HTTP calls of ibs, on node:http/https (no fetch: it loads undici, which costs start-up
 * time on every CI step; node:https is loaded only for an https server). One keep-alive agent per
 * scheme for the small calls; the build request and log streams have no timeout (a build can take
 * an hour; docs/openapi.yaml). The one place that adds ibs's bearer token (`authorize`): to every
 * request to the service's origin, and to nothing else.
 */
import http, { type IncomingMessage } from 'node:http';

/** The server could not be reached, or the connection broke before the answer (exit 4). */
export class Unreachable extends Error {
  constructor(
    message: string,
    /** Whether a connection had been made (a lost one) rather than refused or unresolved. */
    readonly connected: boolean,
  ) {
    super(message);
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly text: string;
}

export interface Call {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Ends the request when its connection stays silent this long (a lost connection). */
  readonly idleMs?: number;
}

type Lib = Pick<typeof http, 'request' | 'Agent'>;
const agents = new Map<string, { lib: Lib; agent: http.Agent }>();

async function clientFor(protocol: string): Promise<{ lib: Lib; agent: http.Agent }> {
  let client = agents.get(protocol);
  if (client === undefined) {
    const lib: Lib = protocol === 'https:' ? await import('node:https') : http;
    client = { lib, agent: new lib.Agent({ keepAlive: true }) };
    agents.set(protocol, client);
  }
  return client;
}

/** The token ibs sends, bound to the service's origin: no other host ever sees it. */
let bearer: { readonly origin: string; readonly token: () => Promise<string> } | undefined;

/** From now on every request to `server`'s origin carries `Authorization: Bearer <token()>`. */
export function authorize(server: URL, token: () => Promise<string>): void {
  bearer = { origin: server.origin, token };
}

/** Whether requests to `url` carry ibs's token. */
export const sendsToken = (url: URL): boolean => bearer?.origin === url.origin;

/** The headers of a call, with the bearer token when it goes to the service. */
async function headersOf(url: URL, call: Call): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...call.headers };
  const given = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  if (bearer !== undefined && !given && url.origin === bearer.origin)
    headers.authorization = `Bearer ${await bearer.token()}`;
  if (call.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(call.body));
  }
  return headers;
}

/** Ends every idle connection (so the process can end by itself). */
export function closeConnections(): void {
  for (const { agent } of agents.values()) agent.destroy();
}

/** Opens a request and resolves with the response head; the body is the caller's to read. */
export async function open(url: URL, call: Call = {}): Promise<IncomingMessage> {
  const { lib, agent } = await clientFor(url.protocol);
  const headers = await headersOf(url, call);
  return new Promise((resolve, reject) => {
    let connected = false;
    const req = lib.request(
      url,
      { method: call.method ?? 'GET', headers, agent, signal: call.signal },
      resolve,
    );
    if (call.idleMs !== undefined)
      req.setTimeout(call.idleMs, () =>
        req.destroy(Object.assign(new Error('silent'), { code: 'ETIMEDOUT' })),
      );
    req.once('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') return reject(err);
      const what = connected ? 'the connection to the server was lost' : 'the server could not be reached';
      reject(new Unreachable(`${what}: ${err.code ?? err.message} (${url.origin})`, connected));
    });
    req.end(call.body);
  });
}

/** Reads a whole body as text; a broken body is an Unreachable. */
export async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res) chunks.push(chunk as Buffer);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new Unreachable(`the connection to the server was lost: ${(err as Error).message}`, true);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function call(url: URL, options: Call = {}): Promise<Answer> {
  const res = await open(url, options);
  return { status: res.statusCode ?? 0, headers: res.headers, text: await readText(res) };
}

/** The JSON object of an answer, or undefined when it is not one. */
export function jsonOf(answer: Answer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(answer.text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an error answer says: the body's `message` (or `error`) with its `code` when it names one,
 * else the start of its text.
 */
export function answerReason(answer: Answer): string {
  const body = jsonOf(answer);
  const text = [body?.message, body?.error].find((v): v is string => typeof v === 'string');
  const code = typeof body?.code === 'string' ? body.code : undefined;
  if (text === undefined) return code ?? (answer.text.trim().slice(0, 500) || '(no message)');
  return code === undefined ? text : `${text} (${code})`;
}
