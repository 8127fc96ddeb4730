/**
 * The in-process ref listing (http-refs.ts) against git itself: the advertisement git's own
 * upload-pack writes for smart HTTP, parsed and matched, lists what `git ls-remote` lists for the
 * same patterns (branches, annotated and lightweight tags, a branch whose name ends like another);
 * and the commit and branch a clone would have, read from it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../../helpers/git-test-env.js';
import { matchingRefs, parseAdvertisement } from '../../../../workers/git/http-refs.js';
import { parseLsRemote } from '../../../../workers/git/ls-remote.js';
import { headOf } from '../../../../workers/git/tree-clone.js';

const git = async (args: string[]): Promise<string> =>
  (await execa('git', args, { env: { ...gitTestEnv, GIT_PROTOCOL: '' }, extendEnv: false })).stdout;

const pkt = (text: string): Buffer =>
  Buffer.from(`${(text.length + 4).toString(16).padStart(4, '0')}${text}`, 'latin1');

/** What `git http-backend` answers to `GET info/refs?service=git-upload-pack` (protocol v0). */
async function advertisement(dir: string): Promise<Buffer> {
  const refs = await execa('git', ['upload-pack', '--http-backend-info-refs', '--stateless-rpc', dir], {
    env: gitTestEnv,
    extendEnv: false,
    encoding: 'buffer',
    // Every byte as git wrote it.
    stripFinalNewline: false,
  });
  return Buffer.concat([pkt('# service=git-upload-pack\n'), Buffer.from('0000'), refs.stdout]);
}

test('the advertisement lists what git ls-remote lists', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-http-refs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await git(['init', '-q', '-b', 'main', dir]);
  await git(['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'one']);
  await git(['-C', dir, 'tag', '-a', '-m', 'annotated', 'v1']);
  await git(['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'two']);
  await git(['-C', dir, 'tag', 'light']);
  await git(['-C', dir, 'branch', 'team/main', 'HEAD~1']);
  const parsed = parseAdvertisement(await advertisement(dir));
  if (parsed === undefined) return t.fail('not parsed');
  const { refs } = parsed;
  t.deepEqual(headOf(parsed, undefined), {
    commit: (await git(['-C', dir, 'rev-parse', 'HEAD'])).trim(),
    branch: 'main',
  });
  for (const patterns of [
    ['HEAD'],
    ['refs/heads/main', 'refs/tags/main', 'refs/tags/main^{}'],
    ['refs/heads/v1', 'refs/tags/v1', 'refs/tags/v1^{}'],
    ['main'],
    ['light'],
    [],
  ]) {
    const listed = parseLsRemote(await git(['ls-remote', '--', dir, ...patterns]));
    t.deepEqual(matchingRefs(refs, patterns), listed, patterns.join(' '));
  }
});

test('an empty repository lists nothing; anything else is not an advertisement', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-http-refs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await git(['init', '-q', '--bare', dir]);
  t.deepEqual(parseAdvertisement(await advertisement(dir))?.refs, []);
  t.is(parseAdvertisement(Buffer.from('<html>sign in</html>')), undefined);
  t.is(
    parseAdvertisement(Buffer.concat([pkt('# service=git-upload-pack\n'), Buffer.from('0000')])),
    undefined,
  );
  t.is(parseAdvertisement(Buffer.concat([pkt('# service=git-upload-pack\n'), Buffer.from('00')])), undefined);
});

test('the commit and branch a clone would have: the default branch by its symref, a tag peeled', (t) => {
  const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(40)) as [string, string, string];
  const advertised = {
    refs: [
      [a, 'HEAD'],
      [a, 'refs/heads/main'],
      [b, 'refs/tags/v1'],
      [c, 'refs/tags/v1^{}'],
    ] as Array<[string, string]>,
    capabilities: ['multi_ack', 'symref=HEAD:refs/heads/main', 'object-format=sha1'],
  };
  t.deepEqual(headOf(advertised, undefined), { commit: a, branch: 'main' });
  t.deepEqual(headOf(advertised, 'main'), { commit: a, branch: 'main' });
  t.deepEqual(headOf(advertised, 'v1'), { commit: c, branch: 'v1' });
  t.is(headOf(advertised, 'gone'), undefined);
  // No symref for HEAD, or another object format: git clones.
  t.is(headOf({ ...advertised, capabilities: [] }, undefined), undefined);
  t.is(headOf({ ...advertised, capabilities: ['object-format=sha256'] }, 'main'), undefined);
});
