/**
 * Logs while they are written: GET answers what is stored so far with X-Log-Complete, and
 * ?follow=true streams the stored bytes from the start until the command's log is closed.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { startApp, type RunningApp } from '../../../helpers/app.js';
import { eventually } from '../../../helpers/eventually.js';

interface Follower {
  status: number;
  headers: Headers;
  /** Every byte received so far, as text. */
  text: () => string;
  /** Resolves when `needle` has been received. */
  received: (needle: string) => Promise<void>;
  /** Resolves with everything once the response has ended. */
  ended: Promise<string>;
  stop: () => void;
}

async function follow(app: RunningApp, id: string): Promise<Follower> {
  const abort = new AbortController();
  const res = await fetch(`${app.url}/logs/${id}?follow=true`, { signal: abort.signal });
  const chunks: Buffer[] = [];
  const wakers = new Set<() => void>();
  const text = (): string => Buffer.concat(chunks).toString('utf8');
  const ended = (async () => {
    if (res.body === null) return '';
    try {
      for await (const chunk of res.body) {
        chunks.push(Buffer.from(chunk));
        for (const wake of wakers) wake();
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    return text();
  })();
  const received = (needle: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never received ${JSON.stringify(needle)}`)), 10_000);
      const check = (): void => {
        if (!text().includes(needle)) return;
        clearTimeout(timer);
        wakers.delete(check);
        resolve();
      };
      wakers.add(check);
      check();
    });
  return { status: res.status, headers: res.headers, text, received, ended, stop: () => abort.abort() };
}

async function getLog(app: RunningApp, id: string): Promise<{ text: string; complete: string | null }> {
  const res = await fetch(`${app.url}/logs/${id}`);
  return { text: await res.text(), complete: res.headers.get('x-log-complete') };
}

/** Polls GET /logs/:id until its text is `expected` (the file write is asynchronous). */
async function untilStored(
  app: RunningApp,
  id: string,
  expected: string,
): Promise<{ complete: string | null }> {
  let got = { text: '', complete: null as string | null };
  return eventually(
    async () => {
      got = await getLog(app, id);
      return got.text === expected && got;
    },
    { what: () => `log text ${JSON.stringify(expected)}, last ${JSON.stringify(got.text)}` },
  );
}

/** How many descriptors of this process are open on `file` (Linux /proc). */
function openHandles(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

async function untilHandles(file: string, count: number): Promise<void> {
  await eventually(() => openHandles(file) === count, { what: `${count} handles on ${file}` });
}

test('GET of a log still written answers what is stored so far with X-Log-Complete: false, then true', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('img');
  log.write('line one\nhalf a li');
  // Whole lines only while running (masking needs the whole line).
  t.is((await untilStored(app, log.id, 'line one\n')).complete, 'false');
  log.write('ne\n');
  t.is((await untilStored(app, log.id, 'line one\nhalf a line\n')).complete, 'false');
  log.write('no newline at the end');
  await log.close();
  const done = await getLog(app, log.id);
  t.deepEqual(done, { text: 'line one\nhalf a line\nno newline at the end', complete: 'true' });
});

test('followers get the stored bytes from the start, each new line while written, secrets masked, and end with the log', async (t) => {
  const app = await startApp({
    gitCredentials: [{ host: 'git.example', kind: 'https', username: 'ci', token: 'SERVER-TOKEN-42' }],
  });
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('img', ['request-token-abc']);
  log.write('$ devcontainer build\n');
  const first = await follow(app, log.id);
  t.is(first.status, 200);
  t.regex(first.headers.get('content-type') ?? '', /^text\/plain/);
  t.is(first.headers.get('transfer-encoding'), 'chunked');
  await first.received('$ devcontainer build\n');

  log.write('token request-tok');
  log.write('en-abc and SERVER-TO');
  log.write('KEN-42 used\n');
  await first.received('used\n');
  const second = await follow(app, log.id);
  await second.received('used\n');
  t.is(second.text(), first.text(), 'a later follower starts from the first byte');
  t.false(first.text().includes('request-token-abc'));
  t.false(first.text().includes('SERVER-TOKEN-42'));

  // Each new line reaches both while the log is still open.
  log.write('#5 RUN echo "slow step started"\n');
  await Promise.all([first.received('slow step started'), second.received('slow step started')]);
  log.write('last words without a newline');
  await log.close();
  const [a, b] = await Promise.all([first.ended, second.ended]);
  const stored = await getLog(app, log.id);
  t.is(stored.complete, 'true');
  t.is(a, stored.text);
  t.is(b, stored.text);
  t.is(
    stored.text,
    '$ devcontainer build\ntoken *** and *** used\n#5 RUN echo "slow step started"\nlast words without a newline',
  );
});

test('a follower that goes away changes nothing: the writer and the other followers go on', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('git');
  log.write('Cloning into /tmp/x...\n');
  const leaving = await follow(app, log.id);
  const staying = await follow(app, log.id);
  await leaving.received('Cloning');
  const file = join(app.ctx.config.scratchDir, 'logs', `${log.id}.log`);
  t.is(openHandles(file), 3, 'the writer and two followers');
  // HEAD answers the headers only and holds nothing open.
  const head = await fetch(`${app.url}/logs/${log.id}?follow=true`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(openHandles(file), 3);
  leaving.stop();
  t.is(await leaving.ended, 'Cloning into /tmp/x...\n');
  // The follower that left let go of its file at once, though nothing new was written.
  await untilHandles(file, 2);

  // More than one read's worth (64 KiB) while followed.
  const lines = Array.from({ length: 3000 }, (_, i) => `remote: Counting objects: ${i}% (${i}/3000)\n`);
  for (const line of lines) log.write(line);
  await log.close();
  const all = await staying.ended;
  t.is(all, `Cloning into /tmp/x...\n${lines.join('')}`);
  t.is(all, (await getLog(app, log.id)).text);
  await untilHandles(file, 0);
});

test('following a finished log returns it whole and ends', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('git');
  log.write('done\n');
  await log.close();
  const follower = await follow(app, log.id);
  t.is(follower.status, 200);
  t.is(await follower.ended, 'done\n');
});

test('follow: unknown ids 404, ids outside the pattern 400, a follow value other than true/false 400', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const unknown = 'img-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
  const notFound = await fetch(`${app.url}/logs/${unknown}?follow=true`);
  t.is(notFound.status, 404);
  t.deepEqual(await notFound.json(), { error: 'log not found', logId: unknown });
  const bad = await fetch(`${app.url}/logs/git-123?follow=true`);
  t.is(bad.status, 400);
  const log = await app.ctx.logStore.open('git');
  await log.close();
  for (const query of ['follow=yes', 'follow=1', 'follow=true&follow=true', 'follow=']) {
    const res = await fetch(`${app.url}/logs/${log.id}?${query}`);
    t.is(res.status, 400, query);
    t.deepEqual(await res.json(), { error: 'invalid query parameter follow: true or false' });
  }
  const plain = await fetch(`${app.url}/logs/${log.id}?follow=false`);
  t.is(plain.status, 200);
  t.is(plain.headers.get('x-log-complete'), 'true');
});
