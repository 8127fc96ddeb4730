/**
 * The settings file: read once, its comma-separated list texts typed, validated whole against the
 * schema of the option table. The values that failed validation are remembered so that neither
 * an option nor a side file's section uses them.
 */
import { readStructuredFile } from './files.js';
import { OPTIONS } from './options.js';
import { formatAjvErrors, pointerToPath } from './ajv-problems.js';
import { validateSettings } from './schema.js';
import { SIDE_FILES } from './side-files.js';
import { valueFromText } from './text-values.js';

type Settings = Record<string, unknown>;

export interface SettingsFile {
  readonly path: string;
  readonly values: Settings;
  /** Paths (as formatted in problems) that failed validation: their values are not used. */
  readonly invalid: ReadonlySet<string>;
}

const secretLists = Object.values(SIDE_FILES).filter((side) => side.secret);
const secretOptions = OPTIONS.filter((o) => o.secret).map((o) => o.settingsKey ?? o.name);

/** Whether a problem at `path` may show the value: never under a secret option or list. */
function mayShow(path: string): boolean {
  return (
    !secretOptions.some((key) => path.startsWith(key)) &&
    // The list's section too: a whole section of the wrong type may be a secret itself.
    !secretLists.some(({ settingsKey }) => path.startsWith(settingsKey) || path === settingsKey.split('.')[0])
  );
}

/** The value at a dotted key (`build.platforms`), or undefined. */
export function settingsValue(settings: Settings | undefined, key: string): unknown {
  let node: unknown = settings;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** List options that also take one comma-separated string in the settings file: that string as a list. */
function listsFromText(values: unknown): unknown {
  for (const option of OPTIONS) {
    if (option.settingsText !== true || option.settingsKey === undefined) continue;
    const parts = option.settingsKey.split('.');
    const parent = settingsValue(values as Settings, parts.slice(0, -1).join('.'));
    const last = parts.at(-1) ?? '';
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) continue;
    const text = (parent as Record<string, unknown>)[last];
    if (Array.isArray(text) && option.settingsItem !== undefined) {
      (parent as Record<string, unknown>)[last] = text.map(option.settingsItem);
    }
    if (typeof text !== 'string') continue;
    const typed = valueFromText(option, text);
    (parent as Record<string, unknown>)[last] = typed.ok ? typed.value : text;
  }
  return values;
}

export function readSettings(path: string, problems: string[]): SettingsFile | undefined {
  const what = 'settings file';
  const file = readStructuredFile(path, what);
  if (!file.ok) {
    problems.push(...file.problems);
    return undefined;
  }
  const values = listsFromText(file.value ?? {});
  if (validateSettings(values)) return { path, values: values as Settings, invalid: new Set() };
  const errors = validateSettings.errors ?? [];
  problems.push(...formatAjvErrors(errors, { source: `${what} ${path}`, showValue: mayShow }));
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return undefined;
  return {
    path,
    values: values as Settings,
    invalid: new Set(errors.map((e) => pointerToPath(e.instancePath))),
  };
}

/** Whether the settings value at `key` (or anything below it) failed validation. */
export function isInvalid(settings: SettingsFile, key: string): boolean {
  for (const path of settings.invalid) {
    if (path === key || path.startsWith(`${key}[`) || path.startsWith(`${key}.`)) return true;
  }
  return false;
}
