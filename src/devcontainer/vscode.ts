/**
 * VS Code customizations of the label entries: extensions and settings, merged. Pure.
 * - extensions: union in entry order, de-duplicated case-insensitively (the first spelling is
 *   kept); `-publisher.name` removes an earlier `publisher.name`.
 * - settings: merged per key, later entries win.
 */
import { type Entry, isPlainObject, originOf, own } from './entries.js';
import { type DevcontainerWarning, warning } from './warnings.js';

export interface VscodeView {
  extensions: string[];
  settings: Record<string, unknown>;
}

export const mergeVscode = (
  entries: readonly Entry[],
): { vscode: VscodeView; warnings: DevcontainerWarning[] } => {
  const warnings: DevcontainerWarning[] = [];
  const extensions = new Map<string, string>(); // lower-case id -> first spelling, in order
  const settings: Record<string, unknown> = {};

  for (const entry of entries) {
    const origin = originOf(entry);
    const vscode = own(own(entry, 'customizations'), 'vscode');
    if (vscode === undefined || vscode === null) continue;
    if (!isPlainObject(vscode)) {
      warnings.push(
        warning('unexpected_type', `customizations.vscode of ${origin} is not an object; ignored`),
      );
      continue;
    }

    const list = own(vscode, 'extensions');
    if (list !== undefined && !Array.isArray(list)) {
      warnings.push(
        warning(
          'skipped_extension',
          `customizations.vscode.extensions of ${origin} is not an array; ignored`,
        ),
      );
    }
    for (const extension of Array.isArray(list) ? list : []) {
      if (typeof extension !== 'string' || extension.trim() === '') {
        warnings.push(
          warning(
            'skipped_extension',
            `skipped extension ${JSON.stringify(extension)} of ${origin}: not a name`,
          ),
        );
        continue;
      }
      const id = extension;
      if (id.startsWith('-')) extensions.delete(id.slice(1).toLowerCase());
      else if (!extensions.has(id.toLowerCase())) extensions.set(id.toLowerCase(), id);
    }

    const entrySettings = own(vscode, 'settings');
    if (entrySettings === undefined) continue;
    if (!isPlainObject(entrySettings)) {
      warnings.push(
        warning('skipped_settings', `customizations.vscode.settings of ${origin} is not an object; ignored`),
      );
      continue;
    }
    for (const [key, value] of Object.entries(entrySettings)) {
      Object.defineProperty(settings, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }

  return { vscode: { extensions: [...extensions.values()], settings }, warnings };
};
