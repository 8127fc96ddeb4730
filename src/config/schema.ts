/**
 * ajv schemas of the settings file, generated from the option table and the side files' rows
 * (each at its settings key), and of each option's value; compiled once.
 */
import type { ValidateFunction } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { OPTIONS, type OptionSpec, type ValueSchema } from './options.js';
import { listSchema, SIDE_FILES } from './side-files.js';

/** The schema of one option's value (a list option validates each item with the option's schema). */
export function valueSchema(option: OptionSpec): ValueSchema {
  return option.type === 'list' ? { type: 'array', items: option.schema } : option.schema;
}

/** Puts `schema` at a dotted key, each part but the last an object with nothing else allowed. */
function placeSchema(root: Record<string, unknown>, key: string, schema: ValueSchema): void {
  const parts = key.split('.');
  let node = root;
  for (const [i, part] of parts.entries()) {
    const properties = node.properties as Record<string, Record<string, unknown>>;
    if (i === parts.length - 1) {
      properties[part] = { ...schema };
    } else {
      properties[part] ??= { type: 'object', properties: {}, additionalProperties: false };
      node = properties[part];
    }
  }
}

/** The settings file: keys nested as in the side files' and the options' settings keys, nothing else. */
function settingsSchema(): Record<string, unknown> {
  const root: Record<string, unknown> = { type: 'object', properties: {}, additionalProperties: false };
  for (const side of Object.values(SIDE_FILES)) placeSchema(root, side.settingsKey, listSchema(side));
  for (const option of OPTIONS) {
    if (option.settingsKey !== undefined) placeSchema(root, option.settingsKey, valueSchema(option));
  }
  return root;
}

export const validateSettings: ValidateFunction = ajv.compile(settingsSchema());
export const optionValidators: ReadonlyMap<string, ValidateFunction> = new Map(
  OPTIONS.map((option) => [option.name, ajv.compile(valueSchema(option))]),
);
