// ibs ships as one self-contained file (dist/ibs.js, bundled by esbuild): src/client imports its
// own modules, Node's built-ins and the pure rules it shares with the service (src/rules,
// src/secrets), and nothing it reaches imports a package, so the bundle needs no node_modules.
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DIR = join(ROOT, 'src/client');
/** The service folders ibs may share: pure, no I/O, no package. */
const SHARED = /^src\/(rules|secrets)\/[\w-]+\.ts$/;

const specifiersOf = async (file: string): Promise<string[]> =>
  [...(await readFile(file, 'utf8')).matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)].map(
    (m) => m[1] ?? '',
  );

/** Every project file the client reaches, from each of its own files. */
async function reached(): Promise<Set<string>> {
  const todo = (await readdir(DIR)).filter((f) => f.endsWith('.ts')).map((f) => join(DIR, f));
  const seen = new Set<string>();
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of await specifiersOf(file))
      if (spec.startsWith('.')) todo.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
  }
  return seen;
}

test('src/client imports ./ modules, node: built-ins and the shared pure rules only', async (t) => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.ts'));
  t.true(files.length > 5);
  for (const file of files)
    for (const spec of await specifiersOf(join(DIR, file)))
      t.true(
        /^(\.\/[\w-]+\.js|node:[\w/]+|\.\.\/(rules|secrets)\/[\w-]+\.js)$/.test(spec),
        `${file}: ${spec}`,
      );
});

test('nothing the client reaches imports a package: the bundle is self-contained', async (t) => {
  const files = [...(await reached())].map((file) => relative(ROOT, file));
  t.true(
    files.some((file) => SHARED.test(file)),
    'the client shares the service rules',
  );
  for (const file of files) {
    t.true(file.startsWith('src/client/') || SHARED.test(file), `reached: ${file}`);
    for (const spec of await specifiersOf(join(ROOT, file)))
      t.true(spec.startsWith('.') || spec.startsWith('node:'), `${file}: ${spec}`);
  }
});
