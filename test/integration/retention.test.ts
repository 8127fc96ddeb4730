/**
 * Image retention on the real stack: real builds and reuses (5 on main, one of them under a tag
 * the request named, 3 on feature-x) in a repository of this test's own on the anonymous registry,
 * signed; the plan, runs in delete mode, the served rule, the reuse that must survive; a copy in
 * a registry of the test's own, garbage-collected; a registry with delete off; two replicas
 * sharing one Redis of their own.
 */
import test, { type ExecutionContext } from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import type { RunningApp } from '../helpers/app.js';
import {
  allRegistries,
  fetchLog,
  httpsCreds,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildOverrides,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver } from '../helpers/event-receiver.js';
import { metricValue } from '../helpers/metrics.js';
import { startOwnRegistry } from '../helpers/own-registry.js';
import { startRedis } from '../helpers/redis-process.js';
import { replicaEnv, startReplicas, stopReplicas } from '../helpers/replicas.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';
import {
  keyedDefinition,
  manifestOf,
  reachable,
  registryTags,
  tagDigests,
} from '../helpers/retention-support.js';
import { loadSigningKey } from '../../src/config/signing-key.js';
import type { RetentionSettings } from '../../src/config/types.js';
import type { ImageAnswer, RetentionAnswer } from '../../src/retention/answer.js';
import { IMAGE_DELETED } from '../../src/rules/event-types.js';
import { RETENTION_LOCK } from '../../src/redis/keys.js';

/** 90 seconds, in days: builds a few minutes old are older, a read just before a run is younger. */
const SHORT_DAYS = 90 / 86_400;

interface Built {
  readonly repo: PushedRepo;
  readonly registry: string;
  readonly name: string;
  /** Tags in build order: main c1..c5 (c2 is `release-1`), then feature-x f1..f3. */
  readonly main: string[];
  readonly feature: string[];
  readonly key: string;
}

const retention = (settings: Partial<RetentionSettings>): BuildOverrides => ({
  retention: {
    mode: 'delete',
    keepPerBranch: 2,
    keepServedDays: 0,
    keepTags: [],
    intervalMinutes: 60,
    repositories: [],
    ...settings,
  },
});

let builder: RunningApp;
let signed: Built;
let nodelete: Built;
const cleanups: Array<() => Promise<void>> = [];

async function signingKey() {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-retention-key-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const path = join(dir, 'cosign.key');
  await writeFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const key = loadSigningKey(path, undefined);
  if (typeof key === 'string') throw new Error(key);
  return key;
}

async function build(
  app: RunningApp,
  repo: PushedRepo,
  registry: string,
  name: string,
  branch: string,
  tag?: string,
) {
  const res = await postBuild(app, {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    branch,
    image: { registry, name, ...(tag === undefined ? {} : { tag }) },
  });
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.logId);
    throw new Error(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  }
  return res.body;
}

/** Builds `mainCount` commits on main (the second under `namedTag` when given) and `featureCount` on feature-x. */
async function buildHistory(registry: string, label: string, counts: [number, number], namedTag?: string) {
  const repo = await pushedRepo(label);
  cleanups.push(repo.dispose);
  const name = uniqueName(label);
  const main: string[] = [];
  const feature: string[] = [];
  let key = '';
  for (let i = 1; i <= counts[0]; i += 1) {
    await repo.push(
      'main',
      i === 1 ? { ...keyedDefinition(), 'README.md': 'one\n' } : { 'README.md': `${i}\n` },
    );
    const tag = i === 2 ? namedTag : undefined;
    const body = await build(builder, repo, registry, name, 'main', tag);
    main.push(String(body.tag));
    if (i === 1) key = (await registryTags(registry, name)).find((t) => t.startsWith('build-key-')) ?? '';
  }
  for (let i = 1; i <= counts[1]; i += 1) {
    await repo.push('feature-x', { 'FEATURE.md': `${i}\n` });
    feature.push(String((await build(builder, repo, registry, name, 'feature-x')).tag));
  }
  return { repo, registry, name, main, feature, key };
}

test.before(async () => {
  builder = await startBuildApp({ build: { reuse: true }, signing: await signingKey(), ...retention({}) });
  cleanups.push(builder.close);
  signed = await buildHistory(stack.REGISTRY_ANON, 'retention', [5, 3], 'release-1');
  nodelete = await buildHistory(stack.REGISTRY_NODELETE, 'retention-nodelete', [2, 0]);
});

