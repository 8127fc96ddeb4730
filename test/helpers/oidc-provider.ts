/**
 * A person's identity provider for the sign-in tests and bench: a real OpenID Connect provider
 * (`oidc-provider`) on https at 127.0.0.1 with a private CA of the test's own (the service trusts
 * it through NODE_EXTRA_CA_CERTS; Chromium through the server key's pin). Its accounts are the
 * logins of its development sign-in form, each with its `groups`; any password is accepted. It
 * hands every code, access token and ID token it issues to `issued`, for the canary checks.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'puppeteer-core';
import { certificates } from './oidc-issuer.js';

export interface ProviderClient {
  readonly clientId: string;
  /** A confidential client's secret; none: a public client (PKCE alone). */
  readonly secret?: string;
  readonly redirectUrl: string;
  /** Seconds an ID token lives (default 3600). */
  readonly idTokenSeconds?: number;
}

export interface TestProvider {
  readonly url: string;
  readonly caFile: string;
  /** Chromium's `--ignore-certificate-errors-spki-list` value: this server's key alone. */
  readonly spki: string;
  /** Every code, access token and ID token issued so far. */
  readonly issued: string[];
  close(): Promise<void>;
}

/** The accounts: login -> groups. */
export type Accounts = Readonly<Record<string, readonly string[]>>;

export async function startProvider(
  clients: readonly ProviderClient[],
  accounts: Accounts,
): Promise<TestProvider> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-provider-'));
  const files = certificates(dir);
  const cert = readFileSync(files.cert);
  const server = createServer({ cert, key: readFileSync(files.key) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const ttlOf = new Map(clients.map((c) => [c.clientId, c.idTokenSeconds ?? 3600]));
  const provider = new Provider(url, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      ...(c.secret === undefined
        ? { token_endpoint_auth_method: 'none' }
        : { client_secret: c.secret, token_endpoint_auth_method: 'client_secret_post' }),
      redirect_uris: [c.redirectUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'k1' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true, methods: ['S256'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email'], profile: ['preferred_username'], groups: ['groups'] },
    conformIdTokenClaims: false,
    ttl: {
      IdToken: (_ctx, _token, client) => ttlOf.get(client.clientId) ?? 3600,
    },
    findAccount: (_ctx, id) =>
      Object.hasOwn(accounts, id)
        ? {
            accountId: id,
            claims: () => ({
              sub: id,
              email: `${id}@example.com`,
              preferred_username: id,
              groups: [...(accounts[id] ?? [])],
            }),
          }
        : undefined,
  });
  const issued: string[] = [];
  provider.on('authorization_code.saved', (code: { jti: string }) => issued.push(code.jti));
  provider.on('access_token.saved', (token: { jti: string }) => issued.push(token.jti));
  provider.on('grant.success', (ctx: { body?: { id_token?: unknown } }) => {
    if (typeof ctx.body?.id_token === 'string') issued.push(ctx.body.id_token);
  });
  server.on('request', provider.callback());
  const spki = createHash('sha256')
    .update(new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
  return {
    url,
    caFile: files.ca,
    spki,
    issued,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Signs in at the provider's development form as `login`, and consents (in the page of `page`). */
export async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.waitForSelector('input[name="login"]');
  await page.type('input[name="login"]', login);
  await page.type('input[name="password"]', 'any');
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  // The consent prompt, asked once per client and account.
  if ((await page.$('form input[name="prompt"][value="consent"]')) !== null)
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
}
