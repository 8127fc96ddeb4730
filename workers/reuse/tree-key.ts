/**
 * The build key of an unchanged push from the commit's trees alone, before any checkout
 * (docs/reuse.md, Unchanged pushes read no file): object ids from the clone's listing, the config's
 * and Dockerfile's bytes from the blob cache. The record is the one a checkout gives (key-inputs.ts),
 * so the key is the same. When the trees cannot stand for the checkout (docs/reuse.md lists when),
 * the answer is undefined and the job checks out and keys the files.
 */
import { DEFINITION_ROOTS } from '../../src/rules/definition.js';
import { parseJsonc } from '../builder/jsonc.js';
import { fallbackDefinitionText } from '../builder/definition.js';
import {
  buildReadSet,
  dockerfileOf,
  inReadSet,
  isUnder,
  type ReadPath,
  referencedPaths,
  repositoryFolder,
  repositoryPath,
} from '../builder/read-set.js';
import type { LocatedDefinition, TreeLister } from '../git/commit-definition.js';
import { isRegularFile, LINK_MODE, type TreeEntry } from '../git/tree-listing.js';
import type { BlobCache } from './blob-cache.js';
import type { KeyedPath } from './build-key.js';
import { computeKeyInput, type KeyDeps, type KeySource } from './key-inputs.js';
import type { Keyed } from './checkout-key.js';

export interface TreeKeyInput {
  readonly repository: string;
  /** The definition located in the commit's trees (undefined: none, the fallback applies). */
  readonly located: LocatedDefinition | undefined;
  /** The commit's trees at some paths (from the open clone, or read in process). */
  readonly listPaths: TreeLister;
  readonly fallbackImage: string | undefined;
  readonly blobs: BlobCache;
}

/** The paths the locating listing already covers (recursively). */
const LISTED_ROOTS = DEFINITION_ROOTS;

/** The entries of the read set's paths and everything under them; undefined when one cannot stand. */
async function readSetEntries(
  input: TreeKeyInput,
  listing: ReadonlyMap<string, TreeEntry>,
  readSet: readonly ReadPath[],
): Promise<Map<string, TreeEntry> | undefined> {
  const entries = new Map(listing);
  const outside = readSet.filter((p) => !LISTED_ROOTS.some((root) => isUnder(p.path, root)));
  if (outside.length > 0) {
    for (const entry of await input.listPaths(outside.map((p) => p.path))) entries.set(entry.path, entry);
  }
  for (const p of readSet) {
    const entry = entries.get(p.path);
    // Missing, of another kind, or reached through a link (then it is not listed): check out.
    if (entry === undefined) return undefined;
    if (p.kind === 'dir' ? entry.type !== 'tree' : !isRegularFile(entry)) return undefined;
  }
  for (const entry of entries.values()) {
    if (entry.mode === LINK_MODE && inReadSet(entry.path, readSet)) return undefined;
  }
  return entries;
}

/** The key source from the trees and the cache; undefined when it needs a checkout. */
async function treeSource(input: TreeKeyInput): Promise<KeySource | undefined> {
  const { located, blobs, repository } = input;
  if (located === undefined) {
    if (input.fallbackImage === undefined || input.fallbackImage === '') return undefined;
    const text = fallbackDefinitionText(input.fallbackImage);
    return {
      configPath: undefined,
      configBytes: Buffer.from(text),
      definition: parseJsonc(text),
      objectIds: () => Promise.resolve([]),
      readText: () => Promise.resolve(undefined),
    };
  }
  const { entry, listing } = located;
  if (!isRegularFile(entry)) return undefined;
  const configBytes = blobs.get(repository, entry.oid);
  if (configBytes === undefined) return undefined;
  let definition: unknown;
  try {
    definition = parseJsonc(configBytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const configDir = repositoryFolder(entry.path);
  if (referencedPaths(definition).some((ref) => repositoryPath(configDir, ref) === undefined))
    return undefined;
  const readSet = buildReadSet(entry.path, definition);
  if (readSet.some((p) => p.path === '')) return undefined;
  const entries = await readSetEntries(input, listing, readSet);
  if (entries === undefined) return undefined;
  const texts = new Map<string, string>();
  const dockerfile = dockerfileOf(definition);
  if (dockerfile !== undefined) {
    const path = repositoryPath(configDir, dockerfile);
    const file = path === undefined ? undefined : entries.get(path);
    const bytes = file === undefined ? undefined : blobs.get(repository, file.oid);
    if (path === undefined || bytes === undefined) return undefined;
    texts.set(path, bytes.toString('utf8'));
  }
  return {
    configPath: entry.path,
    configBytes,
    definition,
    objectIds: (paths) =>
      Promise.resolve(
        paths.map((listedPath): KeyedPath => ({
          path: listedPath.path,
          kind: listedPath.kind,
          objectId: entries.get(listedPath.path)?.oid ?? '',
        })),
      ),
    readText: (path) => Promise.resolve(texts.get(path)),
  };
}

/** The key from the trees, or undefined: check out and compute it from the files. */
export async function keyFromTrees(input: TreeKeyInput, deps: KeyDeps): Promise<Keyed | undefined> {
  const source = await treeSource(input);
  if (source === undefined) return undefined;
  const outcome = await computeKeyInput(source, deps);
  return outcome.kind === 'keyed' ? { key: outcome.key, input: outcome.input } : undefined;
}
