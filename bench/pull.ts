/**
 * Benchmark (not a test): what a dev container's start waits on, pull and unpack, for the same
 * image built by the service with gzip and with zstd layers. The image: the stack's base and four
 * RUN steps writing ~64 MB of text-like data each (base64 of random bytes). Each pull goes into a
 * fresh content store: a private containerd (Debian's) with its own root, state and socket under a
 * temp dir, `ctr images pull --plain-http --snapshotter native` (pull and unpack), medians of 5.
 * Printed: the median seconds, the compressed bytes transferred, and the zstd/gzip ratio.
 *
 *   npm run stack -- up
 *   npm run bench:pull [-- runs=5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startBuildApp } from '../test/helpers/build-support.js';
import { testRepo } from '../test/helpers/reuse-support.js';
import { MANIFEST_ACCEPT, registryFetch } from '../test/stack/registry-client.js';
import { stackEnv } from '../test/stack/env.js';

const stack = stackEnv();
const RUNS = Number(/^runs=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 5);
const REGISTRY = stack.REGISTRY_ANON;

const dockerfile = [
  `FROM ${stack.BASE_IMAGE_ANON}`,
  ...[1, 2, 3, 4].map((i) => `RUN mkdir -p /data && head -c 48000000 /dev/urandom | base64 > /data/${i}`),
  '',
].join('\n');

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};

/** The compressed bytes of the linux image's layers and their media types. */
async function layerBytes(name: string, digest: string): Promise<{ bytes: number; types: string[] }> {
  const get = async (ref: string) =>
    (await (
      await registryFetch(REGISTRY, `/v2/${name}/manifests/${ref}`, { headers: { accept: MANIFEST_ACCEPT } })
    ).json()) as {
      manifests?: Array<{ digest: string; platform?: { os: string } }>;
      layers?: Array<{ size: number; mediaType: string }>;
    };
  const top = await get(digest);
  const linux = top.manifests?.find((m) => m.platform?.os === 'linux');
  const layers = (linux === undefined ? top : await get(linux.digest)).layers ?? [];
  return {
    bytes: layers.reduce((sum, l) => sum + l.size, 0),
    types: [...new Set(layers.map((l) => l.mediaType))],
  };
}

/** A private containerd under `dir` (its own root, state and socket); resolves once it answers. */
async function containerd(dir: string): Promise<{ address: string; stop: () => Promise<void> }> {
  const address = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  await writeFile(
    config,
    [
      'version = 2',
      `root = "${join(dir, 'root')}"`,
      `state = "${join(dir, 'state')}"`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = "${address}"`,
      '[ttrpc]',
      `  address = "${join(dir, 'ttrpc.sock')}"`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('containerd', ['--config', config], { stdio: 'ignore' });
  for (let i = 0; i < 200 && !existsSync(address); i++) await new Promise((r) => setTimeout(r, 50));
  await execa('ctr', ['--address', address, 'version']);
  return {
    address,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Seconds to pull and unpack `ref` into a fresh content store. */
async function pullOnce(ref: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-bench-containerd-'));
  const daemon = await containerd(dir);
  try {
    const started = performance.now();
    await execa('ctr', [
      '--address',
      daemon.address,
      '-n',
      'bench',
      'images',
      'pull',
      '--plain-http',
      '--snapshotter',
      'native',
      ref,
    ]);
    return (performance.now() - started) / 1000;
  } finally {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const app = await startBuildApp({ logs: { retention: 100 }, build: { reuse: false } });
const repo = await testRepo('bench-pull');
try {
  await repo.commit({
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': dockerfile,
  });
  const images: Record<string, { ref: string; bytes: number; types: string[] }> = {};
  for (const compression of ['gzip', 'zstd'] as const) {
    const name = `bench/pull-${compression}-${Date.now()}`;
    const res = await fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        repository: repo.url,
        gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
        image: { registry: REGISTRY, name },
        buildOptions: { compression },
      }),
    });
    const out = (await res.json()) as Record<string, string>;
    if (res.status !== 200)
      throw new Error(`POST /build (${compression}) answered ${res.status}: ${JSON.stringify(out)}`);
    images[compression] = {
      ref: `${REGISTRY}/${name}@${String(out.digest)}`,
      ...(await layerBytes(name, String(out.digest))),
    };
  }
  const times: Record<string, number[]> = { gzip: [], zstd: [] };
  // Interleaved, so that drift on the machine hits both alike.
  for (let i = 0; i < RUNS; i++)
    for (const compression of ['gzip', 'zstd'] as const)
      times[compression]?.push(await pullOnce(images[compression]?.ref ?? ''));
  console.log(`pull and unpack into a fresh containerd content store, medians of ${RUNS}:`);
  for (const compression of ['gzip', 'zstd'] as const) {
    const image = images[compression];
    console.log(
      `  ${compression.padEnd(5)} ${median(times[compression] ?? []).toFixed(2)} s, ` +
        `${((image?.bytes ?? 0) / 1e6).toFixed(1)} MB transferred (${image?.types.join(', ')})`,
    );
  }
  const ratio = median(times.zstd ?? []) / median(times.gzip ?? []);
  const bytes = (images.zstd?.bytes ?? 0) / (images.gzip?.bytes ?? 1);
  console.log(`zstd/gzip: time ${ratio.toFixed(2)}x, bytes ${bytes.toFixed(2)}x`);
} finally {
  await app.close();
  await repo.dispose();
}
