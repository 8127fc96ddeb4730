// The stack's two builders (test/stack/components/builder.ts): each TLS endpoint bootstraps a buildx
// remote builder with the service's client certificate and refuses a handshake without one or with
// one from another CA; a and b keep separate caches; a private bridge to b stops and starts on demand.
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { privateBuilderBridge } from '../stack/builders.js';
import { stackEnv } from '../stack/env.js';
import { run, tcpOpen } from '../stack/proc.js';

const env = stackEnv();

type Teardown = { teardown(fn: () => void | Promise<void>): void };

function tmp(t: Teardown, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A remote buildx builder on `endpoint` (driver options as given) in a fresh DOCKER_CONFIG. */
async function remoteBuilder(t: Teardown, endpoint: string, driverOpts: string[] = []) {
  const benv = { PATH: process.env.PATH, HOME: os.tmpdir(), DOCKER_CONFIG: tmp(t, 'ibs-builders-docker-') };
  const name = `builders-${crypto.randomBytes(4).toString('hex')}`;
  const opts = driverOpts.length > 0 ? ['--driver-opt', driverOpts.join(',')] : [];
  await run('docker', ['buildx', 'create', '--name', name, '--driver', 'remote', ...opts, endpoint], {
    env: benv,
  });
  const status = async (): Promise<string> => {
    const { stdout } = await run('docker', ['buildx', 'inspect', '--bootstrap', name], {
      env: benv,
      timeoutMs: 60_000,
    });
    return /Status:\s+(\w+)/.exec(stdout)?.[1] ?? stdout;
  };
  return { name, env: benv, status };
}

const clientPair = [
  `cacert=${env.BUILDER_TLS_CA_FILE}`,
  `cert=${env.BUILDER_TLS_CLIENT_CERT_FILE}`,
  `key=${env.BUILDER_TLS_CLIENT_KEY_FILE}`,
];

for (const [id, endpoint] of [
  ['a', env.BUILDER_A_TLS_ENDPOINT],
  ['b', env.BUILDER_B_TLS_ENDPOINT],
] as const) {
  test(`builder ${id}'s TLS endpoint bootstraps a buildx remote builder with the client certificate`, async (t) => {
    const b = await remoteBuilder(t, endpoint, [
      ...clientPair,
      `servername=${env.STACK_BUILDER_TLS_SERVER_NAME}`,
    ]);
    t.is(await b.status(), 'running');
  });
}

/** A TLS handshake with the front, as a gRPC client makes it; resolves with how it ended. */
function handshake(endpoint: string, client: { cert?: string; key?: string }): Promise<string> {
  const url = new URL(endpoint.replace(/^tcp:/, 'http:'));
  return new Promise((resolve) => {
    const s = tls.connect({
      host: url.hostname,
      port: Number(url.port),
      ca: fs.readFileSync(env.BUILDER_TLS_CA_FILE),
      ALPNProtocols: ['h2'],
      ...(client.cert ? { cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key!) } : {}),
    });
    s.setTimeout(10_000, () => s.destroy(new Error('timeout')));
    // TLS 1.3: the server judges the client certificate after the client's side completed, and
    // answers with an alert (no certificate) or closes (untrusted one). An accepted client gets the
    // HTTP/2 server preface from BuildKit.
    s.once('data', () => {
      s.destroy();
      resolve(`accepted ${s.alpnProtocol}`);
    });
    s.once('secureConnect', () => s.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0'));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    s.once('close', () => resolve('closed'));
  });
}

test('the TLS fronts refuse a handshake without a client certificate and with one from another CA', async (t) => {
  for (const endpoint of [env.BUILDER_A_TLS_ENDPOINT, env.BUILDER_B_TLS_ENDPOINT]) {
    t.is(
      await handshake(endpoint, {
        cert: env.BUILDER_TLS_CLIENT_CERT_FILE,
        key: env.BUILDER_TLS_CLIENT_KEY_FILE,
      }),
      'accepted h2',
      endpoint,
    );
    t.is(await handshake(endpoint, {}), 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', endpoint);
    t.is(
      await handshake(endpoint, {
        cert: env.BUILDER_TLS_OTHER_CA_CLIENT_CERT_FILE,
        key: env.BUILDER_TLS_OTHER_CA_CLIENT_KEY_FILE,
      }),
      'closed', // Node's TLS server drops it without an alert, before a byte of gRPC
      endpoint,
    );
  }
});

/** Builds a one-RUN Dockerfile (cache only, no output); returns whether the RUN step was CACHED. */
async function runStepCached(builder: { name: string; env: NodeJS.ProcessEnv }, context: string) {
  const { stdout, stderr } = await run(
    'docker',
    ['buildx', 'build', '--builder', builder.name, '--progress', 'plain', context],
    { env: builder.env, timeoutMs: 180_000 },
  );
  const log = `${stdout}${stderr}`;
  const step = /^#(\d+) \[2\/2\] RUN /m.exec(log)?.[1];
  if (step === undefined) throw new Error(`no RUN step in:\n${log}`);
  return new RegExp(`^#${step} CACHED$`, 'm').test(log);
}

test('builders a and b keep separate caches: a step cached on a runs again on b', async (t) => {
  const context = tmp(t, 'ibs-builders-ctx-');
  const marker = crypto.randomBytes(8).toString('hex');
  fs.writeFileSync(
    path.join(context, 'Dockerfile'),
    `FROM ${env.BASE_IMAGE_ANON}\nRUN echo ${marker} > /marker\n`,
  );
  const a = await remoteBuilder(t, env.BUILDER_A_ENDPOINT);
  const b = await remoteBuilder(t, env.BUILDER_B_ENDPOINT);
  t.false(await runStepCached(a, context), 'first build on a');
  t.true(await runStepCached(a, context), 'second build on a');
  t.false(await runStepCached(b, context), 'first build on b');
  t.true(await runStepCached(b, context), 'second build on b');
});

test('a private bridge to builder b stops (ports closed, builder unreachable) and starts again', async (t) => {
  const bridge = await privateBuilderBridge('b');
  t.teardown(() => bridge.stop());
  const ports = [bridge.endpoint, bridge.tlsEndpoint].map((e) =>
    Number(new URL(e.replace(/^tcp:/, 'http:')).port),
  );
  const plain = await remoteBuilder(t, bridge.endpoint);
  t.is(await plain.status(), 'running');
  const tlsBuilder = await remoteBuilder(t, bridge.tlsEndpoint, clientPair);
  t.is(await tlsBuilder.status(), 'running');

  await bridge.stop();
  await bridge.stop(); // idempotent
  for (const p of ports) t.false(await tcpOpen(p));
  t.true(
    await tcpOpen(Number(new URL(env.BUILDER_B_ENDPOINT.replace(/^tcp:/, 'http:')).port)),
    "the stack's own b",
  );

  await bridge.start();
  await bridge.start(); // idempotent
  for (const p of ports) t.true(await tcpOpen(p));
  t.is(await plain.status(), 'running');
});
