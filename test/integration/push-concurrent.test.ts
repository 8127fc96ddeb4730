/**
 * Identical pushes at once (docs/behaviour.md, Known limits): a registry refuses a manifest PUT
 * while another push of the same content is under way (distribution's 400 MANIFEST_BLOB_UNKNOWN);
 * the build pushes again, a bounded number of times, and never retries a real refusal (403
 * DENIED); a registry unavailable for a moment (503) is pushed to again too. Through a front
 * before the stack's registry that the test controls, then bursts of identical builds for real.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import {
  allRegistries,
  fetchLog,
  httpsCreds,
  ownDockerfileRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { MANIFEST_PUT, registryFront } from '../helpers/registry-front.js';
import { reachable } from '../helpers/retention-support.js';
import type { RunningApp } from '../helpers/app.js';

const nonce = (): string => randomBytes(8).toString('hex');

/** A Dockerfile of its own (a step no other build shares), in a repository of the test's own. */
function ownRepo(t: { teardown: (fn: () => void) => void }): string {
  const repo = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${nonce()} > /nonce\n`);
  t.teardown(repo.remove);
  return repo.repository;
}

async function imgLog(app: RunningApp, res: BuildResponse): Promise<string> {
  return (await fetchLog(app, res.body.imageBuildLogId ?? res.body.logId)).text;
}

/** Every manifest and blob the tag reaches is served (and there is at least one blob). */
async function whole(registry: string, name: string, tag: string): Promise<string[]> {
  const found = await reachable(registry, name, tag);
  const missing = [...found]
    .filter(([, status]) => status !== 200)
    .map(([what, status]) => `${what}: ${status}`);
  if (![...found.keys()].some((what) => what.startsWith('blob '))) missing.push('no blob at all');
  return missing;
}

test('a manifest PUT refused as a concurrent push refuses it (400 MANIFEST_BLOB_UNKNOWN) is pushed again', async (t) => {
  const front = await registryFront(stack.REGISTRY_ANON);
  t.teardown(() => front.close());
  front.refuse({ method: 'PUT', path: MANIFEST_PUT, status: 400, code: 'MANIFEST_BLOB_UNKNOWN', times: 1 });
  const app = await startBuildApp({ insecureRegistries: [...allRegistries(), front.host] });
  t.teardown(() => app.close());
  const name = uniqueName('push-again');
  const res = await postBuild(app, {
    repository: ownRepo(t),
    gitCredentials: httpsCreds(),
    image: { registry: front.host, name },
  });
  const log = await imgLog(app, res);
  t.is(res.status, 200, `${JSON.stringify(res.body)}\n${log.slice(-3000)}`);
  t.is(front.requests.filter((r) => r.refused).length, 1);
  t.deepEqual(await whole(stack.REGISTRY_ANON, name, String(res.body.tag)), []);
  t.regex(log, /pushing again/);
});

// BuildKit itself tries a refused manifest PUT again a few times (1 s, 2 s, ... apart): a registry
// unavailable longer than that fails the CLI's try, and the service pushes again.
test('a registry unavailable for longer than BuildKit waits (503 for 40 s) is pushed to again', async (t) => {
  const front = await registryFront(stack.REGISTRY_ANON);
  t.teardown(() => front.close());
  // Every manifest PUT for 40 s from the first one.
  front.refuse({ method: 'PUT', path: MANIFEST_PUT, status: 503, code: 'UNAVAILABLE', forMs: 40_000 });
  const app = await startBuildApp({ insecureRegistries: [...allRegistries(), front.host] });
  t.teardown(() => app.close());
  const name = uniqueName('push-unavailable');
  const res = await postBuild(app, {
    repository: ownRepo(t),
    gitCredentials: httpsCreds(),
    image: { registry: front.host, name },
  });
  const log = await imgLog(app, res);
  t.is(res.status, 200, `${JSON.stringify(res.body)}\n${log.slice(-3000)}`);
  t.true(front.requests.some((r) => r.refused));
  t.deepEqual(await whole(stack.REGISTRY_ANON, name, String(res.body.tag)), []);
  t.regex(log, /the registry is unavailable \(503 from the registry\): pushing again in 2 s \(try 2 of 4\)/);
});

test('a manifest PUT refused for good (403 DENIED) is never pushed again: 500 within a minute', async (t) => {
  const front = await registryFront(stack.REGISTRY_ANON);
  t.teardown(() => front.close());
  front.refuse({ method: 'PUT', path: MANIFEST_PUT, status: 403, code: 'DENIED' });
  const app = await startBuildApp({ insecureRegistries: [...allRegistries(), front.host] });
  t.teardown(() => app.close());
  const started = Date.now();
  const res = await postBuild(app, {
    repository: ownRepo(t),
    gitCredentials: httpsCreds(),
    image: { registry: front.host, name: uniqueName('push-denied') },
  });
  const log = await imgLog(app, res);
  t.is(res.status, 500, JSON.stringify(res.body));
  t.true(Date.now() - started < 60_000, `answered after ${String(Date.now() - started)} ms`);
  t.regex(log, /403 Forbidden/);
  t.notRegex(log, /pushing again/);
  // One try: the manifests of one push (the image's, its attestation's and the index), no more.
  const refused = front.requests.filter((r) => r.refused).length;
  t.true(refused >= 1 && refused <= 3, `${String(refused)} manifest PUTs refused`);
});

test('a manifest PUT refused as a concurrent push on every try: 500 after a bounded number of tries', async (t) => {
  const front = await registryFront(stack.REGISTRY_ANON);
  t.teardown(() => front.close());
  front.refuse({ method: 'PUT', path: MANIFEST_PUT, status: 400, code: 'MANIFEST_BLOB_UNKNOWN' });
  const app = await startBuildApp({ insecureRegistries: [...allRegistries(), front.host] });
  t.teardown(() => app.close());
  const started = Date.now();
  const res = await postBuild(app, {
    repository: ownRepo(t),
    gitCredentials: httpsCreds(),
    image: { registry: front.host, name: uniqueName('push-never') },
  });
  const log = await imgLog(app, res);
  t.is(res.status, 500, JSON.stringify(res.body));
  t.true(Date.now() - started < 60_000, `answered after ${String(Date.now() - started)} ms`);
  t.is([...log.matchAll(/pushing again/g)].length, 2, 'three tries in all');
  t.regex(log, /try 3 of 3/);
  t.is(front.requests.filter((r) => r.refused).length, 3);
});

/** `count` identical requests at once (one repository, one image name and tag, no cache). */
/** What the responses were, with the end of the image build log of each failure. */
async function described(app: RunningApp, responses: readonly BuildResponse[]): Promise<string> {
  const lines = await Promise.all(
    responses.map(async (r) =>
      r.status === 200 || r.status === 429
        ? String(r.status)
        : `${String(r.status)} ${JSON.stringify(r.body)}\n${(await imgLog(app, r)).slice(-2000)}`,
    ),
  );
  return lines.join('\n');
}

async function identicalBurst(t: { teardown: (fn: () => void) => void }, app: RunningApp, count: number) {
  const request = {
    repository: ownRepo(t),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('identical') },
    buildOptions: { noCache: true },
  };
  const responses = await Promise.all(Array.from({ length: count }, () => postBuild(app, request)));
  return { name: request.image.name, responses };
}

test('four identical builds at once with a limit of two: exactly two 200 and two 429', async (t) => {
  const app = await startBuildApp({ build: { maxConcurrent: 2 } });
  t.teardown(() => app.close());
  const { name, responses } = await identicalBurst(t, app, 4);
  const statuses = responses.map((r) => r.status).sort();
  t.deepEqual(statuses, [200, 200, 429, 429], await described(app, responses));
  for (const r of responses.filter((res) => res.status === 200)) {
    t.deepEqual(await whole(stack.REGISTRY_ANON, name, String(r.body.digest)), [], String(r.body.digest));
  }
});

test('eight identical builds at once with no limit: all 200, the tag and every pushed digest whole', async (t) => {
  const app = await startBuildApp();
  t.teardown(() => app.close());
  const { name, responses } = await identicalBurst(t, app, 8);
  t.deepEqual(
    responses.map((r) => r.status),
    Array.from({ length: 8 }, () => 200),
    await described(app, responses),
  );
  const again = await Promise.all(responses.map(async (r) => /pushing again/.test(await imgLog(app, r))));
  t.log(`${String(again.filter(Boolean).length)} of 8 pushed again`);
  const tags = new Set(responses.map((r) => String(r.body.tag)));
  t.is(tags.size, 1);
  for (const tag of tags) t.deepEqual(await whole(stack.REGISTRY_ANON, name, tag), [], tag);
  for (const digest of new Set(responses.map((r) => String(r.body.digest))))
    t.deepEqual(await whole(stack.REGISTRY_ANON, name, digest), [], digest);
});
