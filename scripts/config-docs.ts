/**
 * Rewrites the configuration table of README.md (between the config-table markers) from the
 * option table. `--check` only reports drift (exit 1). Run: `npx tsx scripts/config-docs.ts [--check]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentConfigTable, renderConfigTable, replaceConfigTable } from '../src/config/docs.js';

const readmePath = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const table = renderConfigTable();

if (process.argv.includes('--check')) {
  if (currentConfigTable(readme) !== table) {
    console.error('README.md configuration table is out of date: run `npx tsx scripts/config-docs.ts`');
    process.exitCode = 1;
  }
} else {
  const updated = replaceConfigTable(readme, table);
  if (updated !== readme) writeFileSync(readmePath, updated);
  console.log(updated === readme ? 'README.md table already up to date' : 'README.md table updated');
}
