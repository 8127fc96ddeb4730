/**
 * The in-memory pack reader (pack.ts) against git: a pack git writes, deltas and all, reads to
 * exactly the objects git stores, each under its id with its bytes; a damaged pack reads to nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../helpers/git-test-env.js';
import { readPack } from '../../../workers/git/pack.js';

const env = gitTestEnv;

test('a pack with deltas reads to the objects git stores', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-pack-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const git = async (args: string[], input?: string) =>
    (
      await execa('git', ['-C', dir, ...args], {
        env,
        extendEnv: false,
        ...(input === undefined ? {} : { input }),
      })
    ).stdout;
  await git(['init', '-q', '-b', 'main']);
  const body = Array.from({ length: 200 }, (_, i) => `line ${i} of a file that changes little\n`).join('');
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 40; i++) await writeFile(join(dir, `file-${i}.txt`), `${body}round ${round}\n`);
    await git(['add', '-A']);
    await git(['commit', '-q', '-m', `round ${round}`]);
  }
  const objects = await git(['rev-list', '--objects', '--all']);
  const packed = await execa('git', ['-C', dir, 'pack-objects', '--stdout', '--delta-base-offset'], {
    env,
    extendEnv: false,
    input: `${objects}\n`,
    encoding: 'buffer',
  });
  const pack = Buffer.from(packed.stdout);
  const read = readPack(pack);
  if (read === undefined) return t.fail('not read');
  const ids = objects
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((id) => id !== '');
  t.deepEqual([...read.keys()].sort(), [...new Set(ids)].sort());
  for (const id of ids.slice(0, 20)) {
    const type = (await git(['cat-file', '-t', id])).trim();
    const bytes = await execa('git', ['-C', dir, 'cat-file', type, id], {
      env,
      extendEnv: false,
      encoding: 'buffer',
      stripFinalNewline: false,
    });
    t.is(String(read.get(id)?.type), type);
    t.true(read.get(id)?.data.equals(Buffer.from(bytes.stdout)), id);
  }
  const damaged = Buffer.from(pack);
  damaged[40] = (damaged[40] ?? 0) ^ 0xff;
  t.is(readPack(damaged), undefined);
  t.is(readPack(pack.subarray(0, pack.length - 30)), undefined);
});
