// The finished builds the page benchmarks fill a build registry with (bench/ui.ts in process,
// bench/builds-page-side.ts in a checkout's own process): teams, repositories and branches spread
// as a busy service's are, one in nine failed.
import type { BuildRegistry } from '../src/builds/types.js';

/** The registry calls it takes: those of this tree's registry or of a checkout's (the baseline's). */
type Writes = Pick<BuildRegistry, 'start' | 'update' | 'finish'>;

/** Writes build `i`, finished: team `i % 7`, repository `i % 40`; one in nine failed. */
export async function finishedBuild(builds: Writes, i: number): Promise<void> {
  const id = await builds.start({
    requestId: `bench-${i}`,
    repository: `https://git.example.com/team-${i % 7}/app-${i % 40}.git`,
    branch: i % 3 === 0 ? 'main' : `feature/${i}`,
    image: `registry.example.com/team-${i % 7}/app-${i % 40}`,
  });
  await builds.update(id, { phase: 'building', commit: `${i}`.padStart(40, 'c') });
  await builds.finish(id, {
    status: i % 9 === 0 ? 'failure' : 'success',
    durationSeconds: 20 + (i % 50),
    ...(i % 9 === 0 ? { error: 'the build failed' } : { image: `registry.example.com/app:${i}` }),
  });
}
