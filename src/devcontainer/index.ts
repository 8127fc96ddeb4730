/**
 * The dev container view of an image's `devcontainer.metadata` label (GET /devcontainer):
 * the label parsed into entries, merged the way the Dev Containers CLI merges it, plus
 * lifecycle scripts, VS Code customizations and warnings. Pure: no I/O.
 */
import { serviceError } from '../errors/errors.js';
import { type Entry, isPlainObject } from './entries.js';
import { fieldTypeWarnings } from './field-types.js';
import { type LifecycleScripts, lifecycleScripts } from './lifecycle-scripts.js';
import { mergeConfiguration } from './merge.js';
import { variableWarnings } from './variables.js';
import { type VscodeView, mergeVscode } from './vscode.js';
import { type DevcontainerWarning, warning } from './warnings.js';

export const METADATA_LABEL = 'devcontainer.metadata';

export interface DevcontainerView {
  configuration: Record<string, unknown>;
  lifecycleScripts: LifecycleScripts;
  vscode: VscodeView;
  warnings: DevcontainerWarning[];
  metadata: Record<string, unknown>[];
}

/**
 * The entries of a `devcontainer.metadata` label: a JSON array of entries, or a single object.
 * Throws a METADATA_LABEL_* ServiceError (422) when the label is absent, not JSON, or neither an
 * array nor an object. Like the Dev Containers CLI, any array is metadata, the empty array
 * included (its merge is the defaults). Array items that are not objects are passed on;
 * describeDevcontainer skips them with a warning.
 */
export function parseMetadataLabel(label: string | undefined | null): Record<string, unknown>[] {
  if (label === undefined || label === null) {
    throw serviceError('METADATA_LABEL_MISSING');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(label);
  } catch {
    throw serviceError('METADATA_LABEL_NOT_JSON');
  }
  const entries = Array.isArray(parsed) ? parsed : isPlainObject(parsed) ? [parsed] : undefined;
  if (!entries) {
    throw serviceError('METADATA_LABEL_NOT_ENTRIES');
  }
  return entries as Record<string, unknown>[];
}

const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

/** The dev container result fields computed from the label entries (in label order). */
export function describeDevcontainer(entries: Record<string, unknown>[]): DevcontainerView {
  const warnings: DevcontainerWarning[] = [];
  const kept: Entry[] = [];
  (entries as unknown[]).forEach((entry, index) => {
    if (isPlainObject(entry)) kept.push(entry);
    else
      warnings.push(
        warning('skipped_entry', `skipped label entry #${index}: ${describeValue(entry)}, not an object`),
      );
  });

  const scripts = lifecycleScripts(kept);
  const vscode = mergeVscode(kept);
  return {
    // JSON round trip: exactly what a client (and the CLI's own JSON output) shows.
    configuration: JSON.parse(JSON.stringify(mergeConfiguration(kept))) as Record<string, unknown>,
    lifecycleScripts: scripts.scripts,
    vscode: vscode.vscode,
    warnings: [
      ...warnings,
      ...fieldTypeWarnings(kept),
      ...scripts.warnings,
      ...vscode.warnings,
      ...variableWarnings(kept),
    ],
    metadata: kept,
  };
}
