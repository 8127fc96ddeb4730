/**
 * Benchmark (not a test): where a user waits on the reuse path, on the real stack. Three answers
 * for the same dev container (an image and a local feature), medians of 15 each:
 *   - a warm build, reuse off (a new commit each time; BuildKit's cache warm),
 *   - a new commit whose inputs did not change (reuse on: its trees, the key, a relabelled tag),
 *   - an unchanged commit (reuse on: answered from the record of that commit, no clone).
 * Each with the median of every stage of its build record's `stages` (GET /builds), and its
 * ratio to the warm build. Targets: new commit <= 0.05x, unchanged commit <= 0.03x.
 *
 *   npm run stack -- up
 *   npm run bench:reuse [-- runs=15]
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import type { RunningApp } from '../test/helpers/app.js';
import { startBuildApp } from '../test/helpers/build-support.js';
import { testRepo } from '../test/helpers/reuse-support.js';
import { stackEnv } from '../test/stack/env.js';

const stack = stackEnv();
const RUNS = Number(/^runs=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 15);
const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

const definition = {
  '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON, features: { './tool': {} } }),
  '.devcontainer/tool/devcontainer-feature.json': json({ id: 'tool', version: '1.0.0' }),
  '.devcontainer/tool/install.sh': '#!/bin/sh\nset -e\necho tool > /etc/tool\n',
  'README.md': '# reuse bench\n',
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};

interface Answer {
  readonly ms: number;
  /** Stage name -> seconds, from the build record's `stages` (GET /builds?requestId=). */
  readonly stages: ReadonlyMap<string, number>;
  readonly log: string;
}

/** The stages of the build a request started, from its record. */
async function stagesOf(app: RunningApp, requestId: string): Promise<Map<string, number>> {
  const listed = (await (await fetch(`${app.url}/builds?requestId=${requestId}`)).json()) as {
    builds: Array<{ stages?: Array<{ name: string; durationMs: number }> }>;
  };
  const out = new Map<string, number>();
  for (const stage of listed.builds[0]?.stages ?? [])
    out.set(stage.name, (out.get(stage.name) ?? 0) + stage.durationMs / 1000);
  return out;
}

let requests = 0;

async function post(app: RunningApp, body: unknown): Promise<Answer> {
  const requestId = `bench-reuse-${run}-${++requests}`;
  const started = performance.now();
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify(body),
  });
  const ms = performance.now() - started;
  const out = (await res.json()) as Record<string, unknown>;
  const logId = String(out.imageBuildLogId ?? out.logId);
  const log = await (await fetch(`${app.url}/logs/${logId}`)).text();
  if (res.status !== 200)
    throw new Error(`POST /build answered ${res.status}: ${JSON.stringify(out)}\n${log}`);
  return { ms, stages: await stagesOf(app, requestId), log };
}

interface Series {
  readonly label: string;
  readonly answers: Answer[];
}

/** `runs` answers of one kind; `before` runs (unmeasured) before each. */
async function series(
  label: string,
  runs: number,
  answer: (i: number) => Promise<Answer>,
  check: (a: Answer) => boolean,
): Promise<Series> {
  const answers: Answer[] = [];
  for (let i = 0; i < runs; i++) {
    const a = await answer(i);
    if (!check(a)) throw new Error(`${label}: an answer took another path:\n${a.log}`);
    answers.push(a);
  }
  return { label, answers };
}

function report(s: Series, warmMs: number): string {
  const ms = median(s.answers.map((a) => a.ms));
  const names = [...new Set(s.answers.flatMap((a) => [...a.stages.keys()]))];
  const stages = names
    .map((n) => `${n} ${(median(s.answers.map((a) => a.stages.get(n) ?? 0)) * 1000).toFixed(1)} ms`)
    .join(', ');
  return `${s.label.padEnd(34)} ${(ms / 1000).toFixed(3)} s  ${(ms / warmMs).toFixed(3)}x\n    stages (medians): ${stages}`;
}

const run = randomBytes(3).toString('hex');
const startLoad = loadavg();
const off = await startBuildApp({ logs: { retention: 1000 }, build: { reuse: false } });
const on = await startBuildApp({ logs: { retention: 1000 }, build: { reuse: true } });
const repo = await testRepo('bench-reuse');
try {
  await repo.commit(definition);
  const bodyOf = (mode: string) => ({
    repository: repo.url,
    gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    image: { registry: stack.REGISTRY_ANON, name: `bench/reuse-${run}-${mode}` },
  });
  const built = (a: Answer): boolean => a.log.includes('devcontainer build');
  // Warm-ups: BuildKit's cache, and the first keyed build (the key's tag, the blobs the key reads).
  await post(off, bodyOf('off'));
  await post(on, bodyOf('on'));
  await repo.commit({ 'src/app.txt': 'warm-up\n' });
  await post(on, bodyOf('on'));

  const warm = await series(
    'warm build (reuse off)',
    RUNS,
    async (i) => {
      await repo.commit({ 'src/app.txt': `warm ${i}\n` });
      return post(off, bodyOf('off'));
    },
    built,
  );
  const newCommit = await series(
    'new commit, inputs unchanged',
    RUNS,
    async (i) => {
      await repo.commit({ 'src/app.txt': `new ${i}\n` });
      return post(on, bodyOf('on'));
    },
    (a) => !built(a) && /inputs unchanged since/.test(a.log),
  );
  const unchanged = await series(
    'unchanged commit',
    RUNS,
    () => post(on, bodyOf('on')),
    (a) => /reused, no build, no clone/.test(a.log),
  );
  const warmMs = median(warm.answers.map((a) => a.ms));
  const load = (when: string, avg: number[]): string => `${when} ${avg.map((l) => l.toFixed(2)).join(' ')}`;
  console.log(
    `${cpus().length} cores; load average (1, 5, 15 min): ${load('at the start', startLoad)}, ${load('at the end', loadavg())}`,
  );
  console.log(`reuse answers, medians of ${RUNS} (POST /build wall time; ratio to the warm build):`);
  for (const s of [warm, newCommit, unchanged]) console.log(report(s, warmMs));
  const ratio = (s: Series): number => median(s.answers.map((a) => a.ms)) / warmMs;
  console.log(
    `targets: new commit <= 0.05x: ${ratio(newCommit).toFixed(3)}x ${ratio(newCommit) <= 0.05 ? 'OK' : 'MISSED'}; ` +
      `unchanged commit <= 0.03x: ${ratio(unchanged).toFixed(3)}x ${ratio(unchanged) <= 0.03 ? 'OK' : 'MISSED'}`,
  );
} finally {
  await Promise.all([off.close(), on.close()]);
  await repo.dispose();
}
