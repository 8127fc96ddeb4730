/**
 * Variables such as `${containerWorkspaceFolder}` or `${localEnv:HOME}` in label text. The
 * service has no workspace, host or container to substitute them from, so they stay as written
 * and each distinct one (per entry and top-level field) gets a warning. Pure.
 */
import { type Entry, originOf } from './entries.js';
import { type DevcontainerWarning, warning } from './warnings.js';

/** The pattern the Dev Containers CLI substitutes. */
const VARIABLE = /\$\{(.*?)\}/g;

const stringsIn = function* (value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsIn(item);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) yield* stringsIn(item);
};

export const variableWarnings = (entries: readonly Entry[]): DevcontainerWarning[] => {
  const warnings: DevcontainerWarning[] = [];
  for (const entry of entries) {
    for (const [field, value] of Object.entries(entry)) {
      if (field === 'id') continue;
      const found = new Set<string>();
      for (const text of stringsIn(value)) for (const match of text.matchAll(VARIABLE)) found.add(match[0]);
      for (const variable of found) {
        warnings.push(
          warning(
            'unsubstituted_variable',
            `${variable} in ${field} of ${originOf(entry)} is left unsubstituted (no workspace or container to read it from)`,
          ),
        );
      }
    }
  }
  return warnings;
};
