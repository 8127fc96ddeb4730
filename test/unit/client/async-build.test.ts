// `ibs build` (its own process) against a small fake of the build resource API on port 0: the
// POST lost once is sent again with the same Idempotency-Key, polls cut by a front (504 after 3 s)
// are asked again with a shorter wait, the answer goes to stdout; Ctrl-C sends DELETE /builds/{id}.
import test from 'ava';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../helpers/eventually.js';
import { runIbs } from '../../helpers/ibs-process.js';

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
