/**
 * An OIDC issuer of the tests' own, as a real one serves it: https on 127.0.0.1 with a private CA
 * (made with openssl; a service trusts it through NODE_EXTRA_CA_CERTS), a discovery document, a
 * key set of real RSA and EC keys, tokens signed with them. It rotates its keys and goes down on
 * demand, and counts the fetches of its key set.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';

interface SigningKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  readonly privateKey: CryptoKey;
  readonly publicPem: string;
  readonly jwk: JWK;
}

interface TokenOptions {
  /** The key to sign with (default: the newest RS256 key served). */
  readonly key?: 'rsa' | 'ec' | 'foreign';
  /** A `kid` other than the key's own. */
  readonly kid?: string;
  /** Seconds from now; negative for an expired token (default 600). */
  readonly expiresIn?: number;
}

export interface TestIssuer {
  readonly url: string;
  /** The CA's certificate: NODE_EXTRA_CA_CERTS of a process that must trust the issuer. */
  readonly caFile: string;
  /** A token with these claims (iss, iat, exp added unless given). */
  token(claims: JWTPayload, options?: TokenOptions): Promise<string>;
  /** `alg: none`, unsigned. */
  unsigned(claims: JWTPayload): string;
  /** HS256 made with the RSA key's public PEM as the HMAC secret (the classic key confusion). */
  hmacWithPublicKey(claims: JWTPayload): string;
  /** New RSA and EC keys replace the served ones. */
  rotate(): Promise<void>;
  /** Every request answered 503 until up(). */
  down(): void;
  up(): void;
  /** Requests of the key set so far. */
  keySetFetches(): number;
  close(): Promise<void>;
}

async function newKey(alg: SigningKey['alg']): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomBytes(8).toString('hex');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicPem: await exportSPKI(publicKey), jwk };
}

/** A CA and a server certificate for 127.0.0.1 signed by it, in `dir`. */
export function certificates(dir: string): { ca: string; cert: string; key: string } {
  const file = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  execFileSync(
    'openssl',
    ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem')].concat([
      '-days',
      '2',
      '-subj',
      '/CN=ibs-test-oidc-ca',
    ]),
    { stdio: 'ignore' },
  );
  execFileSync(
    'openssl',
    ['req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr')].concat([
      '-subj',
      '/CN=127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  execFileSync(
    'openssl',
    ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key')].concat([
      '-CAcreateserial',
      '-out',
      file('server.pem'),
      '-days',
      '2',
      '-extfile',
      file('san.ext'),
    ]),
    { stdio: 'ignore' },
  );
  return { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function startIssuer(): Promise<TestIssuer> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-oidc-'));
  const files = certificates(dir);
  let keys = [await newKey('RS256'), await newKey('ES256')];
  const foreign = await newKey('RS256');
  let available = true;
  let keySetFetches = 0;
  let url = '';
  const server = createServer(
    { cert: readFileSync(files.cert), key: readFileSync(files.key) },
    (req, res) => {
      req.resume();
      const send = (status: number, body: unknown): void =>
        void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/jwks') keySetFetches += 1;
      if (!available) return send(503, { error: 'down' });
      if (req.url === '/.well-known/openid-configuration')
        return send(200, {
          issuer: url,
          jwks_uri: `${url}/jwks`,
          id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        });
      if (req.url === '/jwks') return send(200, { keys: keys.map((k) => k.jwk) });
      return send(404, { error: 'not found' });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const withTimes = (claims: JWTPayload, expiresIn = 600): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: url, iat: now, exp: now + expiresIn, ...claims };
  };
  const rsa = (): SigningKey => keys.find((k) => k.alg === 'RS256') ?? foreign;
  return {
    url,
    caFile: files.ca,
    async token(claims, options = {}) {
      const key =
        options.key === 'foreign'
          ? foreign
          : options.key === 'ec'
            ? (keys.find((k) => k.alg === 'ES256') ?? rsa())
            : rsa();
      return new SignJWT(withTimes(claims, options.expiresIn))
        .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    unsigned: (claims) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(withTimes(claims))}.`,
    hmacWithPublicKey(claims) {
      const pem = rsa().publicPem;
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: rsa().kid })}.${b64(withTimes(claims))}`;
      return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    },
    async rotate() {
      keys = [await newKey('RS256'), await newKey('ES256')];
    },
    down: () => void (available = false),
    up: () => void (available = true),
    keySetFetches: () => keySetFetches,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
