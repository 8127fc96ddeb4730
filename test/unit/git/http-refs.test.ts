/**
 * The in-process ref listing (http-refs.ts) against git itself: the advertisement git's own
 * upload-pack writes for smart HTTP, parsed and matched, lists what `git ls-remote` lists for the
 * same patterns (branches, annotated and lightweight tags, a branch whose name ends like another).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../helpers/git-test-env.js';
import { matchingRefs, parseAdvertisement } from '../../../workers/git/http-refs.js';
import { parseLsRemote } from '../../../workers/git/ls-remote.js';

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
  const refs = parseAdvertisement(await advertisement(dir))?.refs;
  if (refs === undefined) return t.fail('not parsed');
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
