/**
 * Benchmark (not a test): a realistic CI day replayed against the service on the real stack,
 * once with build reuse off and once with it on (fresh repositories and image names per mode).
 *
 *   npm run stack -- up
 *   npm run bench:ci-day
 *
 * The day: 4 repositories (image + local feature, Dockerfile with a context folder, image + OCI
 * feature, root .devcontainer.json), 40 pushes in waves of 4 (one per repository, sent at
 * once), most touching only application code, some the dev container; every 5th push is sent
 * by 3 pipelines at once (identical requests). A 429 is retried after 1 s, as a CI would
 * (counted; times are those of the admitted attempt). Printed per mode: CLI runs, total build seconds,
 * 429 answers, p50/p95 answer times, and the p50 of answers for pushes that left the inputs alone.
 * Build seconds: the wall time of the answers that ran the CLI, once per build.
 * Targets (reuse on): CLI runs = distinct input sets; p50 of unchanged-input answers <= 0.5 s;
 * total build seconds >= 5x lower than with reuse off.
 * Then the reuse answer by supply-chain mode (docs/supply-chain.md), the three interleaved push by
 * push: attestations not re-issued (provenance off), re-issued (min), re-issued and signed.
 * Targets: re-issued within 20 ms of off, signed within 50 ms (medians). `-- --supply-chain`
 * runs that part alone.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSigningKey } from '../src/config/signing-key.js';
import type { SigningKey } from '../src/config/types.js';
import type { RunningApp } from '../test/helpers/app.js';
import { startBuildApp } from '../test/helpers/build-support.js';
import { publishFeature, testRepo, type TestRepo } from '../test/helpers/reuse-support.js';
import { stackEnv } from '../test/stack/env.js';
import { sampleValue, scrapeMetrics } from '../test/helpers/metrics.js';

const stack = stackEnv();
const PUSHES = 40;
const REPOS = 4;
const BURST_EVERY = 5;
const BURST_SIZE = 3;
/** The pushes that change the dev container (one per repository); the others change application code. */
const TOUCHES = new Set([5, 14, 24, 31]);
const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

interface DayRepo {
  readonly label: string;
  readonly repo: TestRepo;
  /** The files of the dev container at version `v`. */
  readonly devcontainer: (v: number) => Record<string, string>;
}

async function repositories(mode: string, feature: string): Promise<DayRepo[]> {
  const base = stack.BASE_IMAGE_ANON;
  const make = async (label: string, devcontainer: (v: number) => Record<string, string>) => ({
    label,
    repo: await testRepo(`day-${mode}-${label}`),
    devcontainer,
  });
  return Promise.all([
    make('local-feature', (v) => ({
      '.devcontainer/devcontainer.json': json({ image: base, features: { './tool': {} } }),
      '.devcontainer/tool/devcontainer-feature.json': json({ id: 'tool', version: '1.0.0' }),
      '.devcontainer/tool/install.sh': `#!/bin/sh\nset -e\necho tool ${v} > /etc/tool\n`,
    })),
    make('dockerfile', (v) => ({
      '.devcontainer/devcontainer.json': json({ build: { dockerfile: 'Dockerfile', context: 'ctx' } }),
      '.devcontainer/Dockerfile': `FROM ${base}\nCOPY setup.txt /setup.txt\nRUN echo dockerfile ${v} > /etc/df\n`,
      '.devcontainer/ctx/setup.txt': 'setup\n',
    })),
    make('oci-feature', (v) => ({
      '.devcontainer/devcontainer.json': json({
        image: base,
        features: { [feature]: {} },
        containerEnv: { V: String(v) },
      }),
    })),
    make('root-config', (v) => ({
      '.devcontainer.json': json({ image: base, remoteEnv: { V: String(v) } }),
    })),
  ]);
}

interface Answer {
  ms: number;
  unchangedInputs: boolean;
  logId: string;
  /** `<repository index>:<dev container version>`: the input set. */
  inputSet: string;
}

/**
 * One pipeline's POST /build: 429 retried after 1 s; the log id of a 200 and the time of that
 * (admitted) attempt, or undefined for a failure.
 */
