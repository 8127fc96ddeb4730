// Creates the fixture repositories (bare, default branch main) with real git commits under
// $STACK_DIR/git/repos/<name>.git. Commit dates are fixed, so the same definitions give the same
// commit ids. Recreated only when the definitions (or the base image address) change. Every
// repository allows partial clones (`uploadpack.allowFilter`; the git-http server can serve one
// without, see servers/git-http.ts). A fixture with bulk content goes through bulk-repo.ts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Fixture, fixtureDefinitions } from '../fixtures.js';
import type { Layout } from '../layout.js';
import { run } from '../proc.js';
import { baseImage } from './base-image.js';
import { importFixture } from './bulk-repo.js';
import type { Component, Ctx } from './types.js';

const STAMP = '.fixtures-stamp';

function gitEnv(home: string, i: number): NodeJS.ProcessEnv {
  const date = new Date(Date.UTC(2024, 0, 1, 12, i)).toISOString();
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'IBS Fixture',
    GIT_AUTHOR_EMAIL: 'fixture@ibs.invalid',
    GIT_COMMITTER_NAME: 'IBS Fixture',
    GIT_COMMITTER_EMAIL: 'fixture@ibs.invalid',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

async function createRepo(fixture: Fixture, reposDir: string, scratch: string): Promise<void> {
  const bare = path.join(reposDir, `${fixture.name}.git`);
  const home = path.join(scratch, 'home');
  fs.mkdirSync(home, { recursive: true });
  await run('git', ['init', '-q', '--bare', '-b', 'main', bare], { env: gitEnv(home, 0) });
  await run('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true'], { env: gitEnv(home, 0) });
  if (fixture.bulk !== undefined) return importFixture(bare, fixture, gitEnv(home, 0));
  if (fixture.commits.length === 0) return;
  const work = path.join(scratch, fixture.name);
  await run('git', ['init', '-q', '-b', 'main', work], { env: gitEnv(home, 0) });
  const branches = new Set<string>();
  let current = 'main';
  let i = 0;
  for (const c of fixture.commits) {
    i += 1;
    const env = gitEnv(home, i);
    const git = (...args: string[]) => run('git', ['-C', work, ...args], { env });
    if (c.branch !== current) {
      if (branches.has(c.branch)) await git('checkout', '-q', c.branch);
      else await git('checkout', '-q', '-b', c.branch, ...(c.from ? [c.from] : []));
      current = c.branch;
    }
    for (const [file, content] of Object.entries(c.files)) {
      const p = path.join(work, file);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
    }
    for (const file of c.executable ?? []) fs.chmodSync(path.join(work, file), 0o755);
    await git('add', '-A');
    await git('commit', '-q', '-m', c.message);
    branches.add(c.branch);
    if (c.tag) await git('tag', '-a', c.tag, '-m', `Release ${c.tag}`);
  }
  await run('git', ['-C', work, 'push', '-q', bare, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'], {
    env: gitEnv(home, i),
  });
}

export const fixtures: Component = {
  name: 'fixtures',
  // The definitions name the anonymous registry's port, which is settled when that registry runs.
  deps: ['registry-anon'],
  daemons: [],
  ensure: async ({ l, s }: Ctx) => {
    const defs = fixtureDefinitions(baseImage(s, 'anon'));
    const stamp = crypto.createHash('sha256').update(JSON.stringify(defs)).digest('hex');
    const stampFile = path.join(l.repos, STAMP);
    if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) return 'reused';
    await createAll(l, defs, stamp);
    return 'started';
  },
};

async function createAll(l: Layout, defs: Fixture[], stamp: string): Promise<void> {
  const next = `${l.repos}.next`;
  const scratch = `${l.repos}.scratch`;
  fs.rmSync(next, { recursive: true, force: true });
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(next, { recursive: true });
  await Promise.all(defs.map((f) => createRepo(f, next, scratch)));
  fs.writeFileSync(path.join(next, STAMP), stamp);
  fs.rmSync(scratch, { recursive: true, force: true });
  // Swap in place so running git servers (which resolve paths per request) see the new set.
  const old = `${l.repos}.old`;
  fs.rmSync(old, { recursive: true, force: true });
  if (fs.existsSync(l.repos)) fs.renameSync(l.repos, old);
  fs.renameSync(next, l.repos);
  fs.rmSync(old, { recursive: true, force: true });
}
