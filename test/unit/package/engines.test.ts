// Every installed package accepts the oldest Node.js the project supports (package.json#engines):
// otherwise `npm ci` prints EBADENGINE warnings on it and the package may not run there.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = <T>(path: string): T => JSON.parse(readFileSync(`${ROOT}/${path}`, 'utf8')) as T;

type Version = [number, number, number];
const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** `20`, `20.19`, `20.x`, `20.19.0`: the given parts, and how many there are (`x`/`*` ends them). */
function partial(text: string): { version: Version; parts: number } {
  const fields = text.replace(/^v/, '').split('.');
  const numbers: number[] = [];
  for (const field of fields) {
    if (field === 'x' || field === 'X' || field === '*') break;
    if (!/^\d+$/.test(field)) throw new Error(`not a version: ${text}`);
    numbers.push(Number(field));
  }
  return { version: [numbers[0] ?? 0, numbers[1] ?? 0, numbers[2] ?? 0], parts: numbers.length };
}

/** The first version past a partial one (`20.19` -> 20.20.0; `20` -> 21.0.0). */
function after(version: Version, parts: number): Version {
  if (parts === 0) return [Infinity, 0, 0];
  if (parts === 1) return [version[0] + 1, 0, 0];
  if (parts === 2) return [version[0], version[1] + 1, 0];
  return [version[0], version[1], version[2] + 1];
}

function comparator(text: string, have: Version): boolean {
  const match = /^(>=|<=|>|<|\^|~|=)?(.+)$/.exec(text);
  if (match === null) throw new Error(`not a comparator: ${text}`);
  const { version, parts } = partial(match[2] ?? '');
  const end = after(version, parts);
  switch (match[1]) {
    case '>=':
      return compare(have, version) >= 0;
    case '>':
      return compare(have, end) >= 0;
    case '<':
      return compare(have, version) < 0;
    case '<=':
      return compare(have, end) < 0;
    case '^':
      return compare(have, version) >= 0 && compare(have, after(version, version[0] > 0 ? 1 : 2)) < 0;
    case '~':
      return compare(have, version) >= 0 && compare(have, after(version, Math.min(parts, 2))) < 0;
    default:
      return compare(have, version) >= 0 && compare(have, end) < 0;
  }
}

/** Whether `have` satisfies an npm version range (the forms packages use in engines.node). */
export function satisfies(range: string, have: Version): boolean {
  return range.split('||').some((alternative) => {
    const comparators = alternative
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .trim()
      .split(/\s+/);
    return comparators.every((c) => c === '' || c === '*' || comparator(c, have));
  });
}

test('the range rules read the forms packages write', (t) => {
  const v: Version = [20, 19, 0];
  for (const yes of ['>=18', '^20.19.0 || >=22.12.0', '>= 20', '20 || >=22', '>=20 <=24', '*', '>= 10.*'])
    t.true(satisfies(yes, v), yes);
  for (const no of ['>=22.12.0', '^20.20.0', '^18.18', '>=10 <11 || >=12 <13', '14 >=14.17', '<20.19'])
    t.false(satisfies(no, v), no);
});

test("every package in the lock file accepts the project's oldest Node.js", (t) => {
  const project = read<{ engines: { node: string } }>('package.json').engines.node;
  const oldest = /^>=\s*(\d+\.\d+(\.\d+)?)$/.exec(project)?.[1];
  if (oldest === undefined) return t.fail(`package.json#engines.node is not a lower bound: ${project}`);
  const lowest = partial(oldest).version;
  const lock = read<{ packages: Record<string, { version?: string; engines?: { node?: string } }> }>(
    'package-lock.json',
  );
  const refusing = Object.entries(lock.packages)
    .filter(([name, entry]) => name !== '' && entry.engines?.node !== undefined)
    .filter(([, entry]) => !satisfies(entry.engines?.node ?? '*', lowest))
    .map(([name, entry]) => `${name}@${entry.version ?? '?'} wants node ${entry.engines?.node ?? ''}`);
  t.deepEqual(refusing, []);
});
