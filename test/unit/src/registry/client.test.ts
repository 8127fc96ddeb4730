import test from 'ava';
import { createHash } from 'node:crypto';
import { isServiceError } from '../../../../src/errors/errors.js';
import { DELETE_ACTIONS, PULL, RegistryClient, type RegistryCall } from '../../../../src/registry/client.js';
import { TokenCache } from '../../../../src/registry/auth.js';
import { imageExists } from '../../../../src/registry/check.js';
import { parseReference } from '../../../../src/registry/reference.js';
import { Transport } from '../../../../src/registry/transport.js';
import {
  type FakeServer,
  fakeServer,
  json,
  selfSignedCert,
  type TlsMaterial,
} from '../../../helpers/fake-registry.js';

const USER = 'alice';
const PASSWORD = 'pa55-secret';
const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

interface TokenRealmOptions {
  field?: 'token' | 'access_token';
  expiresIn?: number;
  tls?: TlsMaterial;
}

/** A token realm that issues `tok-<n>` to anyone with the right Basic credentials (or anonymously). */
async function tokenRealm(options: TokenRealmOptions = {}): Promise<FakeServer & { issued: () => number }> {
  let n = 0;
  const server = await fakeServer(
    (req, res) => {
      const auth = req.headers.authorization;
      if (auth !== undefined && auth !== basic) return json(res, 401, { details: 'bad credentials' });
      n++;
      const body: Record<string, unknown> = {
        [options.field ?? 'token']: `tok-${n}${auth ? '-user' : '-anon'}`,
      };
      if (options.expiresIn !== undefined) body.expires_in = options.expiresIn;
      json(res, 200, body);
    },
    options.tls ? { tls: options.tls } : {},
  );
  return Object.assign(server, { issued: () => n });
}

