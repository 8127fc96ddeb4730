/**
 * The in-memory pack reader (pack.ts) against git: a pack git writes, deltas and all, reads to
 * exactly the objects git stores, each under its id with its bytes; a damaged pack, or one that
 * would inflate beyond what it declares, reads to nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import test from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../../helpers/git-test-env.js';
import { readPack } from '../../../../workers/git/pack.js';

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
    // A pack's checksum may end in a newline byte: keep every byte.
    stripFinalNewline: false,
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

/** A one-entry pack: a blob whose header declares `declared` bytes, with `data` deflated after it. */
function onePack(declared: number, data: Buffer): Buffer {
  const header: number[] = [];
  let size = declared;
  let byte = (3 << 4) | (size & 0x0f);
  size = Math.floor(size / 16);
  while (size > 0) {
    header.push(byte | 0x80);
    byte = size & 0x7f;
    size = Math.floor(size / 128);
  }
  header.push(byte);
  const start = Buffer.alloc(12);
  start.write('PACK', 0, 'latin1');
  start.writeUInt32BE(2, 4);
  start.writeUInt32BE(1, 8);
  const body = Buffer.concat([start, Buffer.from(header), deflateSync(data)]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

test('a pack that inflates beyond what it declares, or declares a huge object, reads to nothing', (t) => {
  const small = Buffer.from('hello\n');
  t.is(readPack(onePack(small.length, small))?.size, 1, 'a well-formed one-blob pack reads');
  // 64 MiB of zeros deflate to about 64 KiB: the entry says 16 bytes.
  t.is(readPack(onePack(16, Buffer.alloc(64 * 1024 * 1024))), undefined);
  t.is(readPack(onePack(2 ** 40, small)), undefined);
});
