import test from 'ava';
import { readFileSync } from 'node:fs';
import {
  currentConfigTable,
  renderConfigTable,
  replaceConfigTable,
  TABLE_END,
  TABLE_START,
} from '../../../../src/config/docs.js';
import { renderHelp } from '../../../../src/config/help.js';
import { OPTIONS } from '../../../../src/config/options.js';

test('the README configuration table matches the option table (run `npx tsx scripts/config-docs.ts`)', (t) => {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  t.is(currentConfigTable(readme), renderConfigTable());
});

test('the table has one row per option with flag, env var, settings key and default', (t) => {
  const rows = renderConfigTable().split('\n').slice(2);
  t.is(rows.length, OPTIONS.length);
  for (const [i, option] of OPTIONS.entries()) {
    const row = rows[i] ?? '';
    t.true(row.includes(`\`${option.flag}`), option.flag);
    t.true(row.includes(`\`${option.env}\``), option.env);
    t.true(row.includes(option.settingsKey ? `\`${option.settingsKey}\`` : '| none |'), option.name);
    t.true(row.includes(option.defaultText.replace(/\|/g, '\\|')), option.name);
  }
});

test('only the text between the markers is replaced', (t) => {
  const readme = `# T\n\nbefore\n${TABLE_START}\nold table\n${TABLE_END}\nafter\n`;
  const out = replaceConfigTable(readme, 'NEW');
  t.is(out, `# T\n\nbefore\n${TABLE_START}\n\nNEW\n\n${TABLE_END}\nafter\n`);
  t.is(replaceConfigTable(out, 'NEW'), out);
  t.throws(() => replaceConfigTable('# no markers\n', 'x'));
});

test('--help lists every option with its flag, env var, settings key and default', (t) => {
  const help = renderHelp('1.2.3');
  t.true(help.includes('1.2.3'));
  for (const option of OPTIONS) {
    const at = help.indexOf(`  ${option.flag}`);
    t.true(at >= 0, option.flag);
    const block = help.slice(at, help.indexOf('\n  --', at + 1));
    t.true(block.includes(`env: ${option.env}`), option.env);
    t.true(block.includes(`settings: ${option.settingsKey ?? 'none'}`), option.name);
    t.true(block.includes(`default: ${option.defaultText.replace(/`/g, '')}`), option.name);
  }
  t.true(help.includes('--version'));
});
