// GET/DELETE /image and GET /devcontainer against tiny fake registries: validation before any
// network call, error bodies, deletion outcomes and metrics. (The real registries: test/integration.)
import test from 'ava';
import { createHash } from 'node:crypto';
import { startApp } from '../../../helpers/app.js';
import { fakeServer, json, selfSignedCert } from '../../../helpers/fake-registry.js';
import { metricValue } from '../../../helpers/metrics.js';

const digestOf = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;

const metric = (url: string, name: string, result: string): Promise<number> =>
  metricValue(url, name, { result });

test('invalid queries and lone credential headers answer 400 before any registry call, counted as error', async (t) => {
  const registry = await fakeServer((_req, res) => res.writeHead(200).end());
  const app = await startApp({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    await app.close();
    await registry.close();
  });
  const r = encodeURIComponent(registry.host);
  const cases: [string, string, Record<string, string>][] = [
    ['GET', '/image', {}],
    ['GET', `/image?registry=${r}&name=dev/app`, {}],
    ['GET', `/image?registry=${r}&name=&tag=1`, {}],
    ['GET', `/image?registry=${r}&name=Dev/App&tag=1`, {}],
    ['GET', `/image?registry=${r}&name=dev/app&tag=a/b`, {}],
    ['GET', `/image?registry=${r}&name=dev/app&tag=1&tag=2`, {}],
    ['GET', `/image?registry=ftp://${r}&name=dev/app&tag=1`, {}],
    ['GET', `/image?registry=http://example.com&name=dev/app&tag=1`, {}],
    ['GET', `/image?registry=${r}&name=dev/app&tag=1`, { 'x-registry-username': 'u' }],
    ['DELETE', `/image?registry=${r}&name=dev/app&tag=1`, { 'x-registry-password': 'p' }],
    ['DELETE', `/image?registry=${r}&name=dev%2F..%2Fapp&tag=1`, {}],
    ['GET', `/devcontainer?registry=${r}&name=dev/app&tag=1&platform=linux`, {}],
    ['GET', `/devcontainer?registry=${r}&name=dev/app&tag=1&platform=linux/amd64/v1/x`, {}],
    ['GET', `/devcontainer?registry=${r}&name=dev/app&tag=1&platform=`, {}],
    ['GET', `/devcontainer?registry=${r}&tag=1`, { 'x-registry-password': 'p' }],
  ];
  for (const [method, path, headers] of cases) {
    const res = await fetch(app.url + path, { method, headers });
    t.is(res.status, 400, `${method} ${path}`);
    const body = (await res.json()) as { error: string };
    t.is(typeof body.error, 'string');
    t.false(JSON.stringify(body).includes('"p"'));
  }
  t.is(registry.requests.length, 0);
  t.is(await metric(app.url, 'service_image_checks_total', 'error'), 9);
  t.is(await metric(app.url, 'service_image_deletes_total', 'error'), 2);
  t.is(await metric(app.url, 'service_devcontainer_lookups_total', 'error'), 4);
});

test('registry failures answer 502 naming the registry and the status or the network reason', async (t) => {
  const registry = await fakeServer((_req, res) => json(res, 503, { errors: [{ code: 'UNAVAILABLE' }] }));
  const closed = await fakeServer(() => undefined);
  await closed.close();
  const app = await startApp({ insecureRegistries: [registry.host, closed.host] });
  t.teardown(async () => {
    await app.close();
    await registry.close();
  });
  const headers = { 'x-registry-username': 'someone', 'x-registry-password': 'hunter2-secret' };
  let res = await fetch(`${app.url}/image?registry=${registry.host}&name=dev/app&tag=1`, { headers });
  t.is(res.status, 502);
  t.deepEqual(await res.json(), { error: `${registry.host} answered 503 for ${registry.host}/dev/app:1` });

  res = await fetch(`${app.url}/image?registry=${closed.host}&name=dev/app&tag=1`, { headers });
  t.is(res.status, 502);
  const body = (await res.json()) as { error: string };
  t.is(body.error, `${closed.host}: connection refused for ${closed.host}/dev/app:1`);

  res = await fetch(`${app.url}/devcontainer?registry=${registry.host}&name=dev/app&tag=1`, { headers });
  t.is(res.status, 502);
  res = await fetch(`${app.url}/image?registry=${registry.host}&name=dev/app&tag=1`, {
    method: 'DELETE',
    headers,
  });
  t.is(res.status, 502);

  t.is(await metric(app.url, 'service_image_checks_total', 'error'), 2);
  t.is(await metric(app.url, 'service_devcontainer_lookups_total', 'error'), 1);
  t.is(await metric(app.url, 'service_image_deletes_total', 'error'), 1);
  t.false(app.logText().includes('hunter2-secret'));
});

