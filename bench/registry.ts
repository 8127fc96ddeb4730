// Registry benchmark (needs the stack: `npm run stack -- up`; run with `npx tsx bench/registry.ts`).
//
// Against the stack's Bearer-token registry, through a counting TCP proxy, with an image pushed
// by the real builder (multi-platform index with attestations and a devcontainer label):
//   - registry round trips (HTTP requests through the proxy), new TCP connections and tokens
//     issued (the token issuer's count URL), and latency of a cold and a warm GET /image and
//     GET /devcontainer, side by side with `skopeo inspect` (and `--raw`) for the same image;
//   - throughput of warm GET /image vs spawning `skopeo inspect --raw` per check.
// The service runs in this process (startApp, port 0) for round-trip counts; throughput is measured
// against the service in its own process (the real entry), straight
// against the registry for both sides. Figures depend on the machine's load: run it quiet.
// Targets: warm GET /image = 1 round trip; warm GET /devcontainer of an already-read digest = 1;
// warm GET /image throughput >= 10x skopeo.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { type RunningApp, startApp } from '../test/helpers/app.js';
import { spawnService } from '../test/helpers/service-process.js';
import { countingProxy, type CountingProxy } from '../test/helpers/registry-counting-proxy.js';
import { fixtureBuilder, runId } from '../test/helpers/registry-images.js';
import { stackEnv } from '../test/stack/env.js';

const env = stackEnv();
const NAME = 'dev/bench-registry';
const TAG = runId();
const WARM_SAMPLES = 200;
const SKOPEO_SAMPLES = 10;
const THROUGHPUT_SECONDS = 5;

