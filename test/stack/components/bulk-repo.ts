// A fixture repository with generated bulk content (the `large` fixture), written straight into a
// bare repository by one `git fast-import` stream: no working tree, no `git add` of 12 000 files.
// The bytes come from AES-256-CTR keyed by the seed (deterministic, incompressible), stored
// uncompressed in the pack (`pack.compression=0`: zlib would only burn CPU on random bytes), so the
// repository really is that large on the wire. Commit dates are fixed: same fixture, same commit ids.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import type { Writable } from 'node:stream';
import type { Fixture, FixtureBulk } from '../fixtures.js';

const IDENT = 'IBS Fixture <fixture@ibs.invalid>';

/** The generated files, in order: path and size (pure, deterministic). */
export function bulkFiles(bulk: FixtureBulk): Array<{ path: string; size: number }> {
  const span = bulk.maxBytes - bulk.minBytes;
  return Array.from({ length: bulk.files }, (_, i) => {
    const h = crypto.createHash('sha256').update(`${bulk.seed}:${i}`).digest();
    const folder = String(i % bulk.folders).padStart(3, '0');
    return {
      path: `packages/pkg-${folder}/src/module-${String(i).padStart(5, '0')}.dat`,
      size: bulk.minBytes + (h.readUInt32BE(0) % span),
    };
  });
}

async function write(out: Writable, chunk: string | Buffer): Promise<void> {
  if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

async function data(out: Writable, content: Buffer): Promise<void> {
  await write(out, `data ${content.length}\n`);
  await write(out, content);
  await write(out, '\n');
}

async function stream(out: Writable, fixture: Fixture): Promise<void> {
  const bulk = fixture.bulk ? bulkFiles(fixture.bulk) : [];
  const key = crypto
    .createHash('sha256')
    .update(fixture.bulk?.seed ?? '')
    .digest();
  const cipher = crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  for (const [i, file] of bulk.entries()) {
    await write(out, `blob\nmark :${i + 1}\n`);
    await data(out, cipher.update(Buffer.alloc(file.size)));
  }
  const tips = new Map<string, number>();
  let mark = bulk.length;
  for (const [n, c] of fixture.commits.entries()) {
    mark += 1;
    const when = Date.UTC(2024, 0, 1, 12, n + 1) / 1000;
    await write(out, `commit refs/heads/${c.branch}\nmark :${mark}\n`);
    await write(out, `author ${IDENT} ${when} +0000\ncommitter ${IDENT} ${when} +0000\n`);
    await data(out, Buffer.from(`${c.message}\n`));
    const parent = tips.get(c.branch) ?? (c.from === undefined ? undefined : tips.get(c.from));
    if (parent !== undefined) await write(out, `from :${parent}\n`);
    if (n === 0)
      for (const [i, file] of bulk.entries()) await write(out, `M 100644 :${i + 1} ${file.path}\n`);
    for (const [path, content] of Object.entries(c.files)) {
      const mode = c.executable?.includes(path) ? '100755' : '100644';
      await write(out, `M ${mode} inline ${path}\n`);
      await data(out, Buffer.from(content));
    }
    tips.set(c.branch, mark);
  }
  await write(out, 'done\n');
  out.end();
}

/** Fills the (freshly `git init --bare`) repository `bare` with the fixture's commits and bulk. */
export async function importFixture(bare: string, fixture: Fixture, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(
    'git',
    ['-c', 'pack.compression=0', '-C', bare, 'fast-import', '--quiet', '--done', '--force'],
    { env, stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.on('error', () => undefined);
  await stream(child.stdin, fixture);
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import for ${fixture.name} exited with ${code}: ${stderr}`);
}
