/**
 * The one loader of the side files (side-files.ts): read (size limit), JSON or YAML, checked with
 * the row's schema or its own check, problems naming the file and the entry. A file named by its
 * option replaces the settings file's list.
 */
import type { ValidateFunction } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { formatAjvErrors } from './ajv-problems.js';
import { readStructuredFile } from './files.js';
import type { OptionValues } from './option-values.js';
import { isInvalid, settingsValue, type SettingsFile } from './settings-file.js';
import {
  fileWhat,
  listSchema,
  SIDE_FILES,
  type ListOrigin,
  type SideFile,
  type SideLists,
} from './side-files.js';

/** Each row's schema, compiled once. */
const VALIDATORS: ReadonlyMap<string, ValidateFunction> = new Map(
  Object.entries(SIDE_FILES).map(([name, side]) => [name, ajv.compile(listSchema(side))]),
);

interface Row<T> {
  readonly side: SideFile<T>;
  readonly validate: ValidateFunction;
}

/** The entries of a parsed list (undefined: none), checked as the row says. */
function entriesOf<T>({ side, validate }: Row<T>, raw: unknown, origin: ListOrigin, problems: string[]): T[] {
  if (side.entries !== undefined) return side.entries(raw, origin.source, problems);
  const value = raw ?? [];
  if (!validate(value)) {
    const showValue = (): boolean => !side.secret;
    problems.push(...formatAjvErrors(validate.errors ?? [], { source: origin.source, showValue }));
    return [];
  }
  const entries = value as T[];
  problems.push(...(side.across?.(entries, origin) ?? []));
  return entries;
}

/** One list: from its file when its option names one, else from the settings file, else none. */
function loadList<T>(
  row: Row<T>,
  options: OptionValues,
  settings: SettingsFile | undefined,
  problems: string[],
): T[] {
  const { side } = row;
  const path = options[side.option];
  if (path !== undefined) {
    const what = fileWhat(side);
    const read = readStructuredFile(path, what);
    if (!read.ok) {
      problems.push(...read.problems);
      return [];
    }
    const source = `${what} ${path}`;
    return entriesOf(row, read.value, { source, item: (index) => `${source}: [${index}]` }, problems);
  }
  if (settings === undefined || isInvalid(settings, side.settingsKey)) return [];
  const source = `settings file ${settings.path}: ${side.settingsKey}`;
  const raw = settingsValue(settings.values, side.settingsKey);
  return entriesOf(row, raw, { source, item: (index) => `${source}[${index}]` }, problems);
}

/** Every side file's list, in the order of SIDE_FILES (their problems too). */
export function loadSideFiles(
  options: OptionValues,
  settings: SettingsFile | undefined,
  problems: string[],
): SideLists {
  const lists: Record<string, unknown[]> = {};
  for (const [name, side] of Object.entries(SIDE_FILES) as [string, SideFile<unknown>][]) {
    const validate = VALIDATORS.get(name) as ValidateFunction;
    lists[name] = loadList({ side, validate }, options, settings, problems);
  }
  return lists as unknown as SideLists;
}
