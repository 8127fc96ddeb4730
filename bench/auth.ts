// What caller identity costs (needs the stack: `npm run stack -- up`; `npm run bench:auth`).
//
// Two services side by side, each its own process on the real entry: identities off, and enforced
// (an https OIDC issuer of this script's own, trusted through NODE_EXTRA_CA_CERTS, and an audit
// subscription). In one run, interleaved:
//   - a warm GET /image of an image in the stack's registry: without a token (off) against an ID
//     token and a static token (enforce); the median added must stay under 1 ms;
//   - a POST /build answered by reuse (same commit, inputs unchanged): off against enforce, whose
//     allowed build is audited (a log line and an access.decided event recorded before the answer).
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { httpsCreds, httpsRepo, servedRepo, stack } from '../test/helpers/build-support.js';
import { newSecret, startReceiver } from '../test/helpers/event-receiver.js';
import { startIssuer } from '../test/helpers/oidc-issuer.js';
import { replicaEnv } from '../test/helpers/replicas.js';
import { spawnService, type ServiceProcess } from '../test/helpers/service-process.js';

const GETS = 400;
const REUSES = 15;
const AUDIENCE = 'image-build-service';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] ?? NaN;
const ms = (x: number): string => `${x.toFixed(3)} ms`;

async function timed(fn: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const answer = await fn();
  await answer.arrayBuffer();
  const took = performance.now() - started;
  if (answer.status !== 200) throw new Error(`answered ${answer.status}`);
  return took;
}

async function listening(service: ServiceProcess): Promise<string> {
  const { port } = await service.waitForLog('listening');
  return `http://127.0.0.1:${String(port)}`;
}

async function main(): Promise<void> {
  const issuer = await startIssuer();
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  const opsToken = randomBytes(24).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ibs-bench-auth-'));
  const repo = servedRepo((work) => {
    mkdirSync(join(work, '.devcontainer'));
    writeFileSync(
      join(work, '.devcontainer', 'devcontainer.json'),
      JSON.stringify({ image: stack.BASE_IMAGE_ANON }),
    );
  });
  const settings = join(dir, 'settings.yaml');
  writeFileSync(
    settings,
    stringify({
      events: {
        subscriptions: [
          {
            name: 'audit',
            url: receiver.url,
            secrets: [secret],
            types: ['dev.imagebuildservice.access.decided'],
          },
        ],
      },
      auth: {
        mode: 'enforce',
        issuers: [{ name: 'ci', issuer: issuer.url, audience: AUDIENCE }],
        tokens: [{ name: 'ops', sha256: createHash('sha256').update(opsToken).digest('hex') }],
        rules: [
          {
            name: 'ci',
            issuer: 'ci',
            actions: ['build', 'read'],
            repositories: [{ host: '*', path: '**' }],
            images: [{ registry: '*', name: '**' }],
          },
          { name: 'ops', token: 'ops', actions: ['read'], images: [{ registry: '*', name: '**' }] },
        ],
      },
    }),
  );
  const base = replicaEnv(stack, '');
  delete (base as { REDIS_URL?: string }).REDIS_URL;
  const off = spawnService(['--port', '0'], base);
  const enforce = spawnService(['--port', '0'], {
    ...base,
    SERVICE_CONFIG_PATH: settings,
    NODE_EXTRA_CA_CERTS: issuer.caFile,
  });
  try {
    const [offUrl, enforceUrl] = await Promise.all([listening(off), listening(enforce)]);
    const idToken = await issuer.token({ sub: 'bench', aud: AUDIENCE });
    const image = `/image?registry=${encodeURIComponent(stack.REGISTRY_ANON)}&name=dev/base&tag=1`;
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const get = {
      off: () => fetch(`${offUrl}${image}`),
      idToken: () => fetch(`${enforceUrl}${image}`, bearer(idToken)),
      staticToken: () => fetch(`${enforceUrl}${image}`, bearer(opsToken)),
    };
    const samples: Record<keyof typeof get, number[]> = { off: [], idToken: [], staticToken: [] };
    for (const fn of Object.values(get)) for (let i = 0; i < 20; i += 1) await timed(fn);
    for (let i = 0; i < GETS; i += 1)
      for (const [name, fn] of Object.entries(get)) samples[name as keyof typeof get].push(await timed(fn));

    const body = JSON.stringify({
      repository: httpsRepo(repo.name),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: `bench/auth-${randomBytes(3).toString('hex')}` },
    });
    const post =
      (url: string, headers: Record<string, string> = {}) =>
      () =>
        fetch(`${url}/build`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
    const builds = { off: post(offUrl), enforce: post(enforceUrl, { authorization: `Bearer ${idToken}` }) };
    await timed(builds.off);
    await timed(builds.enforce);
    const reuse: Record<keyof typeof builds, number[]> = { off: [], enforce: [] };
    for (let i = 0; i < REUSES; i += 1)
      for (const [name, fn] of Object.entries(builds))
        reuse[name as keyof typeof builds].push(await timed(fn));

    const date = new Date().toISOString().slice(0, 10);
    console.log(
      `bench:auth (${date}; ${GETS} warm GET /image each, ${REUSES} reuse answers each, interleaved)`,
    );
    console.log('warm GET /image                 median      p95');
    for (const [name, xs] of Object.entries(samples))
      console.log(`  ${name.padEnd(28)} ${ms(median(xs)).padStart(10)} ${ms(p95(xs)).padStart(10)}`);
    const added = (name: 'idToken' | 'staticToken') => median(samples[name]) - median(samples.off);
    console.log(`  added by an ID token (median):     ${ms(added('idToken'))} (target < 1 ms)`);
    console.log(`  added by a static token (median):  ${ms(added('staticToken'))} (target < 1 ms)`);
    console.log('POST /build answered by reuse   median      p95');
    for (const [name, xs] of Object.entries(reuse))
      console.log(`  ${name.padEnd(28)} ${ms(median(xs)).padStart(10)} ${ms(p95(xs)).padStart(10)}`);
    console.log(`  added by identity and audit (median): ${ms(median(reuse.enforce) - median(reuse.off))}`);
    console.log(`  access.decided events delivered: ${receiver.received.length}`);
  } finally {
    await Promise.all([off.lose(), enforce.lose()]);
    await Promise.all([issuer.close(), receiver.close()]);
    repo.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
