/**
 * Benchmark (not a test): what keying the builder's cache by the secrets offered (docs/secrets.md,
 * The builder's cache keeps the scope) costs a warm build. One repository, one request secret, reuse
 * off, the same builder: the service as it is, against the same service with the keying off (its
 * jobs handed the plan without the identity: the cache shared by all). Each side warmed once, then runs interleaved; every
 * measured build must find the secret-mounting step CACHED. Also: the keying script alone, `node -e 0`.
 *
 *   npm run stack -- up
 *   npm run bench:secret-identity [-- runs=10]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/exec/run.js';
import type { RunningApp } from '../test/helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  ownDockerfileRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
} from '../test/helpers/build-support.js';
import { SECRETS_FIXTURE_DOCKERFILE } from '../test/stack/fixtures.js';
import { IDENTITY_ARG, KEYED_DOCKERFILE_SCRIPT } from '../workers/builder/docker-wrapper.js';
import { runJob } from '../workers/job/job-flow.js';
import type { BuildJobRunner } from '../workers/build-worker.js';

const runs = Number(/^runs=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 10);
const secret = `//npm.example.com/:_authToken=bench-${randomBytes(8).toString('hex')}\n`;

function secretStepCached(log: string): boolean {
  const stamp = '(?:\\[[^\\]]*\\] )?';
  const step = new RegExp(`^${stamp}#(\\d+) \\[[^\\]]*\\] RUN --mount=type=secret`, 'm').exec(log)?.[1];
  return step !== undefined && new RegExp(`^${stamp}#${step} CACHED$`, 'm').test(log);
}

/** One build's answer time; throws unless it succeeded (and, when `warm`, its secret step was CACHED). */
async function build(app: RunningApp, repository: string, warm: boolean): Promise<number> {
  const started = performance.now();
  const res = await postBuild(app, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('bench-secret-identity') },
    buildSecrets: { npmrc: secret },
  });
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`build: ${res.status} ${JSON.stringify(res.body)}`);
  if (warm && !secretStepCached((await fetchLog(app, res.body.imageBuildLogId)).text))
    throw new Error('a measured build ran its secret step: not a warm build');
  return ms;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/** `node -e 0` in the same way: what any node process costs here now. */
async function bareNodeMs(): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run(process.execPath, ['-e', '0'], { baseEnv: {} });
    times.push(performance.now() - started);
  }
  return times;
}

/** The keying script alone, on the fixture's Dockerfile: a node start, a read and a write. */
async function keyerMs(): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-keyer-'));
  const dockerfile = join(dir, 'Dockerfile');
  await writeFile(dockerfile, SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, 'bench'));
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run(process.execPath, [KEYED_DOCKERFILE_SCRIPT, dockerfile, IDENTITY_ARG], {
      baseEnv: { TMPDIR: dir },
      captureStdout: true,
    });
    times.push(performance.now() - started);
  }
  await rm(dir, { recursive: true, force: true });
  return times;
}

const repo = ownDockerfileRepo(
  SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
);
const keyed = await startBuildApp();
// The baseline: the same worker, its jobs handed the plan without the secrets' identity.
const unkeyedJob: BuildJobRunner = (plan, deps, signal, reporter, reuse) => {
  const { secretsIdentity: _dropped, ...unkeyedPlan } = plan;
  return runJob(unkeyedPlan, deps, signal, reporter, reuse);
};
const unkeyed = await startBuildApp({}, { app: { build: { runJob: unkeyedJob } } });
try {
  await build(keyed, repo.repository, false);
  await build(unkeyed, repo.repository, false);
  const times = { keyed: [] as number[], unkeyed: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const [first, second] = i % 2 === 0 ? (['keyed', 'unkeyed'] as const) : (['unkeyed', 'keyed'] as const);
    times[first].push(await build(first === 'keyed' ? keyed : unkeyed, repo.repository, true));
    times[second].push(await build(second === 'keyed' ? keyed : unkeyed, repo.repository, true));
  }
  const [k, u] = [median(times.keyed), median(times.unkeyed)];
  console.log(`warm build with a secret, ${runs} runs each, interleaved, secret step CACHED in every one`);
  console.log(`  keyed (the service)      median ${k.toFixed(0)} ms`);
  console.log(`  unkeyed (keying off)     median ${u.toFixed(0)} ms`);
  console.log(`  difference               ${(k - u).toFixed(0)} ms (${((100 * (k - u)) / u).toFixed(1)} %)`);
  console.log(`  keying script alone      median ${median(await keyerMs()).toFixed(0)} ms`);
  console.log(`  node -e 0, for scale     median ${median(await bareNodeMs()).toFixed(0)} ms`);
} finally {
  await keyed.close();
  await unkeyed.close();
  repo.remove();
}
