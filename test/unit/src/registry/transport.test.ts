import test from 'ava';
import { Transport, TransportError } from '../../../../src/registry/transport.js';
import { fakeServer, selfSignedCert } from '../../../helpers/fake-registry.js';

const send = (transport: Transport, url: string, extra: Partial<Parameters<Transport['send']>[0]> = {}) =>
  transport.send({ method: 'GET', url: new URL(url), maxBytes: 1024 * 1024, timeoutMs: 5_000, ...extra });

test('a redirect to another host drops Authorization; a same-origin redirect keeps it', async (t) => {
  const target = await fakeServer((_req, res) => res.end('ok'), { hostname: 'localhost' });
  const origin = await fakeServer((req, res) => {
    if (req.url === '/away') res.writeHead(307, { location: `${target.origin}/blob` }).end();
    else if (req.url === '/here') res.writeHead(302, { location: '/final' }).end();
    else res.end('same');
  });
  const transport = new Transport();
  t.teardown(async () => {
    transport.destroy();
    await Promise.all([target.close(), origin.close()]);
  });
  const headers = { authorization: 'Bearer secret-token' };

  const away = await send(transport, `${origin.origin}/away`, { headers });
  t.is(away.status, 200);
  t.is(away.body.toString(), 'ok');
  t.is(origin.requests[0]?.headers.authorization, 'Bearer secret-token');
  t.is(target.requests.length, 1);
  t.is(target.requests[0]?.headers.authorization, undefined);

  const here = await send(transport, `${origin.origin}/here`, { headers });
  t.is(here.body.toString(), 'same');
  t.is(origin.requests.at(-1)?.url, '/final');
  t.is(origin.requests.at(-1)?.headers.authorization, 'Bearer secret-token');
});

test('a DELETE never follows a redirect', async (t) => {
  const server = await fakeServer((_req, res) => res.writeHead(307, { location: '/elsewhere' }).end());
  const transport = new Transport();
  t.teardown(async () => {
    transport.destroy();
    await server.close();
  });
  const res = await send(transport, `${server.origin}/x`, { method: 'DELETE' });
  t.is(res.status, 307);
  t.is(server.requests.length, 1);
});

test('a redirect from https down to plain http is refused', async (t) => {
  const tls = selfSignedCert();
  const plain = await fakeServer((_req, res) => res.end('plain'));
  const secure = await fakeServer(
    (_req, res) => res.writeHead(302, { location: `${plain.origin}/x` }).end(),
    { tls },
  );
  const transport = new Transport({ ca: tls.cert });
  t.teardown(async () => {
    transport.destroy();
    await Promise.all([plain.close(), secure.close()]);
  });
  const err = await t.throwsAsync(
    send(transport, `${secure.origin}/x`, { headers: { authorization: 'Basic c2VjcmV0' } }),
    {
      instanceOf: TransportError,
    },
  );
  t.is(err?.kind, 'redirect');
  t.is(plain.requests.length, 0);
});

test('the size cap is enforced while streaming, with or without a declared length', async (t) => {
  const server = await fakeServer((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
      return;
    }
    // chunked, no length: keeps writing well past the cap
    res.writeHead(200);
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent > 1_000_000) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write('y'.repeat(1000));
      sent += 1000;
    }, 1);
  });
  const transport = new Transport();
  t.teardown(async () => {
    transport.destroy();
    await server.close();
  });
  for (const path of ['/declared', '/streamed']) {
    const err = await t.throwsAsync(send(transport, `${server.origin}${path}`, { maxBytes: 4096 }), {
      instanceOf: TransportError,
    });
    t.is(err?.kind, 'too_large', path);
  }
  const ok = await send(transport, `${server.origin}/declared`, { maxBytes: 5000 });
  t.is(ok.body.length, 5000);
});

test('a call that gets no answer times out', async (t) => {
  const server = await fakeServer(() => undefined); // never answers
  const transport = new Transport();
  t.teardown(async () => {
    transport.destroy();
    await server.close();
  });
  const started = Date.now();
  const err = await t.throwsAsync(send(transport, `${server.origin}/slow`, { timeoutMs: 300 }), {
    instanceOf: TransportError,
  });
  t.is(err?.kind, 'timeout');
  const elapsed = Date.now() - started;
  t.true(elapsed >= 280 && elapsed < 15_000, `${elapsed} ms`); // not before it; a loaded machine is late
});

test('connections are kept alive and reused', async (t) => {
  const server = await fakeServer((_req, res) => res.end('k'));
  const transport = new Transport();
  t.teardown(async () => {
    transport.destroy();
    await server.close();
  });
  for (let i = 0; i < 5; i++) {
    const res = await send(transport, `${server.origin}/k`);
    t.is(res.status, 200);
  }
  t.is(server.requests.length, 5);
  // one connection carried all five requests
  t.is(new Set(server.requests.map((r) => r.remotePort)).size, 1);
});

test('a refused connection is a network failure with a plain reason', async (t) => {
  const server = await fakeServer((_req, res) => res.end());
  const url = `${server.origin}/x`;
  await server.close();
  const transport = new Transport();
  t.teardown(() => transport.destroy());
  const err = await t.throwsAsync(send(transport, url), { instanceOf: TransportError });
  t.is(err?.kind, 'network');
  t.is(err?.reason, 'connection refused');
});
