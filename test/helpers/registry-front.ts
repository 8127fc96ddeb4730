// An HTTP front before a real registry that the test controls: every request is passed through
// (bodies streamed, the Host header kept so the registry's upload locations name the front), except
// those a refusal rule matches, which get the rule's status and registry error body instead. Lets a
// test make the registry refuse as a concurrent push or a real refusal would, deterministically.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Refusal {
  readonly method: string;
  /** Matched against the request's path (without the query). */
  readonly path: RegExp;
  readonly status: number;
  /** The registry error code of the body (`{"errors":[{"code":...}]}`). */
  readonly code: string;
  /** How many matching requests are refused (then passed through); unset: all of them. */
  readonly times?: number;
  /** Date.now() from which the rule no longer matches (an outage of a set length); unset: never. */
  readonly until?: number;
  /** How long the rule matches from the first request it refuses (an outage that starts then). */
  readonly forMs?: number;
}

interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly refused: boolean;
  /** Date.now() when it was answered. */
  readonly at: number;
}

export interface RegistryFront {
  /** `localhost:<port>`: an image registry BuildKit reaches over plain HTTP, as the stack's. */
  readonly host: string;
  readonly requests: SeenRequest[];
  /** Adds a rule; the first rule that matches (and has refusals left) answers. */
  refuse(rule: Refusal): void;
  close(): Promise<void>;
}

/** A manifest PUT of any repository, by tag or digest. */
export const MANIFEST_PUT = /^\/v2\/.+\/manifests\/[^/]+$/;

export async function registryFront(target: string): Promise<RegistryFront> {
  const [targetHost = 'localhost', targetPort = '80'] = target.split(/:(?=\d+$)/);
  const rules: Array<{ rule: Refusal; left: number; since?: number }> = [];
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const match = rules.find(
      ({ rule, left, since }) =>
        left > 0 &&
        (rule.until === undefined || Date.now() < rule.until) &&
        (rule.forMs === undefined || since === undefined || Date.now() < since + rule.forMs) &&
        rule.method === method &&
        rule.path.test(path),
    );
    if (match !== undefined) {
      match.left -= 1;
      match.since ??= Date.now();
      requests.push({ method, path, status: match.rule.status, refused: true, at: Date.now() });
      // The request body is read to its end first, as a registry does before it answers.
      req.resume();
      req.on('end', () => {
        const body = JSON.stringify({
          errors: [{ code: match.rule.code, message: `refused by the test's front`, detail: {} }],
        });
        res.writeHead(match.rule.status, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'docker-distribution-api-version': 'registry/2.0',
        });
        res.end(body);
      });
      return;
    }
    const upstream = http.request(
      { host: targetHost, port: Number(targetPort), method, path: req.url, headers: req.headers },
      (answer) => {
        requests.push({ method, path, status: answer.statusCode ?? 0, refused: false, at: Date.now() });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `localhost:${String(port)}`,
    requests,
    refuse: (rule) => rules.push({ rule, left: rule.times ?? Number.POSITIVE_INFINITY }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
