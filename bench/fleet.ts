/**
 * Benchmark (not a test), docs/fleet.md. Placement: N repositories built twice (reuse off) by one
 * service placing them on two BuildKits, against random placement over two one-builder services;
 * a second build is cached when it lands where the first ran. Platforms: two-platform builds split
 * over two builders (a declares linux/amd64, b linux/386) against one builder doing both.
 *   npm run bench:fleet [-- repos=8] [case=placement|platforms]   (stack up; both cases by default)
 */
import type { RunningApp } from '../test/helpers/app.js';
import { platformsCase } from './fleet-platforms.js';
import {
  fetchLog,
  httpsCreds,
  ownDockerfileRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
} from '../test/helpers/build-support.js';

const arg = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .map((a) => new RegExp(`^${name}=(.+)$`).exec(a)?.[1])
    .find((v) => v !== undefined);
const repoCount = Number(arg('repos') ?? 8);
const cases = arg('case') === undefined ? ['placement', 'platforms'] : [arg('case')];
const runId = `${Date.now()}`;

interface Outcome {
  cached: boolean;
  ms: number;
}

/** A repository whose Dockerfile has a RUN step no other repository (or earlier run) shares. */
const uniqueRepo = (label: string): { repository: string; remove: () => void } =>
  ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${label}-${runId} > /fleet && sleep 1\n`);

/** BuildKit's progress prints `#<n> [k/m] RUN echo ...` and, on a hit, `#<n> CACHED`. */
function runStepCached(log: string): boolean {
  const step = /^#(\d+) \[[^\]]*\] RUN echo /m.exec(log)?.[1];
  return step !== undefined && new RegExp(`^#${step} CACHED$`, 'm').test(log);
}

async function build(app: RunningApp, repository: string): Promise<Outcome> {
  const started = performance.now();
  const res = await postBuild(app, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('bench-fleet') },
  });
  const ms = performance.now() - started;
  if (res.status !== 200)
    throw new Error(`build of ${repository}: ${res.status} ${JSON.stringify(res.body)}`);
  const log = await fetchLog(app, res.body.imageBuildLogId);
  return { cached: runStepCached(log.text), ms };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

function report(mode: string, first: Outcome[], second: Outcome[]): void {
  const hits = second.filter((o) => o.cached).length;
  const share = ((100 * hits) / second.length).toFixed(1);
  const firstMs = median(first.map((o) => o.ms)).toFixed(0);
  const secondMs = median(second.map((o) => o.ms)).toFixed(0);
  console.log(
    `${mode.padEnd(9)} second pass cached ${hits}/${second.length} (${share} %); ` +
      `median answer: first ${firstMs} ms, second ${secondMs} ms`,
  );
}

async function placementCase(): Promise<void> {
  const endpoints = [stack.BUILDER_A_ENDPOINT, stack.BUILDER_B_ENDPOINT];
  const placed = await startBuildApp({ builderEndpoints: endpoints });
  const singles = [
    await startBuildApp({ builderEndpoints: [endpoints[0] ?? ''] }),
    await startBuildApp({ builderEndpoints: [endpoints[1] ?? ''] }),
  ];
  const randomApp = (): RunningApp => singles[Math.random() < 0.5 ? 0 : 1] as RunningApp;
  const repos = Array.from({ length: repoCount }, (_, i) => ({
    placed: uniqueRepo(`placed-${i}`),
    random: uniqueRepo(`random-${i}`),
  }));
  const runs = { placed: [[], []] as Outcome[][], random: [[], []] as Outcome[][] };
  try {
    console.log(`bench:fleet: ${repoCount} repositories per mode, each built twice, reuse off`);
    // The two modes alternate build by build, so drift on the machine hits both alike.
    for (const pass of [0, 1] as const) {
      for (const repo of repos) {
        runs.placed[pass]?.push(await build(placed, repo.placed.repository));
        runs.random[pass]?.push(await build(randomApp(), repo.random.repository));
      }
    }
    report('placement', runs.placed[0] ?? [], runs.placed[1] ?? []);
    report('random', runs.random[0] ?? [], runs.random[1] ?? []);
  } finally {
    for (const repo of repos) {
      repo.placed.remove();
      repo.random.remove();
    }
    await Promise.all([placed, ...singles].map((app) => app.close()));
  }
}

if (cases.includes('placement')) await placementCase();
if (cases.includes('platforms')) await platformsCase(repoCount);
