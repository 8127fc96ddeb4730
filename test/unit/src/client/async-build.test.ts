// `ibs build` (its own process) against a small fake of the build resource API on port 0: the
// POST lost once is sent again with the same Idempotency-Key, polls cut by a front (504 after 3 s)
// are asked again with a shorter wait, a 503 is waited on and sent again as a new attempt, the
// answer goes to stdout; Ctrl-C sends DELETE /builds/{id}.
import test from 'ava';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../../helpers/eventually.js';
import { runIbs } from '../../../helpers/ibs-process.js';

const ID = 'bld-00000000-0000-4000-8000-000000000001';
const RESULT = {
  image: 'r.example/app:1',
  registry: 'r.example',
  name: 'app',
  tag: '1',
  digest: `sha256:${'a'.repeat(64)}`,
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** A fake service: `handle` answers each request after the fake's bookkeeping. */
async function fake(
  t: { teardown: (fn: () => void) => void },
  handle: (req: IncomingMessage, res: ServerResponse, seen: Seen[]) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (req.url?.startsWith('/builds?')) return json(res, 200, { builds: [] });
      handle(req, res, seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  server.unref();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const record = (extra: Record<string, unknown> = {}) => ({
  id: ID,
  requestId: 'job-1',
  phase: 'building',
  ...extra,
});
const args = (url: string) => [
  'build',
  '--server',
  url,
  '--repository',
  'https://git.example/app.git',
  '--request-id',
  'job-1',
];

test('a lost POST is sent again with the same key; polls cut at 3 s get shorter; the answer is printed', async (t) => {
  let posts = 0;
  let polls = 0;
  const { url, seen } = await fake(t, (req, res) => {
    if (req.method === 'POST' && ++posts === 1) return void res.socket?.destroy();
    if (req.method === 'POST')
      return json(res, 202, record(), { location: `/builds/${ID}`, 'preference-applied': 'respond-async' });
    polls++;
    if (polls <= 2) return void setTimeout(() => json(res, 504, { error: 'Gateway Time-out' }), 3000);
    if (polls === 3) return json(res, 200, record());
    json(res, 200, record({ phase: 'finished', status: 'success', answer: { status: 200, body: RESULT } }));
  });
  const ibs = runIbs(args(url));
  t.is(await ibs.exited, 0, ibs.stderr());
  t.deepEqual(JSON.parse(ibs.stdout()), RESULT);

  const postsSeen = seen.filter((s) => s.method === 'POST');
  t.is(postsSeen.length, 2);
  for (const post of postsSeen) {
    t.is(post.headers['idempotency-key'], 'job-1');
    t.is(post.headers.prefer, 'respond-async');
    t.is(post.headers['x-request-id'], 'job-1');
  }
  const waits = seen
    .filter((s) => s.url.startsWith(`/builds/${ID}`))
    .map((s) => Number(/wait=(\d+)/.exec(s.url)?.[1]));
  t.true(
    waits.every((w) => w > 0 && w < 30),
    String(waits),
  );
  t.is(waits[0], 25);
  // Three quarters of the time the front held the poll (3 s, more on a loaded machine).
  const second = waits[1] ?? 0;
  t.true(second >= 2 && second < 25, `the wait after a cut at 3 s: ${second} s`);
  t.regex(ibs.stderr(), /same Idempotency-Key/);
});

test("a 503, answered to the POST or as the build's answer, is waited on and sent again as a new attempt", async (t) => {
  const ID2 = ID.replace(/1$/, '2');
  const unavailable = { error: 'the shared store (Redis) is unavailable', code: 'STORE_UNAVAILABLE' };
  let posts = 0;
  const { url, seen } = await fake(t, (req, res) => {
    if (req.method === 'POST') {
      posts += 1;
      if (posts === 1) return json(res, 503, unavailable, { 'retry-after': '1' });
      return json(res, 202, record(posts === 2 ? {} : { id: ID2 }));
    }
    // The first build admitted ends 503 (its record carries no Retry-After); the next one builds.
    if (req.url?.startsWith(`/builds/${ID}?`))
      return json(res, 200, record({ phase: 'finished', answer: { status: 503, body: unavailable } }));
    json(res, 200, record({ id: ID2, phase: 'finished', answer: { status: 200, body: RESULT } }));
  });
  const ibs = runIbs(args(url));
  t.is(await ibs.exited, 0, ibs.stderr());
  t.deepEqual(JSON.parse(ibs.stdout()), RESULT);
  const postsSeen = seen.filter((s) => s.method === 'POST');
  // Each attempt after a 503 has a key of its own (the one before stays with its 503), the same request id.
  t.deepEqual(
    postsSeen.map((p) => p.headers['idempotency-key']),
    ['job-1', 'job-1/2', 'job-1/3'],
  );
  t.true(postsSeen.every((p) => p.headers['x-request-id'] === 'job-1'));
  t.regex(ibs.stderr(), /unavailable \(503\) and asked to retry after 1 s/);
  t.regex(ibs.stderr(), /unavailable \(503\) and asked to retry after 10 s/);
});

test('a 503 still answered when --timeout runs out exits 4 with its error', async (t) => {
  const { url } = await fake(t, (_req, res) =>
    json(res, 503, { error: 'the shared store (Redis) is unavailable' }, { 'retry-after': '10' }),
  );
  const ibs = runIbs([...args(url), '--timeout', '3']);
  t.is(await ibs.exited, 4, ibs.stderr());
  t.regex(
    ibs.stderr(),
    /still unavailable \(503, Retry-After 10 s\) and --timeout runs out first: the shared store \(Redis\) is unavailable/,
  );
});

test('a post-clone 400 in the answer exits 2 with its error, as a sync 400 does', async (t) => {
  const { url } = await fake(t, (req, res) => {
    if (req.method === 'POST') return json(res, 202, record());
    json(
      res,
      200,
      record({
        phase: 'finished',
        status: 'failure',
        answer: { status: 400, body: { error: 'no devcontainer.json' } },
      }),
    );
  });
  const ibs = runIbs(args(url));
  t.is(await ibs.exited, 2, ibs.stderr());
  t.regex(ibs.stderr(), /the request was refused \(400\): no devcontainer\.json/);
});

test('an unknown build (404 on its poll) exits 4 naming it', async (t) => {
  const { url } = await fake(t, (req, res) => {
    if (req.method === 'POST') return json(res, 202, record());
    json(res, 404, { error: 'no such build' });
  });
  const ibs = runIbs(args(url));
  t.is(await ibs.exited, 4, ibs.stderr());
  t.regex(ibs.stderr(), new RegExp(`build ${ID} is gone \\(404\\)`));
});

test('Ctrl-C while waiting: DELETE /builds/{id}, then exit 130', async (t) => {
  const { url, seen } = await fake(t, (req, res) => {
    if (req.method === 'POST') return json(res, 202, record());
    if (req.method === 'DELETE') return json(res, 200, record({ phase: 'finished', status: 'failure' }));
    setTimeout(() => json(res, 200, record()), 1000);
  });
  const ibs = runIbs(args(url));
  await ibs.stderrAt(`==> accepted: build ${ID}`);
  await eventually(() => seen.some((s) => s.method === 'GET' && s.url.includes('wait=')), {
    timeout: 30_000,
  });
  ibs.child.kill('SIGINT');
  t.is(await ibs.exited, 130, ibs.stderr());
  t.deepEqual(
    seen.filter((s) => s.method === 'DELETE').map((s) => s.url),
    [`/builds/${ID}`],
  );
  t.regex(ibs.stderr(), new RegExp(`^==> cancelled build ${ID}$`, 'm'));
});