/** Requests per second that `wrk` (Debian package) measures, or undefined when wrk is not installed. */
async function wrkRate(
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<number | undefined> {
  const args = [
    '-t1',
    '-c8',
    `-d${seconds}s`,
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
  ];
  const res = await execa('wrk', args, { reject: false });
  if ((res.cause as { code?: string } | undefined)?.code === 'ENOENT') return undefined;
  if (res.exitCode !== 0) throw new Error(`wrk failed: ${res.stderr}`);
  if (/Non-2xx or 3xx responses/.test(res.stdout)) throw new Error(`wrk saw error answers:\n${res.stdout}`);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(res.stdout)?.[1];
  if (rate === undefined) throw new Error(`wrk printed no rate:\n${res.stdout}`);
  return Number(rate);
}

const issued = async (): Promise<number> =>
  ((await (await fetch(env.TOKEN_ISSUER_COUNT_URL)).json()) as { issued: number }).issued;

interface Measure {
  label: string;
  roundTrips: number;
  connections: number;
  tokens: number;
  ms: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
};

/** Runs `fn` once and reports what it cost at the registry. */
async function measure(label: string, proxy: CountingProxy, fn: () => Promise<void>): Promise<Measure> {
  proxy.reset();
  const tokensBefore = await issued();
  const started = performance.now();
  await fn();
  const ms = performance.now() - started;
  return {
    label,
    roundTrips: proxy.requests.length,
    connections: proxy.connections(),
    tokens: (await issued()) - tokensBefore,
    ms,
  };
}

/** Runs `fn` n times (already warm) and reports the per-call average cost and median latency. */
async function measureMany(
  label: string,
  proxy: CountingProxy,
  n: number,
  fn: () => Promise<void>,
): Promise<Measure & { p95: number }> {
  proxy.reset();
  const tokensBefore = await issued();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return {
    label,
    roundTrips: proxy.requests.length / n,
    connections: proxy.connections() / n,
    tokens: ((await issued()) - tokensBefore) / n,
    ms: median(times),
    p95: pct(times, 0.95),
  };
}

async function main(): Promise<void> {
  console.log(
    `building the fixture image ${env.REGISTRY_TOKEN}/${NAME}:${TAG} (linux/amd64 + linux/386, label) ...`,
  );
  const builder = await fixtureBuilder(env);
  const label = JSON.stringify([
    { remoteUser: 'root', postCreateCommand: 'echo hello' },
    { containerEnv: { A: '1' } },
  ]);
  try {
    await builder.build({
      dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nLABEL devcontainer.metadata=${JSON.stringify(label)}\n`,
      platforms: ['linux/amd64', 'linux/386'],
      tags: [`${env.REGISTRY_TOKEN}/${NAME}:${TAG}`],
    });
  } finally {
    await builder.dispose();
  }

  const proxy = await countingProxy(env.REGISTRY_TOKEN);
  const headers = {
    'x-registry-username': env.REGISTRY_TOKEN_USER,
    'x-registry-password': env.REGISTRY_TOKEN_PASSWORD,
  };
  const query = `registry=${proxy.host}&name=${NAME}&tag=${TAG}`;
  const authDir = await mkdtemp(join(tmpdir(), 'ibs-bench-auth-'));
  const authFile = join(authDir, 'auth.json');
  const b64 = Buffer.from(`${env.REGISTRY_TOKEN_USER}:${env.REGISTRY_TOKEN_PASSWORD}`).toString('base64');
  await writeFile(
    authFile,
    JSON.stringify({ auths: { [proxy.host]: { auth: b64 }, [env.REGISTRY_TOKEN]: { auth: b64 } } }),
    { mode: 0o600 },
  );
  const skopeo =
    (raw: boolean, registry = proxy.host) =>
    async (): Promise<void> => {
      await execa('skopeo', [
        'inspect',
        ...(raw ? ['--raw'] : []),
        '--tls-verify=false',
        '--authfile',
        authFile,
        `docker://${registry}/${NAME}:${TAG}`,
      ]);
    };

  let app: RunningApp | undefined;
  const apps: RunningApp[] = [];
  const fresh = async (): Promise<RunningApp> => {
    app = await startApp({ insecureRegistries: [proxy.host, env.REGISTRY_TOKEN] });
    apps.push(app);
    return app;
  };
  const get =
    (a: RunningApp, path: string, q = query) =>
    async (): Promise<void> => {
      const res = await fetch(`${a.url}${path}?${q}`, { headers });
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };

  try {
    const rows: (Measure & { p95?: number })[] = [];
    // GET /image
    const imageApp = await fresh();
    rows.push(await measure('GET /image, cold (new service)', proxy, get(imageApp, '/image')));
    rows.push(
      await measureMany(`GET /image, warm (x${WARM_SAMPLES})`, proxy, WARM_SAMPLES, get(imageApp, '/image')),
    );
    // GET /devcontainer
    const dcApp = await fresh();
    rows.push(await measure('GET /devcontainer, cold (new service)', proxy, get(dcApp, '/devcontainer')));
    rows.push(
      await measureMany(
        `GET /devcontainer, warm (x${WARM_SAMPLES})`,
        proxy,
        WARM_SAMPLES,
        get(dcApp, '/devcontainer'),
      ),
    );
    // skopeo, a new process per call: always cold
    rows.push(
      await measureMany(`skopeo inspect --raw (x${SKOPEO_SAMPLES})`, proxy, SKOPEO_SAMPLES, skopeo(true)),
    );
    rows.push(await measureMany(`skopeo inspect (x${SKOPEO_SAMPLES})`, proxy, SKOPEO_SAMPLES, skopeo(false)));

    console.log(
      '\nround trips = HTTP requests to the registry (through the counting proxy); tokens = issued by the realm',
    );
    console.log(['what'.padEnd(38), 'round trips', 'new TCP', 'tokens', 'median ms', 'p95 ms'].join('  '));
    for (const r of rows) {
      console.log(
        [
          r.label.padEnd(38),
          r.roundTrips.toFixed(2).padStart(11),
          r.connections.toFixed(2).padStart(7),
          r.tokens.toFixed(2).padStart(6),
          r.ms.toFixed(1).padStart(9),
          (r.p95 ?? r.ms).toFixed(1).padStart(6),
        ].join('  '),
      );
    }

    // Throughput: warm GET /image (8 concurrent clients) vs spawning skopeo per check (2 concurrent: 2 cores).
    const throughput = async (
      concurrency: number,
      seconds: number,
      fn: () => Promise<void>,
    ): Promise<number> => {
      let done = 0;
      const until = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < until) {
            await fn();
            done++;
          }
        }),
      );
      return done / seconds;
    };
    // The service as users run it: its own process (not sharing this load generator's event loop),
    // straight to the registry (no counting proxy in the way); both sides warmed up once.
    const service = spawnService(['--port', '0', '--insecure-registries', env.REGISTRY_TOKEN]);
    let serviceRate: number;
    try {
      const { port } = (await service.waitForLog('listening', 30_000)) as { port: number };
      const url = `http://127.0.0.1:${port}/image?registry=${env.REGISTRY_TOKEN}&name=${NAME}&tag=${TAG}`;
      const direct = async (): Promise<void> => {
        const res = await fetch(url, { headers });
        if (res.status !== 200) throw new Error(`/image answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      };
      await direct();
      serviceRate = await throughput(8, THROUGHPUT_SECONDS, direct);
      console.log(
        `\nthroughput, warm GET /image, load from this process (8 fetch clients): ${serviceRate.toFixed(0)} checks/s`,
      );
      // A C load generator in its own process leaves the 2 cores to the service and the registry.
      const wrk = await wrkRate(url, headers, THROUGHPUT_SECONDS);
      if (wrk !== undefined) {
        console.log(`throughput, warm GET /image, load from wrk (8 connections): ${wrk.toFixed(0)} checks/s`);
        serviceRate = wrk;
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    const skopeoRate = await throughput(2, THROUGHPUT_SECONDS, skopeo(true, env.REGISTRY_TOKEN));
    console.log(`throughput, skopeo inspect --raw per check (2 parallel): ${skopeoRate.toFixed(1)} checks/s`);
    console.log(
      `ratio: ${(serviceRate / skopeoRate).toFixed(1)}x (target >= 10x; service figure from wrk when installed)`,
    );

    const warmImage = rows[1]?.roundTrips ?? NaN;
    const warmDc = rows[3]?.roundTrips ?? NaN;
    console.log('\ntargets:');
    console.log(
      `  warm GET /image = 1 round trip: ${warmImage.toFixed(2)} ${warmImage === 1 ? 'OK' : 'MISSED'}`,
    );
    console.log(
      `  warm GET /devcontainer = 1 round trip: ${warmDc.toFixed(2)} ${warmDc === 1 ? 'OK' : 'MISSED'}`,
    );
    console.log(`  throughput >= 10x skopeo: ${serviceRate / skopeoRate >= 10 ? 'OK' : 'MISSED'}`);
  } finally {
    for (const a of apps) await a.close();
    await proxy.close();
    await rm(authDir, { recursive: true, force: true });
  }
}

await main();
