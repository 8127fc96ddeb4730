/**
 * X-Request-Id: echoed on every answer (given when valid, generated otherwise, never refused),
 * carried by every service log line of the request, recorded with the build it starts.
 */
import { connect } from 'node:net';
import test from 'ava';
import { serviceError } from '../../../../src/errors/errors.js';
import type { BuildJobRunner } from '../../../../workers/build-worker.js';
import { REQUEST_ID_PATTERN } from '../../../../src/rules/limits.js';
import { startApp, testConfig, type RunningApp } from '../../../helpers/app.js';
import { REPO, RESULT } from '../../../helpers/fake-build.js';
import { eventually } from '../../../helpers/eventually.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A job that waits for `release()` (or fails when told to). */
function gatedRunner(): { runJob: BuildJobRunner; release: () => void; started: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started = 0;
  return {
    release,
    started: () => started,
    runJob: async (plan) => {
      started += 1;
      await gate;
      if (plan.branch === 'fail')
        throw serviceError(
          'COMMAND_FAILED',
          { command: 'git clone', outcome: 'exited with code 128' },
          { logId: RESULT.gitCloneLogId },
        );
      return RESULT;
    },
  };
}

/** One raw HTTP/1.1 request (header bytes exactly as given); resolves with the status and headers. */
function rawRequest(app: RunningApp, headerLines: Buffer): Promise<{ status: number; headers: string }> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'));
      resolve({ status: Number(head.split(' ')[1]), headers: head });
    });
    socket.write(
      Buffer.concat([
        Buffer.from('GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'),
        headerLines,
        Buffer.from('\r\n'),
      ]),
    );
  });
}

test('every endpoint echoes a valid X-Request-Id, and generates one when none is given', async (t) => {
  const runner = gatedRunner();
  const app = await startApp(
    // Reuse off: identical requests would follow the running build instead of meeting the 429.
    { build: { ...testConfig({ scratchDir: '/x' }).build, maxConcurrent: 1, reuse: false } },
    { app: { build: { runJob: runner.runJob } } },
  );
  t.teardown(app.close);
  const unknownLog = 'img-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
  const build = JSON.stringify({ repository: REPO, image: { registry: 'registry.example.com' } });
  const json = { 'content-type': 'application/json' };
  const requests: [string, string, RequestInit, number][] = [
    ['GET', '/health/live', {}, 200],
    ['GET', '/health/ready', {}, 503],
    ['GET', '/health/startup', {}, 200],
    ['GET', '/metrics', {}, 200],
    ['GET', '/config', {}, 200],
    ['GET', '/builds', {}, 200],
    ['GET', '/builds?status=nope', {}, 400],
    ['GET', `/logs/${unknownLog}`, {}, 404],
    ['GET', `/logs/${unknownLog}?follow=true`, {}, 404],
    ['DELETE', '/logs/git-1', {}, 400],
    ['GET', '/image', {}, 400],
    ['DELETE', '/image', {}, 400],
    ['GET', '/devcontainer', {}, 400],
    ['POST', '/build', { headers: json, body: '{' }, 400],
    ['GET', '/no/such/path', {}, 404],
  ];
  for (const [index, [method, path, init, status]] of requests.entries()) {
    const given = `ci:run-42.step_${index}`;
    const res = await fetch(app.url + path, {
      ...init,
      method,
      headers: { ...(init.headers as Record<string, string>), 'X-Request-Id': given },
    });
    t.is(res.status, status, `${method} ${path}`);
    t.is(res.headers.get('x-request-id'), given, `${method} ${path}`);
    await res.arrayBuffer();
    const generated = await fetch(app.url + path, { ...init, method });
    t.regex(generated.headers.get('x-request-id') ?? '', UUID, `${method} ${path} without an id`);
    await generated.arrayBuffer();
  }

  // A build that runs (200) and one refused while it runs (429).
  const admitted = fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { ...json, 'X-Request-Id': 'build-200' },
    body: build,
  });
  await eventually(() => runner.started() === 1, { what: 'the build to start' });
  const refused = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { ...json, 'X-Request-Id': 'build-429' },
    body: build,
  });
  t.is(refused.status, 429);
  t.is(refused.headers.get('x-request-id'), 'build-429');
  runner.release();
  const ok = await admitted;
  t.is(ok.status, 200);
  t.is(ok.headers.get('x-request-id'), 'build-200');
});

