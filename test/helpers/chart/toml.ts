// A reader for the TOML the chart writes (buildkitd.toml): tables, arrays of tables, and keys with
// integers, strings, booleans or lists of strings. Anything else throws, so a template that writes
// more than this is noticed rather than misread.
type TomlValue = number | string | boolean | string[];
export type TomlTable = { [key: string]: TomlValue | TomlTable | TomlTable[] };

const KEY = '[A-Za-z0-9_-]+';
const TABLE = new RegExp(`^\\[(${KEY}(?:\\.${KEY})*)\\]$`);
const ARRAY_TABLE = new RegExp(`^\\[\\[(${KEY}(?:\\.${KEY})*)\\]\\]$`);
const ENTRY = new RegExp(`^(${KEY})\\s*=\\s*(.+)$`);
const STRING = /^"([^"\\]*)"$/;

function value(text: string, line: number): TomlValue {
  if (/^-?[0-9]+$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  const s = STRING.exec(text);
  if (s) return s[1] ?? '';
  if (text.startsWith('[') && text.endsWith(']')) {
    const inner = text.slice(1, -1).trim();
    if (inner === '') return [];
    return inner.split(',').map((item) => {
      const m = STRING.exec(item.trim());
      if (!m) throw new Error(`line ${line}: not a list of strings: ${text}`);
      return m[1] ?? '';
    });
  }
  throw new Error(`line ${line}: unsupported value: ${text}`);
}

export function parseToml(text: string): TomlTable {
  const root: TomlTable = {};
  let current = root;
  /** The table at a dotted path (made when missing; the last entry of an array of tables). */
  const tableAt = (path: string[], line: number): TomlTable => {
    let node = root;
    for (const key of path) {
      const next = (node[key] ??= {});
      if (Array.isArray(next)) node = next.at(-1) as TomlTable;
      else if (typeof next === 'object') node = next;
      else throw new Error(`line ${line}: ${key} is a value, not a table`);
    }
    return node;
  };
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const arrayTable = ARRAY_TABLE.exec(line);
    const table = TABLE.exec(line);
    if (arrayTable) {
      const path = (arrayTable[1] ?? '').split('.');
      const parent = tableAt(path.slice(0, -1), i + 1);
      const key = path.at(-1) ?? '';
      const list = (parent[key] ??= []) as TomlTable[];
      if (!Array.isArray(list)) throw new Error(`line ${i + 1}: ${key} is no array of tables`);
      current = {};
      list.push(current);
    } else if (table) {
      current = tableAt((table[1] ?? '').split('.'), i + 1);
    } else {
      const entry = ENTRY.exec(line);
      if (!entry) throw new Error(`line ${i + 1}: not TOML this reader knows: ${line}`);
      const key = entry[1] ?? '';
      if (key in current) throw new Error(`line ${i + 1}: ${key} given twice`);
      current[key] = value((entry[2] ?? '').trim(), i + 1);
    }
  });
  return root;
}
