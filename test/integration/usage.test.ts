/**
 * Usage per tenant on the real stack (docs/usage.md): real builds, reuses, a failure and a
 * cancelled build of three tenants (repository owners) through a service with identities on;
 * GET /usage and its CSV agree with each other and with the builds' records; a caller with rules
 * for one tenant reads that tenant only; the usage survives a restart (embedded mode).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { COUNTERS } from '../../src/usage/counters.js';
import type { RunningApp } from '../helpers/app.js';
import { httpsCreds, stack, startBuildApp, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';
import { csvObjects, getUsage, getUsageCsv, rowOf } from '../helpers/usage-support.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

const hex = (): string => randomBytes(4).toString('hex');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const ADMIN_TOKEN = `admin-${hex()}${hex()}`;
const TEAM_A_TOKEN = `team-a-${hex()}${hex()}`;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

const devcontainer = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ build: { dockerfile: 'Dockerfile' }, ...extra });

async function post(app: RunningApp, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...admin, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function recordsOf(app: RunningApp, repo: PushedRepo): Promise<BuildRecord[]> {
  const res = await fetch(`${app.url}/builds?repository=${encodeURIComponent(repo.url)}`, { headers: admin });
  return ((await res.json()) as { builds: BuildRecord[] }).builds;
}

const sum = (records: readonly BuildRecord[]): number =>
  records.reduce((total, record) => total + (record.durationSeconds ?? 0), 0);

function authSettings(ownerA: string) {
  return {
    mode: 'enforce' as const,
    issuers: [],
    tokens: [
      { name: 'admin', sha256: sha256(ADMIN_TOKEN) },
      { name: 'team-a', sha256: sha256(TEAM_A_TOKEN) },
    ],
    rules: [
      {
        name: 'admin',
        token: 'admin',
        actions: ['build', 'read', 'cancel', 'delete', 'admin'] as const,
        repositories: [{ host: '*', path: '**' }],
        images: [{ registry: '*', name: '**' }],
      },
      {
        name: 'team-a-reads',
        token: 'team-a',
        actions: ['read'] as const,
        repositories: [{ host: '127.0.0.1', path: `${ownerA}/**` }],
        images: [],
      },
    ],
  };
}

test('three tenants: usage sums, records, reuse savings, CSV, access, and a restart', async (t) => {
  const owners = { a: `usage-a-${hex()}`, b: `usage-b-${hex()}`, c: `usage-c-${hex()}` };
  const scratchDir = await mkdtemp(join(tmpdir(), 'ibs-test-usage-'));
  t.teardown(() => rm(scratchDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }));
  const overrides = {
    scratchDir,
    build: { reuse: true },
    auth: authSettings(owners.a) as never,
  };
  let app = await startBuildApp(overrides);
  t.teardown(() => app.close());
  const repos = {
    a: await pushedRepo('usage', { owner: owners.a }),
    b: await pushedRepo('usage', { owner: owners.b }),
    c: await pushedRepo('usage', { owner: owners.c }),
  };
  for (const repo of Object.values(repos)) t.teardown(repo.dispose);
  const body = (repo: PushedRepo) => ({
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('usage') },
  });

  // Tenant a: a build, then a commit outside the inputs: a reuse of that image.
  await repos.a.push('main', {
    '.devcontainer/devcontainer.json': devcontainer(),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${hex()} > /usage-a\n`,
  });
  const bodyA = body(repos.a);
  t.is((await post(app, bodyA)).status, 200);
  await repos.a.push('main', { 'README.md': '# not an input\n' });
  t.is((await post(app, bodyA)).status, 200);

  // Tenant b: a failing step, then a build that passes.
  await repos.b.push('main', {
    '.devcontainer/devcontainer.json': devcontainer(),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${hex()} && exit 3\n`,
  });
  const bodyB = body(repos.b);
  t.is((await post(app, bodyB)).status, 500);
  await repos.b.push('main', {
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${hex()} > /usage-b\n`,
  });
  t.is((await post(app, bodyB)).status, 200);

  // Tenant c: an async build cancelled while its slow step runs.
  await repos.c.push('main', {
    '.devcontainer/devcontainer.json': devcontainer(),
    '.devcontainer/Dockerfile': SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, hex()),
  });
  const started = await post(app, body(repos.c), { prefer: 'respond-async' });
  t.is(started.status, 202);
  const id = String(started.body.id);
  await eventually(
    async () => {
      const record = (await (
        await fetch(`${app.url}/builds/${id}`, { headers: admin })
      ).json()) as BuildRecord;
      if (record.imageBuildLogId === undefined) return false;
      const log = await fetch(`${app.url}/logs/${record.imageBuildLogId}`, { headers: admin });
      return (await log.text()).includes(SLOW_STEP_STARTED);
    },
    { timeout: 180_000, interval: 200, what: 'the slow step to start' },
  );
  t.is((await fetch(`${app.url}/builds/${id}`, { method: 'DELETE', headers: admin })).status, 202);

  const records = {
    a: await recordsOf(app, repos.a),
    b: await recordsOf(app, repos.b),
    c: await eventually(async () => {
      const list = await recordsOf(app, repos.c);
      return list.every((r) => r.phase === 'finished') && list;
    }),
  };
  // The cancelled build's usage is counted once its record has ended.
  const report = await eventually(async () => {
    const answer = await getUsage(app.url, '?by=tenant', admin);
    return (rowOf(answer.body, owners.c)?.builds ?? 0) === 1 && answer;
  });
  t.is(report.status, 200);
  const expected = { a: [2, 1, 0], b: [2, 0, 1], c: [1, 0, 1] } as const;
  for (const key of ['a', 'b', 'c'] as const) {
    const row = rowOf(report.body, owners[key]);
    t.truthy(row, `a row for ${owners[key]}`);
    t.deepEqual([row?.builds, row?.reused, row?.failed], [...expected[key]], owners[key]);
    t.true(Math.abs((row?.runSeconds ?? 0) - sum(records[key])) <= 1, `${owners[key]} run time`);
  }
  // The reuse saved the run time of the build whose image it reused.
  const [reuse, built] = records.a;
  const savedA = rowOf(report.body, owners.a)?.savedSeconds ?? 0;
  const why = JSON.stringify({ row: rowOf(report.body, owners.a), reuse, built }).slice(0, 6000);
  t.true(Math.abs(savedA - (built?.durationSeconds ?? 0)) <= 1, why);
  t.true((reuse?.durationSeconds ?? 99) < (built?.durationSeconds ?? 0));
  t.true((rowOf(report.body, owners.b)?.totalSteps ?? 0) > 0);

  // The rows sum to the total, counter by counter.
  const ours = report.body.rows.filter((row) => Object.values(owners).includes(row.tenant));
  t.is(ours.length, 3);
  for (const { name } of COUNTERS) {
    const rows = report.body.rows.reduce((total, row) => total + row[name], 0);
    t.true(Math.abs(rows - report.body.total[name]) < 0.01, name);
  }

  // The CSV: the same rows and numbers.
  const csv = await getUsageCsv(app.url, '?by=tenant', admin);
  t.is(csv.status, 200);
  t.regex(csv.type, /^text\/csv/);
  const objects = csvObjects(csv.text);
  t.is(objects.length, report.body.rows.length);
  for (const row of report.body.rows) {
    const line = objects.find((o) => o.tenant === row.tenant);
    for (const { name, column } of COUNTERS)
      t.is(Number(line?.[column]), row[name], `${row.tenant} ${column}`);
  }

  // Access: team-a's caller reads its tenant only; without a token, 401.
  const teamA = await getUsage(app.url, '?by=tenant,repository', { authorization: `Bearer ${TEAM_A_TOKEN}` });
  t.is(teamA.status, 200);
  t.deepEqual([...new Set(teamA.body.rows.map((row) => row.tenant))], [owners.a]);
  t.is((await getUsage(app.url, '?by=tenant')).status, 401);
  // Bad parameters: a 400 naming them.
  const bad = await getUsage(app.url, '?from=2026-13-01&by=tenant,colour', admin);
  t.is(bad.status, 400);
  t.regex(String(bad.body.error), /^invalid parameters for GET \/usage: from: .*; by: /);

  // A restart keeps the usage (embedded: the scratch space's journal).
  await app.close();
  app = await startBuildApp(overrides);
  const again = await getUsage(app.url, '?by=tenant', admin);
  t.deepEqual(again.body.rows, report.body.rows);
});