/** A registry with tags 1 and 1-copy on one manifest, answering DELETE the way `deletion` says. */
async function deletableRegistry(deletion: 'ok' | 'unsupported' | 'not-implemented' | 'dangling') {
  const manifest = '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{}}';
  const digest = digestOf(manifest);
  const tags = new Map([
    ['1', digest],
    ['1-copy', digest],
    ['other', digestOf('x')],
  ]);
  let manifestGone = false;
  const server = await fakeServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/v2/dev/app/tags/list') return json(res, 200, { name: 'dev/app', tags: [...tags.keys()] });
    const m = /^\/v2\/dev\/app\/manifests\/(.+)$/.exec(url);
    if (!m?.[1]) return void res.writeHead(404).end();
    const reference = decodeURIComponent(m[1]);
    if (req.method === 'HEAD') {
      const d = reference.startsWith('sha256:')
        ? manifestGone
          ? undefined
          : reference
        : tags.get(reference);
      if (!d) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'docker-content-digest': d }).end();
    }
    if (req.method === 'DELETE') {
      if (deletion === 'unsupported')
        return json(res, 405, { errors: [{ code: 'UNSUPPORTED', message: 'unsupported' }] });
      if (deletion === 'not-implemented') return void res.writeHead(501).end();
      if (!reference.startsWith('sha256:')) {
        tags.delete(reference);
        return void res.writeHead(202).end();
      }
      if (deletion === 'dangling' && [...tags.values()].includes(reference)) {
        return json(res, 400, { errors: [{ code: 'GOOGLE_MANIFEST_DANGLING_TAG', message: 'tagged' }] });
      }
      manifestGone = true;
      for (const [tag, d] of tags) if (d === reference) tags.delete(tag);
      return void res.writeHead(202).end();
    }
    res.writeHead(405).end();
  });
  return { server, digest, tags };
}

test('DELETE /image deletes by digest, says when the digest was shared, then reports already absent', async (t) => {
  const { server, digest } = await deletableRegistry('ok');
  const app = await startApp({ insecureRegistries: [server.host] });
  t.teardown(async () => {
    await app.close();
    await server.close();
  });
  const url = `${app.url}/image?registry=${server.host}&name=dev/app&tag=1`;
  let res = await fetch(url, { method: 'DELETE' });
  t.is(res.status, 200);
  const body = (await res.json()) as { image: string; deleted: boolean; reason: string };
  t.is(body.image, `${server.host}/dev/app:1`);
  t.true(body.deleted);
  t.true(body.reason.includes(digest), body.reason);
  t.regex(body.reason, /shared by other tags \(1-copy\)/);
  t.true(server.requests.some((r) => r.method === 'DELETE' && r.url === `/v2/dev/app/manifests/${digest}`));

  res = await fetch(url, { method: 'DELETE' });
  t.deepEqual(await res.json(), {
    image: `${server.host}/dev/app:1`,
    deleted: true,
    reason: 'already absent',
  });
  res = await fetch(url);
  t.deepEqual(await res.json(), { image: `${server.host}/dev/app:1`, exists: false });
  t.is(await metric(app.url, 'service_image_deletes_total', 'deleted'), 2);
  t.is(await metric(app.url, 'service_image_checks_total', 'absent'), 1);
});

test('DELETE /image on a registry without deletion (405 UNSUPPORTED, 501) is unsupported, not an error', async (t) => {
  for (const mode of ['unsupported', 'not-implemented'] as const) {
    const { server } = await deletableRegistry(mode);
    const app = await startApp({ insecureRegistries: [server.host] });
    const res = await fetch(`${app.url}/image?registry=${server.host}&name=dev/app&tag=1`, {
      method: 'DELETE',
    });
    t.is(res.status, 200, mode);
    const body = (await res.json()) as { deleted: boolean; reason: string };
    t.false(body.deleted, mode);
    t.regex(body.reason, /does not support delet/, mode);
    t.is(await metric(app.url, 'service_image_deletes_total', 'unsupported'), 1, mode);
    t.is(await metric(app.url, 'service_image_deletes_total', 'error'), 0, mode);
    await app.close();
    await server.close();
  }
});

test('DELETE /image removes the tag first when the registry refuses a dangling tag', async (t) => {
  const { server, digest, tags } = await deletableRegistry('dangling');
  tags.delete('1-copy');
  const app = await startApp({ insecureRegistries: [server.host] });
  t.teardown(async () => {
    await app.close();
    await server.close();
  });
  const res = await fetch(`${app.url}/image?registry=${server.host}&name=dev/app&tag=1`, {
    method: 'DELETE',
  });
  t.is(res.status, 200);
  const body = (await res.json()) as { deleted: boolean; reason: string };
  t.true(body.deleted);
  t.is(body.reason, `deleted manifest ${digest}`);
  const deletes = server.requests.filter((r) => r.method === 'DELETE').map((r) => r.url);
  t.deepEqual(deletes, [
    `/v2/dev/app/manifests/${digest}`,
    '/v2/dev/app/manifests/1',
    `/v2/dev/app/manifests/${digest}`,
  ]);
});

test('DNS and TLS failures answer 502 with the network reason', async (t) => {
  const tls = await fakeServer((_req, res) => res.writeHead(200).end(), { tls: selfSignedCert() });
  const app = await startApp();
  t.teardown(async () => {
    await app.close();
    await tls.close();
  });
  let res = await fetch(`${app.url}/image?registry=no-such-host.invalid&name=dev/app&tag=1`);
  t.is(res.status, 502);
  t.deepEqual(await res.json(), {
    error: 'no-such-host.invalid: host name not resolved for no-such-host.invalid/dev/app:1',
  });
  // https (the registry is not insecure) to an untrusted self-signed certificate
  res = await fetch(`${app.url}/image?registry=${tls.host}&name=dev/app&tag=1`);
  t.is(res.status, 502);
  const body = (await res.json()) as { error: string };
  t.regex(body.error, new RegExp(`^${tls.host}: TLS error \\(\\w+\\) for ${tls.host}/dev/app:1$`));
  t.is(tls.requests.length, 0);
  t.is(await metric(app.url, 'service_image_checks_total', 'error'), 2);
});
