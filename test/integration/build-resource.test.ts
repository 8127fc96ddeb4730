/**
 * A build as a resource on the real stack: an async POST /build is answered 202 before the clone
 * and its answer is read with a long poll; GET of an unknown id is a 404, a bad wait a 400; a
 * DELETE cancels a running build (its slot is freed, its sync waiter gets the same answer) and a
 * finished one is a 409. An Idempotency-Key attaches a repeat to the same build; another body is a 422.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  httpsRepo,
  ownDockerfileRepo,
  stack,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { serviceError } from '../../src/errors/errors.js';

const request = (repository: string, name: string) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name },
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const post = (service: RunningApp, body: unknown, headers: Record<string, string> = {}) =>
  call(`${service.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** Long polls GET /builds/{id}?wait=20 until the record carries its answer. */
async function answerOf(url: string, location: string): Promise<Answer['body']> {
  return eventually(
    async () => {
      const polled = await call(`${url}${location}?wait=20`);
      if (polled.status !== 200) throw new Error(`GET ${location} answered ${polled.status}`);
      return polled.body.answer !== undefined && polled.body;
    },
    { timeout: 600_000, interval: 0, what: `the answer of ${location}` },
  );
}

/** A served repository whose RUN step is silent for a while, its own (a nonce) so BuildKit runs it. */
function slowRepo(t: ExecutionContext): string {
  const repo = ownDockerfileRepo(
    SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
  );
  t.teardown(repo.remove);
  return repo.repository;
}

test('async POST /build: 202 before the clone with Location and the record; a long poll gets the sync answer', async (t) => {
  const service = await startBuildAppFor(t);
  const accepted = await post(service, request(httpsRepo('image'), uniqueName('async')), {
    Prefer: 'respond-async',
  });
  t.is(accepted.status, 202);
  t.is(accepted.headers.get('preference-applied'), 'respond-async');
  const id = String(accepted.body.id);
  t.regex(id, /^bld-[0-9a-f-]{36}$/);
  t.is(accepted.headers.get('location'), `/builds/${id}`);
  // Answered before the clone: the record has no commit yet.
  t.is(accepted.body.phase, 'cloning');
  t.is(accepted.body.commit, undefined);
  const record = await answerOf(service.url, `/builds/${id}`);
  t.is(record.status, 'success');
  const answer = record.answer as { status: number; body: Record<string, unknown> };
  t.is(answer.status, 200);
  t.regex(String(answer.body.digest), /^sha256:[0-9a-f]{64}$/);
  t.is(answer.body.image, record.image);
  t.is(await metricValue(service.url, 'service_builds_total', { status: 'success' }), 1);
});

test('GET /builds/{id}: an unknown id is a 404, a bad wait a 400, both with the error body', async (t) => {
  const service = await startBuildAppFor(t);
  const id = `bld-${randomUUID()}`;
  const unknown = await call(`${service.url}/builds/${id}`);
  t.is(unknown.status, 404);
  t.deepEqual(unknown.body, serviceError('BUILD_NOT_FOUND', { id }).toBody());
  t.is((await call(`${service.url}/builds/bld-${randomUUID()}`, { method: 'DELETE' })).status, 404);
  for (const wait of ['0', '61', 'abc', '1.5', '']) {
    const bad = await call(`${service.url}/builds/bld-${randomUUID()}?wait=${wait}`);
    t.is(bad.status, 400, `wait=${wait}`);
    t.deepEqual(bad.body, serviceError('INVALID_WAIT', { min: 1, max: 60 }).toBody());
  }
});

