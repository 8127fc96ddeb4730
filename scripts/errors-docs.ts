/**
 * Writes docs/errors.md from the error table (src/errors/errors.ts). `--check` only reports drift
 * (exit 1). Run: `npm run docs:errors [-- --check]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderErrorsDoc } from '../src/errors/docs.js';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'errors.md');
const current = ((): string | undefined => {
  try {
    return readFileSync(docPath, 'utf8');
  } catch {
    return undefined;
  }
})();
const doc = renderErrorsDoc();

if (process.argv.includes('--check')) {
  if (current !== doc) {
    console.error('docs/errors.md is out of date: run `npm run docs:errors`');
    process.exitCode = 1;
  }
} else {
  if (current !== doc) writeFileSync(docPath, doc);
  console.log(current === doc ? 'docs/errors.md already up to date' : 'docs/errors.md updated');
}
