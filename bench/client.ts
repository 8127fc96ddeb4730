/**
 * Benchmark (not a test): the end-to-end time of `ibs build` (the built bin, `node
 * dist/src/client/main.js`, following the logs) against `curl` posting the same body, for a warm
 * build: the same repository again with the builder's cache warm (reuse off: the CLI runs, every
 * step CACHED). Also the same for a reuse (reuse on: the tag written through the registry API, no
 * CLI). Both are processes timed from spawn to exit, interleaved (ibs, curl, curl, ibs, ...) after
 * one warm-up each, so drift hits both alike.
 *
 *   npm run stack -- up
 *   npm run bench:client [-- runs=15 fixture=feature]
 *
 * Also timed, interleaved the same way: `node -e 0`, the runtime's own start, which ibs pays and
 * curl does not. Target: ibs's median within 5 % of curl's for the warm build.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, testConfig, type RunningApp } from '../test/helpers/app.js';
import { stackEnv } from '../test/stack/env.js';

const arg = (name: string, fallback: string): string =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`${name}=`))
    ?.slice(name.length + 1) ?? fallback;
const runs = Number(arg('runs', '15'));
const fixture = arg('fixture', 'feature');
const stack = stackEnv();
const basePath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
const scratch = await mkdtemp(join(tmpdir(), 'ibs-bench-client-'));

const startWith = (reuse: boolean) =>
  startApp({
    scratchDir: scratch,
    builderEndpoints: [stack.STACK_BUILDER_ENDPOINT],
    insecureRegistries: [stack.REGISTRY_ANON],
    childEnv: { PATH: basePath, GIT_SSL_CAINFO: stack.GIT_CA_FILE },
    commandLogRetention: 1000,
    build: { ...testConfig({ scratchDir: scratch }).build, reuse },
  });
const apps = { build: await startWith(false), reuse: await startWith(true) };
const repository = `${stack.GIT_HTTPS_URL}/${fixture}.git`;
const name = `bench/client-${fixture}`;
const body = JSON.stringify({
  repository,
  gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
  image: { registry: stack.REGISTRY_ANON, name },
});
// curl reads the body from a file (the token stays out of its argv, as ibs keeps it out of its own).
const bodyFile = join(scratch, 'body.json');
await writeFile(bodyFile, body, { mode: 0o600 });

/** Runs a process to its end: wall milliseconds and stdout. */
function timed(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ ms: number; out: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env: { PATH: basePath, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, out });
      else reject(new Error(`${cmd} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

const ibs = (app: RunningApp) =>
  timed(
    process.execPath,
    [
      'dist/src/client/main.js',
      'build',
      '--server',
      app.url,
      '--repository',
      repository,
      '--registry',
      stack.REGISTRY_ANON,
      '--name',
      name,
    ],
    { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD },
  );
const curl = (app: RunningApp) =>
  timed(
    'curl',
    [
      '-sS',
      '--fail-with-body',
      '-H',
      'content-type: application/json',
      '--data-binary',
      `@${bodyFile}`,
      `${app.url}/build`,
    ],
    {},
  );

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/** One mode: a first build (records the key, warms the cache), a warm-up each, then the runs. */
async function measure(mode: 'build' | 'reuse'): Promise<void> {
  const app = apps[mode];
  const first = await curl(app);
  const firstTag = (JSON.parse(first.out) as { tag: string }).tag;
  await ibs(app);
  await curl(app);
  const times = { ibs: [] as number[], curl: [] as number[], node: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? (['ibs', 'curl', 'node'] as const) : (['node', 'curl', 'ibs'] as const);
    for (const side of order) {
      if (side === 'node') {
        times.node.push((await timed(process.execPath, ['-e', '0'], {})).ms);
        continue;
      }
      const { ms, out } = await (side === 'ibs' ? ibs(app) : curl(app));
      if ((JSON.parse(out) as { tag: string }).tag !== firstTag) throw new Error(`${side}: another tag`);
      times[side].push(ms);
    }
  }
  const [mi, mc, mn] = [median(times.ibs), median(times.curl), median(times.node)];
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  const what = mode === 'build' ? 'warm build (reuse off, cache warm)' : 'reuse (reuse on)';
  console.log(`fixture ${fixture}, ${what}, ${runs} runs each, interleaved`);
  console.log(`  curl      median ${mc.toFixed(0)} ms   (${fmt(times.curl)})`);
  console.log(`  ibs build median ${mi.toFixed(0)} ms   (${fmt(times.ibs)})`);
  console.log(`  node -e 0 median ${mn.toFixed(0)} ms   (${fmt(times.node)})`);
  const target = mode === 'build' ? '; target within 5 %' : '';
  console.log(`  ibs / curl: ${(mi / mc).toFixed(3)} (${(((mi - mc) / mc) * 100).toFixed(1)} %${target})`);
  console.log(`  (ibs less node's own start) / curl: ${((mi - mn) / mc).toFixed(3)}`);
}

try {
  await measure('build');
  await measure('reuse');
} finally {
  await Promise.all([apps.build.close(), apps.reuse.close()]);
  await rm(scratch, { recursive: true, force: true });
}
