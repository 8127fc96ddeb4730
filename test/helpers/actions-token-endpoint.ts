/**
 * A GitHub Actions runner's ID token endpoint, as ibs meets it in a job with `permissions:
 * id-token: write`: `GET <ACTIONS_ID_TOKEN_REQUEST_URL>&audience=<aud>` with `Authorization: bearer
 * <ACTIONS_ID_TOKEN_REQUEST_TOKEN>` is answered `{"value": "<jwt>"}`; a wrong request token gets
 * 401 as the runner's service gives it. `mint` makes the JWT for the audience asked (a test issuer
 * signs a real one; unit tests may pass any string). `env` is what a runner sets for the step.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

interface TokenRequest {
  readonly url: string;
  readonly audience: string | null;
  readonly headers: IncomingMessage['headers'];
}

export interface ActionsTokenEndpoint {
  /** ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN, as the runner sets them. */
  readonly env: { ACTIONS_ID_TOKEN_REQUEST_URL: string; ACTIONS_ID_TOKEN_REQUEST_TOKEN: string };
  /** Every request the endpoint got, in order. */
  readonly requests: TokenRequest[];
  /** Every token it gave, in order. */
  readonly minted: string[];
  close(): Promise<void>;
}

export interface EndpointOptions {
  /** The path and query of the request URL (the runner's carries `?api-version=2.0`). */
  readonly path?: string;
  /** Answers instead of minting (a runner in trouble): status and body. */
  readonly answer?: (request: TokenRequest) => { status: number; body: string } | undefined;
}

export async function actionsTokenEndpoint(
  mint: (audience: string) => string | Promise<string>,
  options: EndpointOptions = {},
): Promise<ActionsTokenEndpoint> {
  const requestToken = `actions-request-${randomBytes(16).toString('hex')}`;
  const requests: TokenRequest[] = [];
  const minted: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://endpoint');
    const request = { url: req.url ?? '', audience: url.searchParams.get('audience'), headers: req.headers };
    requests.push(request);
    const send = (status: number, body: string): void =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    const special = options.answer?.(request);
    if (special !== undefined) return send(special.status, special.body);
    if (req.headers.authorization !== `bearer ${requestToken}`)
      return send(401, JSON.stringify({ message: 'bad request token' }));
    Promise.resolve(mint(request.audience ?? ''))
      .then((value) => {
        minted.push(value);
        send(200, JSON.stringify({ count: 1, value }));
      })
      .catch((err: unknown) => send(500, JSON.stringify({ message: String(err) })));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: {
      ACTIONS_ID_TOKEN_REQUEST_URL: `http://127.0.0.1:${port}${options.path ?? '/idtoken?api-version=2.0'}`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken,
    },
    requests,
    minted,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
