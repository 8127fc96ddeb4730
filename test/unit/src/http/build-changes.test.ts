/**
 * GET /builds a page at a time and GET /builds/events through the real app on port 0: the
 * answer's shape, its cursor, the 400s of a bad page, and the feed of changes as text/event-stream.
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import type { BuildRecord } from '../../../../src/builds/types.js';
import { startApp } from '../../../helpers/app.js';

const REPOSITORY = 'https://git.example.com/org/app.git';

async function appWith(count: number) {
  const builds = createMemoryBuildRegistry({ history: 100 });
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    ids.push(await builds.start({ requestId: `req-${n}`, repository: REPOSITORY, image: 'r.example/app' }));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const app = await startApp({}, { builds });
  return { app, builds, ids };
}

test('GET /builds answers a page and the cursor of the next; the last page has none', async (t) => {
  const { app, ids } = await appWith(5);
  t.teardown(app.close);
  const read = async (query: string) => {
    const res = await fetch(`${app.url}/builds${query}`);
    t.is(res.status, 200);
    return (await res.json()) as { builds: BuildRecord[]; next?: string };
  };
  const whole = await read('');
  t.deepEqual(
    Object.keys(whole),
    ['builds'],
    'no paging parameter, fewer than 50: the list as it always was',
  );
  t.deepEqual(
    whole.builds.map((b) => b.id),
    [...ids].reverse(),
  );
  const first = await read('?limit=2');
  t.deepEqual(Object.keys(first).sort(), ['builds', 'next']);
  t.deepEqual(
    first.builds.map((b) => b.requestId),
    ['req-4', 'req-3'],
  );
  const second = await read(`?limit=2&after=${encodeURIComponent(first.next as string)}`);
  t.deepEqual(
    second.builds.map((b) => b.requestId),
    ['req-2', 'req-1'],
  );
  const last = await read(`?limit=2&after=${encodeURIComponent(second.next as string)}`);
  t.deepEqual(
    last.builds.map((b) => b.requestId),
    ['req-0'],
  );
  t.false('next' in last);
  const filtered = await read(`?limit=500&requestId=req-3&repository=${encodeURIComponent(REPOSITORY)}`);
  t.deepEqual(
    filtered.builds.map((b) => b.requestId),
    ['req-3'],
  );
});

test('a bad page answers 400 with the error body and changes nothing', async (t) => {
  const { app } = await appWith(1);
  t.teardown(app.close);
  const rule =
    'invalid page of GET /builds: limit is a whole number from 1 to 500 (default 50), after is the next of an earlier page';
  for (const query of [
    '?limit=0',
    '?limit=501',
    '?limit=abc',
    '?limit=1.5',
    '?limit=',
    '?limit=1&limit=2',
    '?after=nope',
    '?after=',
    `?after=${'A'.repeat(200)}`,
  ]) {
    const res = await fetch(`${app.url}/builds${query}`);
    t.is(res.status, 400, query);
    t.deepEqual(await res.json(), { error: rule }, query);
  }
  const both = await fetch(`${app.url}/builds?limit=0&colour=red`);
  t.is(both.status, 400);
  t.regex(
    ((await both.json()) as { error: string }).error,
    /^invalid filters for GET \/builds: no other filter/,
  );
  t.is(((await (await fetch(`${app.url}/builds`)).json()) as { builds: unknown[] }).builds.length, 1);
});

test('GET /builds/events streams each change of a build as its id, unbuffered', async (t) => {
  const { app, builds } = await appWith(0);
  t.teardown(app.close);
  const gone = new AbortController();
  t.teardown(() => gone.abort());
  const res = await fetch(`${app.url}/builds/events`, { signal: gone.signal });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.is(res.headers.get('x-accel-buffering'), 'no');
  t.is(res.headers.get('cache-control'), 'no-store');
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const until = async (part: string): Promise<void> => {
    while (!text.includes(part)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before ${part}`);
      text += decoder.decode(value, { stream: true });
    }
  };
  await until('retry: 1000\n\n');
  const id = await builds.start({ requestId: 'feed', repository: REPOSITORY, image: 'r.example/app' });
  await until(`event: build\ndata: {"id":"${id}"}\n\n`);
  await builds.finish(id, { status: 'success', durationSeconds: 1 });
  await until(`event: build\ndata: {"id":"${id}"}\n\nevent: build\ndata: {"id":"${id}"}\n\n`);
  t.false(text.includes(REPOSITORY), 'ids only');
  const refused = await fetch(`${app.url}/builds/events?status=running`);
  t.is(refused.status, 400);
});

test('with identities enforced, pages fill with the builds the caller may read, and the feed tells of them only', async (t) => {
  const builds = createMemoryBuildRegistry({ history: 100 });
  const repository = (team: string, n: number) => `https://git.example.com/${team}/app-${n}.git`;
  const ofA: string[] = [];
  for (let n = 0; n < 12; n++) {
    const team = n % 3 === 0 ? 'team-a' : 'team-b';
    const id = await builds.start({
      requestId: `r-${n}`,
      repository: repository(team, n),
      image: 'r.example/app',
    });
    if (team === 'team-a') ofA.push(id);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const token = 'team-a-token-0123456789';
  const app = await startApp(
    {
      auth: {
        mode: 'enforce',
        issuers: [],
        tokens: [{ name: 'team-a', sha256: createHash('sha256').update(token).digest('hex') }],
        rules: [
          {
            name: 'team-a',
            token: 'team-a',
            actions: ['read'],
            repositories: [{ host: '*', path: 'team-a/**' }],
            images: [{ registry: '*', name: '**' }],
          },
        ],
      },
    },
    { builds },
  );
  t.teardown(app.close);
  const headers = { Authorization: `Bearer ${token}` };
  t.is((await fetch(`${app.url}/builds/events`)).status, 401, 'no token: no feed');
  const first = (await (await fetch(`${app.url}/builds?limit=2`, { headers })).json()) as {
    builds: BuildRecord[];
    next?: string;
  };
  t.deepEqual(
    first.builds.map((b) => b.id),
    [ofA[3], ofA[2]],
    'a full page of the readable builds',
  );
  const rest = (await (
    await fetch(`${app.url}/builds?limit=2&after=${encodeURIComponent(first.next as string)}`, { headers })
  ).json()) as { builds: BuildRecord[]; next?: string };
  t.deepEqual(
    rest.builds.map((b) => b.id),
    [ofA[1], ofA[0]],
  );
  t.false('next' in rest);

  const gone = new AbortController();
  t.teardown(() => gone.abort());
  const res = await fetch(`${app.url}/builds/events`, { headers, signal: gone.signal });
  t.is(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const hidden = await builds.start({
    requestId: 'hidden',
    repository: repository('team-b', 99),
    image: 'r/x',
  });
  const shown = await builds.start({
    requestId: 'shown',
    repository: repository('team-a', 99),
    image: 'r/x',
  });
  while (!text.includes(shown)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  t.true(text.includes(`event: build\ndata: {"id":"${shown}"}`));
  t.false(text.includes(hidden), "no word of the other team's build");
});