test.after.always(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function app(t: ExecutionContext, overrides: BuildOverrides): Promise<RunningApp> {
  const started = await startBuildApp({ build: { reuse: true }, ...overrides });
  t.teardown(started.close);
  return started;
}

async function getJson<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

const imagesOf = (answer: RetentionAnswer, built: Built): Map<string, ImageAnswer> => {
  const repo = answer.repositories.find((r) => r.repository === `${built.registry}/${built.name}`);
  return new Map((repo?.images ?? []).map((image) => [image.tag, image]));
};

const repositoryOf = (built: Built): string => `${built.registry}/${built.name}`;

test.serial(
  'the plan keeps the newest 2 per branch, deletes the rest with key and signature tags, changes nothing',
  async (t) => {
    const before = await tagDigests(signed.registry, signed.name);
    t.true(
      Object.keys(before).some((tag) => tag.endsWith('.sig')),
      'the images are signed',
    );
    const { status, body } = await getJson<RetentionAnswer>(`${builder.url}/retention/plan`);
    t.is(status, 200);
    const images = imagesOf(body, signed);
    const [c1, c2, c3, c4, c5] = signed.main as [string, string, string, string, string];
    const [f1, f2, f3] = signed.feature as [string, string, string];
    t.is(images.size, 8, JSON.stringify(body, null, 2));
    for (const tag of [c5, c4]) t.is(images.get(tag)?.reason, 'newest 2 of branch main', tag);
    for (const tag of [f3, f2]) t.is(images.get(tag)?.reason, 'newest 2 of branch feature-x', tag);
    t.is(c2, 'release-1');
    t.is(images.get(c2)?.reason, 'kept tag');
    for (const tag of [c1, c3]) {
      t.is(images.get(tag)?.action, 'delete');
      t.is(images.get(tag)?.reason, 'older than the newest 2 of branch main');
    }
    t.is(images.get(f1)?.reason, 'older than the newest 2 of branch feature-x');
    for (const tag of [c1, c3, f1]) {
      const refs = (images.get(tag)?.references ?? []).map((r) => r.reference);
      const digest = images.get(tag)?.digest ?? '';
      t.true(
        refs.some((r) => r.includes(`@${digest} (tags ${tag}`)),
        refs.join('\n'),
      );
      t.true(
        refs.some((r) => r.endsWith(`:${digest.replace(':', '-')}.sig`)),
        refs.join('\n'),
      );
      t.true(
        refs.some((r) => r.includes('(manifest under')),
        'its platform and attestation manifests',
      );
    }
    // The image the key was recorded for goes; the key moves to a kept image reused from it.
    const moved = images.get(c1)?.references.find((r) => r.action === 'move');
    t.truthy(moved, 'the build key moves');
    t.true(moved?.reference.includes(signed.key));
    t.deepEqual(await tagDigests(signed.registry, signed.name), before, 'the plan changed nothing');
  },
);

test.serial('a tag the request named is kept unless keepTags leaves it out', async (t) => {
  const repositories = [repositoryOf(signed)];
  const matching = await app(t, retention({ keepTags: ['release-*'], repositories }));
  const other = await app(t, retention({ keepTags: ['v*'], repositories }));
  const kept = imagesOf((await getJson<RetentionAnswer>(`${matching.url}/retention/plan`)).body, signed);
  const left = imagesOf((await getJson<RetentionAnswer>(`${other.url}/retention/plan`)).body, signed);
  t.is(kept.get('release-1')?.reason, 'kept tag');
  t.is(left.get('release-1')?.action, 'delete');
});

test.serial('with keepServedDays 30 a run deletes nothing: every image is younger', async (t) => {
  const before = await tagDigests(signed.registry, signed.name);
  const fresh = await app(t, retention({ keepServedDays: 30, repositories: [repositoryOf(signed)] }));
  const { status, body } = await getJson<RetentionAnswer>(`${fresh.url}/retention/run`, { method: 'POST' });
  t.is(status, 200);
  const images = [...imagesOf(body, signed).values()];
  t.is(images.length, 8);
  t.true(
    images.every((image) => image.outcome === 'kept'),
    JSON.stringify(images, null, 2),
  );
  t.true(images.filter((i) => i.reason.startsWith('served ')).length >= 2);
  t.is(await metricValue(fresh.url, 'service_retention_images_total', { action: 'deleted' }), 0);
  t.deepEqual(await tagDigests(signed.registry, signed.name), before);
});

test.serial(
  'a run deletes the old images but one read just before; kept tags stay whole and still reuse',
  async (t) => {
    const [c1, c2, c3, c4, c5] = signed.main as [string, string, string, string, string];
    const [f1, f2, f3] = signed.feature as [string, string, string];
    const secret = newSecret();
    const receiver = await startReceiver([secret]);
    t.teardown(receiver.close);
    const runner = await app(t, {
      ...retention({ keepServedDays: SHORT_DAYS, repositories: [repositoryOf(signed)] }),
      events: {
        subscriptions: [{ name: 'deletions', url: receiver.url, secrets: [secret], types: [IMAGE_DELETED] }],
        retrySeconds: [1, 1, 1],
      },
    });
    // Every image but the newest 2 and the named one older than 90 s (the last of them is f1).
    await eventually(
      async () => {
        const plan = imagesOf((await getJson<RetentionAnswer>(`${runner.url}/retention/plan`)).body, signed);
        return [c1, c3, f1].every((tag) => plan.get(tag)?.action === 'delete');
      },
      { timeout: 600_000, interval: 2_000, what: `${c1}, ${c3} and ${f1} to be older than 90 s` },
    );
    const read = await fetch(
      `${runner.url}/devcontainer?registry=${signed.registry}&name=${signed.name}&tag=${c3}`,
    );
    t.is(read.status, 200);
    const before = await tagDigests(signed.registry, signed.name);
    const { status, body } = await getJson<RetentionAnswer>(`${runner.url}/retention/run`, {
      method: 'POST',
    });
    t.is(status, 200);
    const images = imagesOf(body, signed);
    t.regex(images.get(c3)?.reason ?? '', /^served \d{4}-\d{2}-\d{2}$/);
    t.is(images.get(c3)?.outcome, 'kept');
    for (const tag of [c1, f1]) t.is(images.get(tag)?.outcome, 'deleted', JSON.stringify(images.get(tag)));
    for (const tag of [c2, c3, c4, c5, f2, f3]) t.is(images.get(tag)?.outcome, 'kept', tag);
    t.is(await metricValue(runner.url, 'service_retention_runs_total', { result: 'success' }), 1);
    t.is(await metricValue(runner.url, 'service_retention_images_total', { action: 'deleted' }), 2);

    // Every deleted tag (its own, its signature) answers 404, and each deleted reference was logged.
    const logged = runner
      .logLines()
      .filter((l) => l.msg === 'retention: deleted')
      .map((l) => String(l.reference));
    for (const tag of [c1, f1]) {
      const image = images.get(tag);
      t.is((await manifestOf(signed.registry, signed.name, tag)).status, 404, tag);
      const sig = `${(image?.digest ?? '').replace(':', '-')}.sig`;
      t.is((await manifestOf(signed.registry, signed.name, sig)).status, 404, sig);
      for (const ref of image?.references.filter((r) => r.action === 'delete') ?? []) {
        t.true(logged.includes(ref.reference), ref.reference);
      }
    }
    // A subscriber hears of each deleted image, signed: its reference, tag and the plan's reason.
    await eventually(() => receiver.received.length >= 2, { what: 'two image.deleted events' });
    const told = new Map(receiver.received.map((r) => [r.event.subject, r]));
    for (const tag of [c1, f1]) {
      const image = images.get(tag);
      const event = told.get(`${signed.registry}/${signed.name}@${image?.digest ?? ''}`);
      t.deepEqual(event?.verified, [true], tag);
      t.is(event?.event.type, IMAGE_DELETED);
      t.like((event?.event.data as { customData?: Record<string, unknown> })?.customData, {
        registry: signed.registry,
        name: signed.name,
        tag,
        digest: image?.digest,
        reason: image?.reason,
      });
    }
    t.is(receiver.received.length, 2);

    // Every kept tag: every manifest under it and every blob they name still answers 200.
    for (const tag of [c2, c3, c4, c5, f2, f3]) {
      const reached = await reachable(signed.registry, signed.name, tag);
      t.true(reached.size >= 4, tag);
      t.deepEqual(
        [...reached].filter(([, s]) => s !== 200),
        [],
        tag,
      );
      t.is((await tagDigests(signed.registry, signed.name))[tag], before[tag]);
    }
    // The key moved to a kept image; each kept head rebuilds as a reuse (no Dev Containers CLI).
    const keyDigest = (await manifestOf(signed.registry, signed.name, signed.key)).digest;
    t.true(
      [c2, c3, c4, c5, f2, f3].some((tag) => before[tag] === keyDigest),
      'the key names a kept image',
    );
    for (const branch of ['main', 'feature-x']) {
      const res = await build(builder, signed.repo, signed.registry, signed.name, branch);
      const log = (await fetchLog(builder, res.imageBuildLogId)).text;
      t.false(log.includes('devcontainer build'), log);
      t.regex(log, /reused, no build/);
    }
  },
);

test.serial("after the registry's own garbage collection every kept tag is still whole", async (t) => {
  // A registry of this test's own: the shared ones are never collected (others push to them).
  const own = await startOwnRegistry();
  t.teardown(own.dispose);
  const tags = await registryTags(signed.registry, signed.name);
  for (const tag of tags) {
    await execa('skopeo', [
      'copy',
      '--all',
      '--preserve-digests',
      '--src-tls-verify=false',
      '--dest-tls-verify=false',
      `docker://${signed.registry}/${signed.name}:${tag}`,
      `docker://${own.host}/${signed.name}:${tag}`,
    ]);
  }
  const copy: Built = { ...signed, registry: own.host };
  const runner = await app(t, {
    insecureRegistries: [...allRegistries(), own.host],
    ...retention({ keepPerBranch: 1, repositories: [repositoryOf(copy)] }),
  });
  const { status, body } = await getJson<RetentionAnswer>(`${runner.url}/retention/run`, { method: 'POST' });
  t.is(status, 200);
  const images = [...imagesOf(body, copy).values()];
  const deleted = images.filter((i) => i.outcome === 'deleted').map((i) => i.tag);
  const kept = images.filter((i) => i.outcome === 'kept').map((i) => i.tag);
  t.true(deleted.length >= 2, JSON.stringify(images, null, 2));
  t.true(images.every((i) => i.outcome === 'kept' || i.outcome === 'deleted'));
  const before = await own.storageBytes();
  await own.collectGarbage();
  t.true((await own.storageBytes()) < before, 'the collection freed the deleted images');
  for (const tag of deleted) t.is((await manifestOf(own.host, signed.name, tag)).status, 404, tag);
  for (const tag of [...kept, signed.key]) {
    const reached = await reachable(own.host, signed.name, tag);
    t.true(reached.size >= 4, tag);
    t.deepEqual(
      [...reached].filter(([, code]) => code !== 200),
      [],
      tag,
    );
  }
});

test.serial('a registry with delete off: each image unsupported, nothing lost, no 5xx', async (t) => {
  const before = await tagDigests(nodelete.registry, nodelete.name);
  const runner = await app(t, retention({ keepPerBranch: 1, repositories: [repositoryOf(nodelete)] }));
  const { status, body } = await getJson<RetentionAnswer>(`${runner.url}/retention/run`, { method: 'POST' });
  t.is(status, 200);
  const images = imagesOf(body, nodelete);
  t.is(images.get(nodelete.main[0] ?? '')?.outcome, 'unsupported', JSON.stringify(body, null, 2));
  t.is(images.get(nodelete.main[1] ?? '')?.outcome, 'kept');
  t.is(await metricValue(runner.url, 'service_retention_images_total', { action: 'unsupported' }), 1);
  t.deepEqual(await tagDigests(nodelete.registry, nodelete.name), before);
});

test.serial('Redis mode, two replicas: one run at a time, and what one serves the other sees', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.dispose);
  const env = replicaEnv(stack, redis.url, {
    RETENTION_MODE: 'delete',
    RETENTION_KEEP_PER_BRANCH: '1',
    RETENTION_KEEP_SERVED_DAYS: String(SHORT_DAYS),
    RETENTION_REPOSITORIES: repositoryOf(nodelete),
  });
  const replicas = await startReplicas(['a', 'b'], env);
  t.teardown(() => stopReplicas(replicas));
  const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
  const oldest = nodelete.main[0] ?? '';
  const planOn = async (url: string) =>
    imagesOf((await getJson<RetentionAnswer>(`${url}/retention/plan`)).body, nodelete);
  await eventually(async () => (await planOn(b.url)).get(oldest)?.action === 'delete', {
    timeout: 600_000,
    interval: 2_000,
    what: `${oldest} to be older than 90 s`,
  });
  const read = await fetch(
    `${a.url}/devcontainer?registry=${nodelete.registry}&name=${nodelete.name}&tag=${oldest}`,
  );
  t.is(read.status, 200);
  t.regex((await planOn(b.url)).get(oldest)?.reason ?? '', /^served /, 'b sees what a served');

  // A run in progress (its lock held) refuses a second run on every replica.
  const client = new Redis(redis.url);
  t.teardown(() => void client.quit());
  await client.set(RETENTION_LOCK, 'a-run-elsewhere', 'PX', 600_000);
  for (const replica of [a, b]) {
    const res = await fetch(`${replica.url}/retention/run`, { method: 'POST' });
    t.is(res.status, 409);
    t.is(res.headers.get('retry-after'), '60');
  }
  await client.del(RETENTION_LOCK);
  const both = await Promise.all([a, b].map((r) => fetch(`${r.url}/retention/run`, { method: 'POST' })));
  const statuses = both.map((r) => r.status).sort();
  t.true(statuses.includes(200), statuses.join(','));
  t.true(
    statuses.every((s) => s === 200 || s === 409),
    statuses.join(','),
  );
});