/** A registry that wants a bearer token from `realm` (any `tok-*-user` token) for dev/app:1. */
async function bearerRegistry(
  realm: string,
  options: { tls?: TlsMaterial; challengeScope?: string } = {},
): Promise<FakeServer> {
  return fakeServer(
    (req, res) => {
      const auth = req.headers.authorization ?? '';
      if (!/^Bearer tok-\d+-user$/.test(auth)) {
        const scope = options.challengeScope ?? 'repository:dev/app:pull';
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="${realm}",service="fake-registry",scope="${scope}"`,
          })
          .end();
        return;
      }
      if (req.url === '/v2/dev/app/manifests/1') {
        res.writeHead(200, { 'docker-content-digest': `sha256:${'a'.repeat(64)}` }).end();
        return;
      }
      res.writeHead(404).end();
    },
    options.tls ? { tls: options.tls } : {},
  );
}

const callFor = (registry: string, insecure: string[], credentials = true, actions = PULL): RegistryCall => ({
  ref: parseReference({ registry, name: 'dev/app', tag: '1' }, insecure),
  credentials: credentials ? { username: USER, password: PASSWORD } : undefined,
  actions,
});

test('bearer: the cold call exchanges a token once, the warm call is one round trip', async (t) => {
  const realm = await tokenRealm();
  const registry = await bearerRegistry(`${realm.origin}/token`);
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await Promise.all([realm.close(), registry.close()]);
  });
  const call = callFor(registry.host, [registry.host]);

  t.true(await imageExists(client, call));
  t.is(registry.requests.length, 2); // 401, then with the token
  t.is(realm.issued(), 1);
  const tokenRequest = new URL(realm.requests[0]?.url ?? '', realm.origin);
  t.is(tokenRequest.searchParams.get('service'), 'fake-registry');
  t.deepEqual(tokenRequest.searchParams.getAll('scope'), ['repository:dev/app:pull']);
  t.is(realm.requests[0]?.headers.authorization, basic);

  t.true(await imageExists(client, call));
  t.true(await imageExists(client, call));
  t.is(registry.requests.length, 4); // one request per warm call
  t.is(realm.issued(), 1);
  t.is(registry.requests.at(-1)?.headers.authorization, 'Bearer tok-1-user');
  t.is(registry.requests.at(-1)?.method, 'HEAD');
});

test('bearer: tokens are cached per credential identity and per scope', async (t) => {
  const realm = await tokenRealm();
  const registry = await bearerRegistry(`${realm.origin}/token`);
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await Promise.all([realm.close(), registry.close()]);
  });
  t.true(await imageExists(client, callFor(registry.host, [registry.host])));
  // anonymous: its own (anonymous) token, which this registry refuses -> 401, never the user's token
  const anonymous = callFor(registry.host, [registry.host], false);
  const res = await client.request(anonymous, 'HEAD', 'dev/app/manifests/1', { maxBytes: 0 });
  t.is(res.status, 401);
  t.is(registry.requests.at(-1)?.headers.authorization, 'Bearer tok-2-anon');
  // the fresh anonymous token was refused for what the challenge asks: no pointless second exchange
  t.is(registry.requests.length, 3);
  t.is(realm.issued(), 2);
  // another scope (deletion) needs another token, fetched up front from the known realm
  const deletion = callFor(registry.host, [registry.host], true, DELETE_ACTIONS);
  t.true(await imageExists(client, deletion));
  t.is(realm.issued(), 3);
  t.is(registry.requests.length, 4);
  const scopes = new URL(realm.requests.at(-1)?.url ?? '', realm.origin).searchParams.getAll('scope');
  t.deepEqual(scopes, ['repository:dev/app:pull,push,delete']);
});

test('bearer: access_token is accepted and a scope the challenge asks for is merged', async (t) => {
  const realm = await tokenRealm({ field: 'access_token' });
  const registry = await bearerRegistry(`${realm.origin}/token`, {
    challengeScope: 'repository:dev/app:pull repository:dev/other:pull',
  });
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await Promise.all([realm.close(), registry.close()]);
  });
  t.true(await imageExists(client, callFor(registry.host, [registry.host])));
  const scopes = new URL(realm.requests[0]?.url ?? '', realm.origin).searchParams.getAll('scope');
  t.deepEqual(scopes, ['repository:dev/app:pull', 'repository:dev/other:pull']);
});

test('bearer: a token is reused only until expires_in minus the margin', async (t) => {
  const realm = await tokenRealm({ expiresIn: 1 }); // cached for 0.75 s
  const registry = await bearerRegistry(`${realm.origin}/token`);
  // A clock of the test's own: the outcome never depends on how loaded the machine is.
  let clock = 1_000_000;
  const client = new RegistryClient({
    insecureRegistries: [registry.host],
    tokens: new TokenCache(1000, () => clock),
  });
  t.teardown(async () => {
    client.close();
    await Promise.all([realm.close(), registry.close()]);
  });
  const call = callFor(registry.host, [registry.host]);
  await imageExists(client, call);
  await imageExists(client, call);
  t.is(realm.issued(), 1);
  t.is(registry.requests.length, 3);
  clock += 740; // still inside the 0.75 s
  await imageExists(client, call);
  t.is(realm.issued(), 1);
  t.is(registry.requests.length, 4);
  clock += 20; // past it
  await imageExists(client, call);
  t.is(realm.issued(), 2);
  // the realm is known: the new token is fetched up front, no second 401 round trip
  t.is(registry.requests.length, 5);
  // the expired token was not even tried: the call sent nothing without a fresh token
  t.is(registry.requests.at(-1)?.headers.authorization, 'Bearer tok-2-user');
});

test('bearer: when the registry refuses the fresh token too, its 401 stands (one exchange, one retry)', async (t) => {
  const realm = await tokenRealm();
  // a registry that refuses every token
  const registry = await fakeServer((_req, res) => {
    res.writeHead(401, { 'www-authenticate': `Bearer realm="${realm.origin}/token",service="s"` }).end();
  });
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await Promise.all([realm.close(), registry.close()]);
  });
  const err = await t.throwsAsync(imageExists(client, callFor(registry.host, [registry.host])));
  t.true(isServiceError(err) && err.code === 'REGISTRY_ANSWERED');
  t.is(err?.message, `${registry.host} answered 401 for ${registry.host}/dev/app:1`);
  t.is(registry.requests.length, 2);
  t.is(realm.issued(), 1);
});

test('credentials reach a token realm only over https, or plain http for an insecure registry', async (t) => {
  const tls = selfSignedCert();
  const httpRealm = await tokenRealm();
  const httpsRealm = await tokenRealm({ tls });
  const secureToHttpRealm = await bearerRegistry(`${httpRealm.origin}/token`, { tls });
  const secureToHttpsRealm = await bearerRegistry(`${httpsRealm.origin}/token`, { tls });
  const client = new RegistryClient({ insecureRegistries: [], transport: new Transport({ ca: tls.cert }) });
  t.teardown(async () => {
    client.close();
    await Promise.all([
      httpRealm.close(),
      httpsRealm.close(),
      secureToHttpRealm.close(),
      secureToHttpsRealm.close(),
    ]);
  });

  // https registry, plain-http realm: the token is requested without the credentials
  const err = await t.throwsAsync(imageExists(client, callFor(secureToHttpRealm.host, [])));
  t.true(isServiceError(err));
  t.is(httpRealm.requests.length, 1);
  t.is(httpRealm.requests[0]?.headers.authorization, undefined);

  // https registry, https realm: credentials sent
  t.true(await imageExists(client, callFor(secureToHttpsRealm.host, [])));
  t.is(httpsRealm.requests[0]?.headers.authorization, basic);
});

test('basic: one retry with the credentials; wrong ones are not retried again', async (t) => {
  const registry = await fakeServer((req, res) => {
    if (req.headers.authorization !== basic) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Registry Realm"' }).end();
      return;
    }
    res.writeHead(200, { 'docker-content-digest': `sha256:${'b'.repeat(64)}` }).end();
  });
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await registry.close();
  });
  t.true(await imageExists(client, callFor(registry.host, [registry.host])));
  t.is(registry.requests.length, 2);
  // warm: Basic goes up front
  t.true(await imageExists(client, callFor(registry.host, [registry.host])));
  t.is(registry.requests.length, 3);

  const wrong: RegistryCall = {
    ...callFor(registry.host, [registry.host]),
    credentials: { username: USER, password: 'nope' },
  };
  const err = await t.throwsAsync(imageExists(client, wrong));
  t.is(err?.message, `${registry.host} answered 401 for ${registry.host}/dev/app:1`);
  t.false(err?.message.includes('nope'));
  t.is(registry.requests.length, 4);

  // anonymous against a Basic registry: no credentials to offer, the 401 stands
  const anonymous = callFor(registry.host, [registry.host], false);
  await t.throwsAsync(imageExists(client, anonymous));
  t.is(registry.requests.length, 5);
  t.is(registry.requests.at(-1)?.headers.authorization, undefined);
});

test('a registry that refuses HEAD is asked with GET', async (t) => {
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
  });
  const registry = await fakeServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(405).end();
    res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end(manifest);
  });
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await registry.close();
  });
  const head = await client.headManifest(callFor(registry.host, [registry.host], false), '1');
  t.is(head.status, 200);
  t.is(head.digest, `sha256:${createHash('sha256').update(manifest).digest('hex')}`);
  t.deepEqual(
    registry.requests.map((r) => r.method),
    ['HEAD', 'GET'],
  );
  t.regex(String(registry.requests[1]?.headers.accept), /application\/vnd\.oci\.image\.index\.v1\+json/);
});

test('content read by digest must match the digest, and is cached once verified', async (t) => {
  const good = Buffer.from('{"config":{}}');
  const goodDigest = `sha256:${createHash('sha256').update(good).digest('hex')}`;
  const badDigest = `sha256:${'c'.repeat(64)}`;
  const registry = await fakeServer((_req, res) => res.writeHead(200).end(good));
  const client = new RegistryClient({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    client.close();
    await registry.close();
  });
  const call = callFor(registry.host, [registry.host], false);
  const err = await t.throwsAsync(client.getBlob(call, badDigest, 1024));
  t.true(isServiceError(err) && err.code === 'DIGEST_MISMATCH');
  t.regex(err?.message ?? '', /does not match digest/);
  t.deepEqual(await client.getBlob(call, goodDigest, 1024), good);
  t.deepEqual(await client.getBlob(call, goodDigest, 1024), good);
  t.is(registry.requests.length, 2);
});
