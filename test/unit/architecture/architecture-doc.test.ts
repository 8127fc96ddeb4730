/**
 * ARCHITECTURE.md stays one screen and true: at most 80 lines of at most 100 columns, every
 * `src/...` and `workers/...` path it names exists, it names every folder of the layers that
 * .dependency-cruiser.cjs checks, and its diagram is the code's graph both ways: each arrow it
 * draws is an import dependency-cruiser finds, and each import between two of its nodes goes along
 * its arrows (to the right in a row, or to a row below).
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseConfig from 'dependency-cruiser/config-utl/extract-depcruise-config';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

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

/**
 * The diagram: its rows from the top, each row its groups from the left (joined by `->`: each
 * node of a group imports each node of the next), each group its nodes. A node is a file
 * (`src/main.ts`), a folder (`src/http`: every file below it that no other node holds) or
 * `workers/` (the files directly in workers/). A line starting with `v` is the arrow from the row
 * above to the row below (some node of it imports some node below); text in parentheses is a
 * comment.
 */
type Diagram = string[][][];

const NODE = /(?<![\w./-])(?:src|workers)\/(?:[\w.-]+(?:\/[\w.-]+)*)?/g;

function diagramOf(markdown: string): Diagram {
  const block = /```\n([\s\S]*?)\n```/.exec(markdown)?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s*v(\s|$)/.test(line))
    .map((line) =>
      line
        .replace(/\([^)]*\)/g, '')
        .split('->')
        .map((group) => [...group.matchAll(NODE)].map((m) => m[0].replace(/\/$/, ''))),
    );
}

/** The node of the diagram that holds `module`, if any. */
function nodeOf(nodes: readonly string[], module: string): string | undefined {
  if (nodes.includes(module)) return module;
  const holds = (node: string): boolean =>
    node.includes('/') ? module.startsWith(`${node}/`) : new RegExp(`^${node}/[^/]+$`).test(module);
  return nodes.filter(holds).sort((a, b) => b.length - a.length)[0];
}

/** An import of the code: one module of src/ or workers/ to another. */
type Edge = readonly [from: string, to: string];

/** What the diagram and the graph disagree on; empty when each arrow is the code's, both ways. */
function disagreements(diagram: Diagram, modules: readonly string[], edges: readonly Edge[]): string[] {
  const where = new Map<string, { row: number; group: number }>();
  diagram.forEach((row, r) =>
    row.forEach((group, g) => group.forEach((n) => where.set(n, { row: r, group: g }))),
  );
  const nodes = [...where.keys()];
  const unplaced = modules.filter((m) => nodeOf(nodes, m) === undefined).map((m) => `no node holds ${m}`);
  const links = new Map<string, string>(); // "from -> to" of nodes, with one import that makes it
  for (const [from, to] of edges) {
    const [a, b] = [nodeOf(nodes, from), nodeOf(nodes, to)];
    if (a !== undefined && b !== undefined && a !== b) links.set(`${a} -> ${b}`, `${from} -> ${to}`);
  }
  const linked = (as: readonly string[], bs: readonly string[]): boolean =>
    as.some((a) => bs.some((b) => links.has(`${a} -> ${b}`)));
  const lacking = diagram.flatMap((row, r) => [
    ...row
      .slice(1)
      .flatMap((group, g) =>
        (row[g] ?? []).flatMap((a) =>
          group.filter((b) => !links.has(`${a} -> ${b}`)).map((b) => `drawn, not in the code: ${a} -> ${b}`),
        ),
      ),
    ...(r > 0 && !linked((diagram[r - 1] ?? []).flat(), row.flat())
      ? [`drawn, not in the code: ${(diagram[r - 1] ?? []).flat().join(' ')} v ${row.flat().join(' ')}`]
      : []),
  ]);
  const missing = [...links].flatMap(([link, example]) => {
    const [a, b] = link.split(' -> ').map((n) => where.get(n));
    const along =
      a !== undefined && b !== undefined && (b.row > a.row || (b.row === a.row && b.group > a.group));
    return along ? [] : [`in the code, not drawn: ${link} (${example})`];
  });
  return [...unplaced, ...lacking, ...missing];
}

