/** The README configuration table, generated from the option table. Pure. */
import { OPTIONS } from './options.js';

export const TABLE_START = '<!-- config-table:start -->';
export const TABLE_END = '<!-- config-table:end -->';

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (text: string): string => `\`${text}\``;

export function renderConfigTable(): string {
  const rows = [
    '| Option | Flag | Env var | Settings key | Default | Description |',
    '|---|---|---|---|---|---|',
  ];
  for (const option of OPTIONS) {
    const flag = option.placeholder ? `${option.flag} ${option.placeholder}` : option.flag;
    const values = option.values ? ` Values: ${option.values.map(code).join(', ')}.` : '';
    rows.push(
      `| ${cell(option.label)} | ${cell(code(flag))} | ${code(option.env)} | ${
        option.settingsKey ? code(option.settingsKey) : 'none'
      } | ${cell(option.defaultText)} | ${cell(option.description)}${values}${option.secret ? ' Secret.' : ''} |`,
    );
  }
  return rows.join('\n');
}

/** Replaces the text between the markers (exclusive) with the table; everything else is kept. */
export function replaceConfigTable(readme: string, table: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`README has no ${TABLE_START} ... ${TABLE_END} section`);
  return `${readme.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${readme.slice(end)}`;
}

/** The table currently between the markers (trimmed), or undefined without markers. */
export function currentConfigTable(readme: string): string | undefined {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) return undefined;
  return readme.slice(start + TABLE_START.length, end).trim();
}
