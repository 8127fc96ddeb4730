import test from 'ava';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.js';

const KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQyNTUxOQAAACD\n-----END OPENSSH PRIVATE KEY-----\n';

test('GET /logs/:id answers the captured text as text/plain; DELETE answers 204, then 404 with logId', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('git');
  log.write('Cloning into /tmp/x...\n');
  log.write(Buffer.from('done\n'));
  await log.close();
  t.regex(log.id, /^git-[0-9a-f]{8}-[0-9a-f]{4}-/);

  const res = await fetch(`${app.url}/logs/${log.id}`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
  t.is(await res.text(), 'Cloning into /tmp/x...\ndone\n');

  const del = await fetch(`${app.url}/logs/${log.id}`, { method: 'DELETE' });
  t.is(del.status, 204);
  for (const method of ['GET', 'DELETE']) {
    const gone = await fetch(`${app.url}/logs/${log.id}`, { method });
    t.is(gone.status, 404, method);
    t.regex(gone.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await gone.json(), { error: 'log not found', logId: log.id });
  }
});

test('an unknown id in the pattern answers 404; ids outside the pattern answer 400', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const unknown = 'img-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
  const res = await fetch(`${app.url}/logs/${unknown}`);
  t.is(res.status, 404);
  t.deepEqual(await res.json(), { error: 'log not found', logId: unknown });
  for (const id of [
    'git-123',
    'abc-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
    'GIT-0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9',
    '..%2F..%2Fetc%2Fpasswd',
    'git-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9.log',
  ]) {
    for (const method of ['GET', 'DELETE']) {
      const bad = await fetch(`${app.url}/logs/${id}`, { method });
      t.is(bad.status, 400, `${method} ${id}`);
      t.is(typeof ((await bad.json()) as { error?: unknown }).error, 'string');
    }
  }
});

test('logs are files of mode 0600 in the scratch dir', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('img');
  log.write('x\n');
  await log.close();
  const info = await stat(join(app.ctx.config.scratchDir, 'logs', `${log.id}.log`));
  t.is(info.mode & 0o777, 0o600);
});

test('retention keeps the newest N closed logs per kind, separately for git and img', async (t) => {
  const app = await startApp({ logs: { retention: 2 } });
  t.teardown(app.close);
  const ids: Record<'git' | 'img', string[]> = { git: [], img: [] };
  for (const kind of ['git', 'img', 'git', 'git', 'img'] as const) {
    const log = await app.ctx.logStore.open(kind);
    log.write(`${kind}\n`);
    await log.close();
    ids[kind].push(log.id);
  }
  const status = async (id: string): Promise<number> => (await fetch(`${app.url}/logs/${id}`)).status;
  t.deepEqual(await Promise.all(ids.git.map(status)), [404, 200, 200]);
  t.deepEqual(await Promise.all(ids.img.map(status)), [200, 200]);
});

test('a log still being written is not pruned by retention', async (t) => {
  const app = await startApp({ logs: { retention: 1 } });
  t.teardown(app.close);
  const open = await app.ctx.logStore.open('git');
  open.write('still running\n');
  for (let i = 0; i < 3; i++) {
    const other = await app.ctx.logStore.open('git');
    await other.close();
  }
  await open.close();
  t.is((await fetch(`${app.url}/logs/${open.id}`)).status, 200);
});

test('secrets are masked, also when split across chunks, and the server config secrets too', async (t) => {
  const registryAuth = Buffer.from('robot:REGISTRY-PASS-123').toString('base64');
  const app = await startApp({
    gitCredentials: [
      { host: 'git.example', kind: 'https', username: 'ci', token: 'SERVER-TOKEN-42' },
      { host: 'ssh.example', kind: 'ssh', privateKey: KEY },
    ],
    registryAuth: { auths: { 'r.example': { auth: registryAuth } } },
  });
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('img', ['request-token-abc']);
  log.write('fatal: token request-tok');
  log.write('en-abc rejected\nserver SERVER-TO');
  log.write(new TextEncoder().encode('KEN-42 and REGISTRY-PASS-123 and '));
  log.write(`${registryAuth}\n`);
  log.addSecrets(['late-secret-xyz']);
  log.write('key line b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ then late-secret-xyz\n');
  log.write('unterminated request-token-abc');
  await log.close();
  const text = await (await fetch(`${app.url}/logs/${log.id}`)).text();
  t.is(
    text,
    'fatal: token *** rejected\nserver *** and *** and ***\nkey line *** then ***\nunterminated ***',
  );
});

test('a multi-byte character split across chunks survives', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const log = await app.ctx.logStore.open('git');
  const bytes = Buffer.from('héllo ✓\n');
  log.write(bytes.subarray(0, 2));
  log.write(bytes.subarray(2, 9));
  log.write(bytes.subarray(9));
  await log.close();
  t.is(await (await fetch(`${app.url}/logs/${log.id}`)).text(), 'héllo ✓\n');
});