test('DELETE of a running sync build: its slot is freed, its record and its waiter get the cancel answer; then 409', async (t) => {
  const service = await startBuildAppFor(t);
  const requestId = `delete-${randomUUID()}`;
  const waiting = post(service, request(slowRepo(t), uniqueName('delete')), { 'X-Request-Id': requestId });
  const running = await eventually(
    async () => {
      const { builds } = (await (await fetch(`${service.url}/builds?requestId=${requestId}`)).json()) as {
        builds: Record<string, unknown>[];
      };
      const build = builds[0];
      if (build?.imageBuildLogId === undefined) return undefined;
      const log = await fetchLog(service, build.imageBuildLogId);
      return log.text.includes(SLOW_STEP_STARTED) ? build : undefined;
    },
    { timeout: 180_000, interval: 250, what: 'the slow step to start' },
  );
  t.is(await metricValue(service.url, 'service_builds_in_flight'), 1);
  const id = String(running.id);
  const deleted = await call(`${service.url}/builds/${id}`, { method: 'DELETE' });
  t.is(deleted.status, 202);
  // The slot is free again well before the silent step would have ended.
  await eventually(async () => (await metricValue(service.url, 'service_builds_in_flight')) === 0, {
    timeout: 15_000,
    interval: 100,
    what: 'the slot to be freed',
  });
  const answered = await waiting;
  t.is(answered.status, 500);
  t.true(String(answered.body.error).includes(`cancelled by DELETE /builds/${id}`));
  const record = (await call(`${service.url}/builds/${id}`)).body;
  t.is(record.status, 'failure');
  t.deepEqual(record.answer, { status: 500, body: answered.body });
  t.is(await metricValue(service.url, 'service_builds_total', { status: 'failure' }), 1);
  const again = await call(`${service.url}/builds/${id}`, { method: 'DELETE' });
  t.is(again.status, 409);
  t.deepEqual(again.body, serviceError('BUILD_FINISHED', { id }).toBody());
});

test('Idempotency-Key: the same key and body attach to one build (async and sync); another body is a 422', async (t) => {
  const service = await startBuildAppFor(t);
  const key = `ci-${randomUUID()}`;
  const body = request(httpsRepo('image'), uniqueName('idempotent'));
  const headers = { Prefer: 'respond-async', 'Idempotency-Key': key };
  const first = await post(service, body, headers);
  const second = await post(service, body, headers);
  t.is(first.status, 202);
  t.is(second.status, 202);
  t.is(second.headers.get('location'), first.headers.get('location'));
  t.is(second.body.id, first.body.id);
  // A synchronous request with the key waits for the same build and gets its answer.
  const sync = await post(service, body, { 'Idempotency-Key': key });
  t.is(sync.status, 200);
  const record = await answerOf(service.url, String(first.headers.get('location')));
  t.deepEqual(record.answer, { status: 200, body: sync.body });
  const { builds } = (await (await fetch(`${service.url}/builds`)).json()) as { builds: unknown[] };
  t.is(builds.length, 1, 'one build ran');
  // Every POST is counted.
  await eventually(
    async () => (await metricValue(service.url, 'service_builds_total', { status: 'success' })) === 3,
    {
      what: 'three POSTs counted',
    },
  );
  const other = await post(service, { ...body, branch: 'main' }, headers);
  t.is(other.status, 422);
  t.deepEqual(other.body, serviceError('IDEMPOTENCY_KEY_REUSED').toBody());
  const otherSync = await post(service, { ...body, branch: 'main' }, { 'Idempotency-Key': key });
  t.is(otherSync.status, 422);
});

test('Idempotency-Key: anything but 1 to 255 visible ASCII characters is a 400 and starts nothing', async (t) => {
  const service = await startBuildAppFor(t);
  const body = request(httpsRepo('image'), uniqueName('badkey'));
  for (const key of ['', 'a b', 'k'.repeat(256), 'clé', 'tab\there']) {
    const refused = await post(service, body, { 'Idempotency-Key': key, Prefer: 'respond-async' }).catch(
      () => undefined,
    );
    if (refused === undefined) continue; // a value fetch itself refuses to send
    t.is(refused.status, 400, JSON.stringify(key));
    t.deepEqual(refused.body, serviceError('INVALID_IDEMPOTENCY_KEY', { max: 255 }).toBody());
  }
  const twice = await fetch(`${service.url}/build`, {
    method: 'POST',
    headers: [
      ['content-type', 'application/json'],
      ['Idempotency-Key', 'one'],
      ['Idempotency-Key', 'two'],
    ],
    body: JSON.stringify(body),
  });
  t.is(twice.status, 400);
  const { builds } = (await (await fetch(`${service.url}/builds`)).json()) as { builds: unknown[] };
  t.deepEqual(builds, []);
});