async function post(
  app: RunningApp,
  body: unknown,
  counters: { busy: number; failed: string[] },
): Promise<{ logId: string; ms: number } | undefined> {
  for (;;) {
    const started = performance.now();
    const res = await fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const out = (await res.json()) as Record<string, unknown>;
    if (res.status === 429) {
      counters.busy += 1;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (res.status === 200) return { logId: String(out.imageBuildLogId), ms: performance.now() - started };
    const log =
      typeof out.logId === 'string' ? await (await fetch(`${app.url}/logs/${out.logId}`)).text() : '';
    counters.failed.push(
      `${res.status} ${/ERROR: [^\n]*/.exec(log)?.[0] ?? String(out.error).slice(0, 200)}`,
    );
    return undefined;
  }
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleValue(await scrapeMetrics(url), name, labels) ?? 0;
}

async function day(reuse: boolean, feature: string) {
  const mode = reuse ? 'on' : 'off';
  // The service as the integration tests configure it (the stack's builder, registries and git CA).
  const app = await startBuildApp({ logs: { retention: 1000 }, build: { maxConcurrent: 4, reuse } });
  const repos = await repositories(mode, feature);
  const run = randomBytes(3).toString('hex');
  const versions = repos.map(() => 1);
  const inputSets = new Set<string>();
  const counters = { busy: 0, failed: [] as string[] };
  const answers: Answer[] = [];
  try {
    // The initial commit of each repository: its dev container at version 1.
    for (const [i, r] of repos.entries()) {
      await r.repo.commit({ ...r.devcontainer(1), 'README.md': `# ${r.label}\n`, 'src/main.txt': 'v0\n' });
      inputSets.add(`${i}:1`);
    }
    for (let wave = 0; wave < PUSHES / REPOS; wave++) {
      const sends: Promise<void>[] = [];
      for (const [i, r] of repos.entries()) {
        const push = wave * REPOS + i;
        const touches = TOUCHES.has(push);
        if (touches) versions[i] = (versions[i] ?? 1) + 1;
        const v = versions[i] ?? 1;
        inputSets.add(`${i}:${v}`);
        await r.repo.commit(
          touches ? r.devcontainer(v) : { 'src/main.txt': `push ${push}\n` },
          touches ? `dev container v${v}` : `app change ${push}`,
        );
        const body = {
          repository: r.repo.url,
          gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
          image: { registry: stack.REGISTRY_ANON, name: `bench/day-${run}-${r.label}` },
        };
        const pipelines = push % BURST_EVERY === 0 ? BURST_SIZE : 1;
        for (let p = 0; p < pipelines; p++) {
          sends.push(
            (async () => {
              const answer = await post(app, body, counters);
              if (answer === undefined) return;
              answers.push({
                ms: answer.ms,
                unchangedInputs: !touches && wave > 0,
                logId: answer.logId,
                inputSet: `${i}:${v}`,
              });
            })(),
          );
        }
      }
      await Promise.all(sends);
    }
    // A build is an img log with the CLI's command line; its time is the longest answer it gave.
    const builds = new Map<string, { seconds: number; inputSet: string }>();
    for (const a of answers) {
      const known = builds.get(a.logId);
      if (known !== undefined) {
        known.seconds = Math.max(known.seconds, a.ms / 1000);
        continue;
      }
      const text = await (await fetch(`${app.url}/logs/${a.logId}`)).text();
      if (text.includes('devcontainer build'))
        builds.set(a.logId, { seconds: a.ms / 1000, inputSet: a.inputSet });
    }
    const cliRuns = builds.size;
    const builtSets = new Set([...builds.values()].map((b) => b.inputSet));
    const unbuilt = [...inputSets].filter((set) => !builtSets.has(set));
    const all = answers.map((a) => a.ms / 1000);
    const unchanged = answers.filter((a) => a.unchangedInputs).map((a) => a.ms / 1000);
    return {
      mode,
      requests: answers.length + counters.failed.length,
      distinctInputSets: inputSets.size,
      cliRuns,
      buildSeconds: [...builds.values()].reduce((sum, b) => sum + b.seconds, 0),
      answerSeconds: await metric(app.url, 'service_build_duration_seconds_sum', { status: 'success' }),
      unbuilt,
      busy429: counters.busy,
      failed: counters.failed,
      p50: quantile(all, 0.5),
      p95: quantile(all, 0.95),
      unchangedP50: quantile(unchanged, 0.5),
      reuses: await metric(app.url, 'service_build_reuses_total'),
      followed: await metric(app.url, 'service_builds_coalesced_total'),
    };
  } finally {
    await app.close();
    await Promise.all(repos.map((r) => r.repo.dispose()));
  }
}

const namespace = `bench/ci-day-${randomBytes(3).toString('hex')}`;
await publishFeature(stack.REGISTRY_ANON, namespace, 'greet', '1.0.0', 'echo greet > /etc/greet');
const feature = `${stack.REGISTRY_ANON}/${namespace}/greet:1`;

/** `npm run bench:ci-day -- --supply-chain`: only the reuse answers by supply-chain mode. */
const supplyChainOnly = process.argv.includes('--supply-chain');
const results = [];
for (const reuse of supplyChainOnly ? [] : [false, true]) {
  const r = await day(reuse, feature);
  results.push(r);
  console.log(
    `reuse ${r.mode.padEnd(3)}: ${r.requests} requests, ${r.distinctInputSets} distinct input sets, ` +
      `${r.cliRuns} CLI runs, ${r.buildSeconds.toFixed(1)} build s (${r.answerSeconds.toFixed(1)} s answering), ` +
      `${r.busy429} x 429, ` +
      `p50 ${r.p50.toFixed(2)} s, p95 ${r.p95.toFixed(2)} s, unchanged-input p50 ${r.unchangedP50.toFixed(2)} s, ` +
      `${r.reuses} reuses, ${r.followed} followed` +
      (r.unbuilt.length > 0 ? `; input sets answered without a CLI run: ${r.unbuilt.join(', ')}` : '') +
      (r.failed.length > 0
        ? `\n  ${r.failed.length} failed answers: ${[...new Set(r.failed)].join('; ')}`
        : ''),
  );
}
const [off, on] = results;
if (off && on) {
  const ratio = off.buildSeconds / on.buildSeconds;
  console.log(
    `targets: CLI runs (on) = distinct input sets: ${on.cliRuns} vs ${on.distinctInputSets} ${on.cliRuns === on.distinctInputSets ? 'OK' : 'MISSED'}; ` +
      `unchanged-input p50 <= 0.5 s: ${on.unchangedP50.toFixed(2)} s ${on.unchangedP50 <= 0.5 ? 'OK' : 'MISSED'}; ` +
      `build time ${ratio.toFixed(1)}x lower ${ratio >= 5 ? 'OK' : 'MISSED'}`,
  );
}

const REUSE_PUSHES = 15;
const NAMES: Record<string, string> = {
  'not re-issued (provenance off)': 'off',
  're-issued (min)': 'min',
  're-issued and signed': 'signed',
};

/** A P-256 key loaded as the service loads it. */
async function signingKey(): Promise<SigningKey> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-bench-key-'));
  try {
    const path = join(dir, 'cosign.key');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const key = loadSigningKey(path, undefined);
    if (typeof key === 'string') throw new Error(key);
    return key;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Median reuse answer (ms) of each supply-chain mode, the modes interleaved push by push. */
async function reuseAnswers(): Promise<Record<string, number>> {
  const signing = await signingKey();
  const modes = {
    'not re-issued (provenance off)': await startBuildApp({ build: { reuse: true, provenance: 'off' } }),
    're-issued (min)': await startBuildApp({ build: { reuse: true, provenance: 'min' } }),
    're-issued and signed': await startBuildApp({ build: { reuse: true, provenance: 'min' }, signing }),
  };
  const repo = await testRepo('supply-bench');
  const run = randomBytes(3).toString('hex');
  const times: Record<string, number[]> = {};
  const counters = { busy: 0, failed: [] as string[] };
  try {
    await repo.commit({
      '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON }),
      'a.txt': '0',
    });
    const bodyOf = (label: string) => ({
      repository: repo.url,
      gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
      image: { registry: stack.REGISTRY_ANON, name: `bench/supply-${run}-${NAMES[label] ?? 'x'}` },
    });
    // Each mode builds its own image once (with its own provenance mode): the source of its reuses.
    for (const [label, app] of Object.entries(modes)) await post(app, bodyOf(label), counters);
    for (let push = 1; push <= REUSE_PUSHES; push++) {
      await repo.commit({ 'a.txt': String(push) });
      const order = Object.entries(modes);
      for (let i = 0; i < order.length; i++) {
        const [label, app] = order[(push + i) % order.length] ?? order[0]!;
        const answer = await post(app, bodyOf(label), counters);
        if (answer !== undefined && push > 1) (times[label] ??= []).push(answer.ms);
      }
    }
    if (counters.failed.length > 0) console.log(`  failed answers: ${counters.failed.join('; ')}`);
    return Object.fromEntries(Object.entries(times).map(([label, ms]) => [label, quantile(ms, 0.5)]));
  } finally {
    await Promise.all(Object.values(modes).map((app) => app.close()));
    await repo.dispose();
  }
}

const medians = await reuseAnswers();
const base = medians['not re-issued (provenance off)'] ?? NaN;
const line = Object.entries(medians)
  .map(
    ([label, ms]) => `${label} ${ms.toFixed(1)} ms (${ms - base >= 0 ? '+' : ''}${(ms - base).toFixed(1)})`,
  )
  .join(', ');
console.log(`reuse answer p50 over ${REUSE_PUSHES - 1} pushes: ${line}`);
const reissued = (medians['re-issued (min)'] ?? NaN) - base;
const signed = (medians['re-issued and signed'] ?? NaN) - base;
console.log(
  `targets: re-issued within 20 ms: +${reissued.toFixed(1)} ms ${reissued <= 20 ? 'OK' : 'MISSED'}; ` +
    `signed within 50 ms: +${signed.toFixed(1)} ms ${signed <= 50 ? 'OK' : 'MISSED'}`,
);
