/**
 * The two-platform case of bench:fleet (docs/fleet.md): each repository's linux/amd64,linux/386
 * build split over two builders (a declares amd64, b 386: a buildx builder with a node each) against
 * one builder doing both, alternating build by build, twice with reuse off; a second build is
 * cached when both platforms' RUN steps are CACHED.
 */
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

const PLATFORMS = ['linux/amd64', 'linux/386'];
const runId = `${Date.now()}`;

interface Outcome {
  cachedPlatforms: number;
  ms: number;
  /** The img log's lines of the RUN steps, kept to show a miss. */
  runLines: string[];
}

/** A RUN step no other build shares, busy on the CPU for a while. */
const uniqueRepo = (label: string): { repository: string; remove: () => void } =>
  ownDockerfileRepo(
    `FROM ${stack.BASE_IMAGE_ANON}\n` +
      `RUN echo ${label}-${runId} > /fleet && i=0 && while [ $i -lt 300000 ]; do i=$((i+1)); done\n`,
  );

function cachedPlatforms(log: string): number {
  return PLATFORMS.filter((platform) => {
    const step = new RegExp(`^#(\\d+) \\[${platform}[^\\]]*\\] RUN echo `, 'm').exec(log)?.[1];
    return step !== undefined && new RegExp(`^#${step} CACHED$`, 'm').test(log);
  }).length;
}

async function build(app: RunningApp, repository: string): Promise<Outcome> {
  const started = performance.now();
  const res = await postBuild(app, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('bench-platforms') },
    platforms: PLATFORMS,
  });
  const ms = performance.now() - started;
  if (res.status !== 200)
    throw new Error(`build of ${repository}: ${res.status} ${JSON.stringify(res.body)}`);
  const log = (await fetchLog(app, res.body.imageBuildLogId)).text;
  const runLines = log.split('\n').filter((l) => /RUN echo|CACHED|^# platform/.test(l));
  return { cachedPlatforms: cachedPlatforms(log), ms, runLines };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

function report(mode: string, first: Outcome[], second: Outcome[]): void {
  const hits = second.filter((o) => o.cachedPlatforms === PLATFORMS.length).length;
  for (const miss of second.filter((o) => o.cachedPlatforms < PLATFORMS.length)) {
    console.log(
      `  ${mode}: a second build not cached on every platform:\n    ${miss.runLines.join('\n    ')}`,
    );
  }
  const total = first.reduce((sum, o) => sum + o.ms, 0) / 1000;
  console.log(
    `${mode.padEnd(12)} first pass: median ${median(first.map((o) => o.ms)).toFixed(0)} ms, ` +
      `total ${total.toFixed(1)} s; second pass: median ${median(second.map((o) => o.ms)).toFixed(0)} ms, ` +
      `both platforms cached ${hits}/${second.length}`,
  );
}

export async function platformsCase(repoCount: number): Promise<void> {
  const [a, b] = [stack.BUILDER_A_ENDPOINT, stack.BUILDER_B_ENDPOINT];
  const split = await startBuildApp({
    builderEndpoints: [a, b],
    builders: [
      { endpoint: a, platforms: ['linux/amd64'] },
      { endpoint: b, platforms: ['linux/386'] },
    ],
  });
  const single = await startBuildApp({ builderEndpoints: [a] });
  const repos = Array.from({ length: repoCount }, (_, i) => ({
    split: uniqueRepo(`split-${i}`),
    single: uniqueRepo(`single-${i}`),
  }));
  const runs = { split: [[], []] as Outcome[][], single: [[], []] as Outcome[][] };
  try {
    console.log(
      `bench:fleet platforms: ${repoCount} repositories per mode, ${PLATFORMS.join(',')}, twice, reuse off`,
    );
    for (const pass of [0, 1] as const) {
      for (const repo of repos) {
        runs.split[pass]?.push(await build(split, repo.split.repository));
        runs.single[pass]?.push(await build(single, repo.single.repository));
      }
    }
    report('split (a+b)', runs.split[0] ?? [], runs.split[1] ?? []);
    report('one builder', runs.single[0] ?? [], runs.single[1] ?? []);
  } finally {
    for (const repo of repos) {
      repo.split.remove();
      repo.single.remove();
    }
    await Promise.all([split.close(), single.close()]);
  }
}
