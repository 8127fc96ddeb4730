/**
 * The architecture's promises are enforced by lint (eslint.config.js): only the subprocess
 * wrapper starts processes, promises are never left floating and only errors are thrown (the pure
 * modules' no-I/O rule: dependency-rules.test.ts). Each rule is shown to fire on a violating text linted as a real file of the tree.
 */
import test from 'ava';
import { ESLint } from 'eslint';

const eslint = new ESLint();

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

const cases: Array<[string, string, string, string]> = [
  [
    'execa outside the wrapper',
    'workers/git/clone.ts',
    "import { execa } from 'execa';\nexport const x = execa;\n",
    'no-restricted-imports',
  ],
  [
    'node:child_process outside the wrapper',
    'src/registry/client.ts',
    "import { spawn } from 'node:child_process';\nexport const x = spawn;\n",
    'no-restricted-imports',
  ],
  [
    'execa in the wrapper outside its start',
    'src/exec/run.ts',
    "import { execa } from 'execa';\nexport const x = execa;\n",
    'no-restricted-imports',
  ],
  [
    'a function of 61 lines',
    'src/exec/cancellation.ts',
    `export function long(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(58)}  return n;\n}\n`,
    'max-lines-per-function',
  ],
  [
    'a floating promise',
    'src/http/app.ts',
    'async function f(): Promise<void> {}\nexport function g(): void {\n  f();\n}\n',
    '@typescript-eslint/no-floating-promises',
  ],
  [
    'a promise where a void callback is expected',
    'src/http/app.ts',
    "export function g(e: { on(n: string, cb: () => void): void }): void {\n  e.on('x', async () => {});\n}\n",
    '@typescript-eslint/no-misused-promises',
  ],
  [
    'throwing a string',
    'src/http/app.ts',
    "export function g(): void {\n  throw 'boom';\n}\n",
    '@typescript-eslint/only-throw-error',
  ],
];

for (const [name, filePath, code, rule] of cases) {
  test(`lint refuses ${name}`, async (t) => {
    t.true((await ruleIds(filePath, code)).includes(rule));
  });
}

test('the subprocess wrapper itself may import execa', async (t) => {
  t.false(
    (
      await ruleIds('src/exec/run/start.ts', "import { execa } from 'execa';\nexport const x = execa;\n")
    ).includes('no-restricted-imports'),
  );
});
