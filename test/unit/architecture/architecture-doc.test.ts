/**
 * ARCHITECTURE.md stays one screen and true: at most 80 lines of at most 100 columns, every
 * `src/...` and `workers/...` path it names exists, and it names every folder of the layers that
 * .dependency-cruiser.cjs checks.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
const lines = doc.replace(/\n$/, '').split('\n');

test('ARCHITECTURE.md has at most 80 lines, none over 100 columns', (t) => {
  t.true(lines.length <= 80, `${lines.length} lines`);
  const wide = lines.flatMap((line, i) => ([...line].length > 100 ? [`${i + 1}: ${line}`] : []));
  t.deepEqual(wide, []);
});

test('every src/ and workers/ path ARCHITECTURE.md names exists', (t) => {
  const named = new Set([...doc.matchAll(/\b(?:src|workers)\/[A-Za-z0-9_./-]*/g)].map((m) => m[0]));
  t.true(named.size > 20, `only ${named.size} paths named`);
  const missing = [...named].filter((path) => !existsSync(join(ROOT, path.replace(/\.$/, ''))));
  t.deepEqual(missing, []);
});

test('ARCHITECTURE.md names every folder of the dependency layers', (t) => {
  const config = readFileSync(join(ROOT, '.dependency-cruiser.cjs'), 'utf8');
  const layers = /const LAYERS = \[([\s\S]*?)\n\];/.exec(config)?.[1] ?? '';
  const folders = [...layers.matchAll(/'((?:src|workers)\/[^']+)'/g)].map((m) => m[1] ?? '');
  t.true(folders.length > 10, `only ${folders.length} folders in LAYERS`);
  const unnamed = folders.filter((folder) => !new RegExp(`${folder}(?![A-Za-z0-9_-])`).test(doc));
  t.deepEqual(unnamed, []);
});
