/**
 * Benchmark (not a test): the wall time of POST /build against the same work done by hand,
 * `git clone --depth 1` + `devcontainer build --push`, for the same fixture repository on the same
 * builder (the stack's BuildKit endpoint), for a small fixture and the large one (12 000 files,
 * ~110 MB, of which the build reads only `.devcontainer/`). Runs are interleaved (service, hand,
 * service, ...) after one warm-up of each, so drift hits both sides alike. Both sides produce the
 * same image: the by-hand build passes the two OCI labels the service adds (source, and the
 * revision the service's warm-up answered), to the same builder, with no cache options either side.
 *
 *   npm run stack -- up
 *   npx tsx bench/build.ts [runs=3] [small=feature] [large=large]
 *
 * Targets: small fixture ratio <= 1.05 (the service adds under 5 %); large fixture ratio <= 0.3
 * (the partial, sparse clone makes the service at least 3x faster than by hand); the large
 * fixture's POST /build within 1.5x of the small fixture's.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startApp, testConfig } from '../test/helpers/app.js';
import { stackEnv } from '../test/stack/env.js';
import { devcontainerCliScript } from '../workers/builder/devcontainer-build.js';

const run = promisify(execFile);
const runs = Number(process.argv[2] ?? 3);
const small = process.argv[3] ?? 'feature';
const large = process.argv[4] ?? 'large';
const stack = stackEnv();
const repositoryOf = (fixture: string) => `${stack.GIT_HTTPS_URL}/${fixture}.git`;
const basePath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';

const app = await startApp({
  builderEndpoints: [stack.STACK_BUILDER_ENDPOINT],
  insecureRegistries: [stack.REGISTRY_ANON],
  childEnv: { PATH: basePath, GIT_SSL_CAINFO: stack.GIT_CA_FILE },
  logs: { retention: 1000 },
  // Every run builds: this compares building through the service with building by hand.
  build: { ...testConfig({ scratchDir: tmpdir() }).build, reuse: false },
});

async function viaService(fixture: string, i: number): Promise<{ ms: number; commit: string }> {
  const started = performance.now();
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repository: repositoryOf(fixture),
      gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
      image: { registry: stack.REGISTRY_ANON, name: 'bench/service', tag: `run-${i}` },
    }),
  });
  const body = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`POST /build answered ${res.status}: ${body}`);
  return { ms, commit: (JSON.parse(body) as { commit: string }).commit };
}

async function byHand(fixture: string, i: number, commit: string): Promise<number> {
  const work = await mkdtemp(join(tmpdir(), 'ibs-bench-'));
  const auth = Buffer.from(`${stack.GIT_HTTPS_USER}:${stack.GIT_HTTPS_PASSWORD}`).toString('base64');
  try {
    const started = performance.now();
    await run(
      'git',
      [
        'clone',
        '--depth',
        '1',
        '--single-branch',
        '--no-tags',
        '--',
        repositoryOf(fixture),
        join(work, 'src'),
      ],
      {
        env: {
          PATH: basePath,
          HOME: work,
          GIT_SSL_CAINFO: stack.GIT_CA_FILE,
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'http.extraHeader',
          GIT_CONFIG_VALUE_0: `Authorization: Basic ${auth}`,
        },
      },
    );
    await run(
      process.execPath,
      [
        devcontainerCliScript(),
        'build',
        '--workspace-folder',
        join(work, 'src'),
        '--image-name',
        `${stack.REGISTRY_ANON}/bench/hand:run-${i}`,
        '--push',
        '--omit-syntax-directive',
        '--label',
        `org.opencontainers.image.source=${repositoryOf(fixture)}`,
        '--label',
        `org.opencontainers.image.revision=${commit}`,
      ],
      {
        env: {
          PATH: basePath,
          HOME: process.env.HOME ?? work,
          DOCKER_CONFIG: stack.STACK_DOCKER_CONFIG,
          BUILDX_BUILDER: stack.STACK_BUILDER_NAME,
        },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return performance.now() - started;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const fmt = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

interface Figures {
  service: number[];
  hand: number[];
}

async function measure(fixture: string): Promise<Figures> {
  console.log(
    `fixture ${fixture} over https, builder ${stack.STACK_BUILDER_ENDPOINT}, ${runs} runs each (+1 warm-up)`,
  );
  const { commit } = await viaService(fixture, 0);
  await byHand(fixture, 0, commit);
  const figures: Figures = { service: [], hand: [] };
  for (let i = 1; i <= runs; i++) {
    figures.service.push((await viaService(fixture, i)).ms);
    figures.hand.push(await byHand(fixture, i, commit));
    console.log(
      `run ${i}: service ${fmt(figures.service.at(-1) ?? 0)}  by hand ${fmt(figures.hand.at(-1) ?? 0)}`,
    );
  }
  return figures;
}

function report(fixture: string, f: Figures, target: number): void {
  console.log(
    `${fixture}: POST /build          mean ${fmt(mean(f.service))}  median ${fmt(median(f.service))}`,
  );
  console.log(`${fixture}: clone + build --push mean ${fmt(mean(f.hand))}  median ${fmt(median(f.hand))}`);
  console.log(
    `${fixture}: ratio (service / by hand): mean ${(mean(f.service) / mean(f.hand)).toFixed(3)}  median ${(median(f.service) / median(f.hand)).toFixed(3)}  (target <= ${target})`,
  );
}

try {
  const smallFigures = await measure(small);
  const largeFigures = await measure(large);
  console.log('');
  report(small, smallFigures, 1.05);
  report(large, largeFigures, 0.3);
  console.log(
    `POST /build ${large} / ${small}: mean ${(mean(largeFigures.service) / mean(smallFigures.service)).toFixed(3)}  median ${(median(largeFigures.service) / median(smallFigures.service)).toFixed(3)}  (target <= 1.5)`,
  );
} finally {
  await app.close();
}