test('a hostile X-Request-Id is replaced, never echoed nor refused', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const hostile: [string, Buffer][] = [
    ['10 kB', Buffer.from(`X-Request-Id: ${'a'.repeat(10_240)}\r\n`)],
    ['129 characters', Buffer.from(`X-Request-Id: ${'b'.repeat(129)}\r\n`)],
    ['non-ASCII', Buffer.from('X-Request-Id: req-\u00e9t\u00e9-\u2713\r\n', 'utf8')],
    ['latin-1 bytes', Buffer.from('X-Request-Id: req-\xe9\r\n', 'latin1')],
    ['spaces and quotes', Buffer.from('X-Request-Id: a "b" <c>\r\n')],
    ['encoded CR/LF', Buffer.from('X-Request-Id: a%0d%0aSet-Cookie:x\r\n')],
    ['two headers', Buffer.from('X-Request-Id: one\r\nX-Request-Id: two\r\n')],
    ['empty', Buffer.from('X-Request-Id: \r\n')],
  ];
  for (const [what, lines] of hostile) {
    const res = await rawRequest(app, lines);
    t.is(res.status, 200, what);
    const echoed = /^x-request-id: (.*)$/im.exec(res.headers)?.[1];
    t.regex(echoed ?? '', UUID, what);
    t.is(res.headers.match(/x-request-id/gi)?.length, 1, `${what}: one header`);
  }
  // A CR/LF inside the value ends the header line: what follows is another header, never echoed.
  const split = await rawRequest(app, Buffer.from('X-Request-Id: abc\r\nX-Evil: injected\r\n'));
  t.is(/^x-request-id: (.*)$/im.exec(split.headers)?.[1], 'abc');
  t.false(/evil|injected/i.test(split.headers));
  // A bare CR is refused by Node's HTTP parser before the service sees it (400, no echo).
  const bareCr = await rawRequest(app, Buffer.from('X-Request-Id: abc\rSet-Cookie: x\r\n'));
  t.is(bareCr.status, 400);
  t.false(/set-cookie/i.test(bareCr.headers));
});

test('the request id pattern: 1 to 128 of A-Z a-z 0-9 . _ : -', (t) => {
  for (const ok of ['a', 'A-z_0.9:x', 'x'.repeat(128), '0af7651916cd43dd8448eb211c80319c'])
    t.true(REQUEST_ID_PATTERN.test(ok), ok);
  for (const bad of ['', 'x'.repeat(129), 'a b', 'a/b', 'a\nb', 'é', 'a,b', 'a;b', '%0d'])
    t.false(REQUEST_ID_PATTERN.test(bad), JSON.stringify(bad));
});

test('every service log line of a request carries its id; the build is recorded with it', async (t) => {
  const runner = gatedRunner();
  runner.release();
  const app = await startApp({}, { app: { build: { runJob: runner.runJob } } });
  t.teardown(app.close);
  const post = (requestId: string, extra: object) =>
    fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Request-Id': requestId },
      body: JSON.stringify({ repository: REPO, image: { registry: 'registry.example.com' }, ...extra }),
    });
  t.is((await post('req-ok', {})).status, 200);
  t.is((await post('req-failed', { branch: 'fail' })).status, 500);
  t.is((await post('req-refused', { branch: '--upload-pack=x' })).status, 400);

  for (const id of ['req-ok', 'req-failed', 'req-refused']) {
    const lines = app.logLines().filter((l) => l.requestId === id);
    const messages = lines.map((l) => l.msg);
    t.true(messages.includes('request'), `${id}: ${JSON.stringify(messages)}`);
    t.true(lines.length >= 2, `${id}: the route's own line too: ${JSON.stringify(messages)}`);
  }
  // No line of a request without its id (start-up lines have none, and come first).
  for (const line of app.logLines().filter((l) => l.msg === 'request' || String(l.msg).startsWith('build'))) {
    t.truthy(line.requestId, JSON.stringify(line));
  }
  const builds = (await (await fetch(`${app.url}/builds`)).json()) as { builds: { requestId: string }[] };
  t.deepEqual(
    builds.builds.map((b) => b.requestId),
    ['req-failed', 'req-ok'],
    'admitted builds only, newest first',
  );
});