/** The modules of src/ and workers/ and their imports, as `depcruise src workers` finds them. */
async function codeGraph(): Promise<{ modules: string[]; edges: Edge[] }> {
  const config = await extractDepcruiseConfig(join(ROOT, '.dependency-cruiser.cjs'));
  const previous = process.cwd();
  process.chdir(ROOT);
  try {
    const { output } = await cruise(
      ['src', 'workers'],
      { ...config.options, validate: false },
      {},
      {
        tsConfig: extractTSConfig(join(ROOT, 'tsconfig.json')),
      },
    );
    const ours = (path: string): boolean => /^(src|workers)\//.test(path);
    const modules = (output as ICruiseResult).modules.filter((m) => ours(m.source));
    return {
      modules: modules.map((m) => m.source),
      edges: modules.flatMap((m) =>
        m.dependencies.filter((d) => ours(d.resolved)).map((d): Edge => [m.source, d.resolved]),
      ),
    };
  } finally {
    process.chdir(previous);
  }
}

test('the arrows of the diagram are the imports of the code, both ways', async (t) => {
  const diagram = diagramOf(doc);
  t.true(diagram.length > 8, `only ${diagram.length} rows read`);
  const { modules, edges } = await codeGraph();
  t.true(edges.length > 500, `only ${edges.length} imports found`);
  t.deepEqual(disagreements(diagram, modules, edges), []);
});

const SAMPLE = [
  '```',
  'src/main.ts -> src/http   (the top)',
  '      v  (a comment: src/nowhere)',
  'workers/    src/rules',
  '```',
].join('\n');
const MODULES = ['src/main.ts', 'src/http/app.ts', 'src/http/a/b.ts', 'workers/w.ts', 'src/rules/r.ts'];

test('the diagram is read as rows of groups of nodes; comments and `v` lines are no nodes', (t) => {
  t.deepEqual(diagramOf(SAMPLE), [[['src/main.ts'], ['src/http']], [['workers', 'src/rules']]]);
  const nodes = diagramOf(SAMPLE).flat(2);
  t.is(nodeOf(nodes, 'src/http/a/b.ts'), 'src/http');
  t.is(nodeOf(nodes, 'workers/w.ts'), 'workers');
  t.is(nodeOf(nodes, 'workers/git/clone.ts'), undefined, 'workers/ holds its own files only');
});

test('an arrow the code lacks, an import the diagram lacks and a module of no node are each found', (t) => {
  const diagram = diagramOf(SAMPLE);
  const agreeing: Edge[] = [
    ['src/main.ts', 'src/http/app.ts'],
    ['src/http/a/b.ts', 'workers/w.ts'],
    ['src/main.ts', 'src/rules/r.ts'],
  ];
  t.deepEqual(disagreements(diagram, MODULES, agreeing), []);
  t.deepEqual(disagreements(diagram, MODULES, agreeing.slice(1)), [
    'drawn, not in the code: src/main.ts -> src/http',
  ]);
  t.deepEqual(disagreements(diagram, MODULES, [agreeing[0] as Edge]), [
    'drawn, not in the code: src/main.ts src/http v workers src/rules',
  ]);
  t.deepEqual(disagreements(diagram, MODULES, [...agreeing, ['workers/w.ts', 'src/rules/r.ts']]), [
    'in the code, not drawn: workers -> src/rules (workers/w.ts -> src/rules/r.ts)',
  ]);
  t.deepEqual(disagreements(diagram, MODULES, [...agreeing, ['src/http/app.ts', 'src/main.ts']]), [
    'in the code, not drawn: src/http -> src/main.ts (src/http/app.ts -> src/main.ts)',
  ]);
  t.deepEqual(disagreements(diagram, [...MODULES, 'src/config/c.ts'], agreeing), [
    'no node holds src/config/c.ts',
  ]);
});
