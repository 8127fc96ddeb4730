/**
 * Finds the dev container definition of a clone: the path the commit's trees gave, or the same rule
 * (src/rules/definition.ts) on disk; none gives a generated `{"image": <fallback>}` outside the clone,
 * else NO_DEFINITION. Refuses a definition, or a Dockerfile, context, compose file or local feature it
 * names, that resolves outside the clone, and a link in the read set that leads outside the clone or
 * the read set (DEFINITION_OUTSIDE_*: docs/errors.md; docs/behaviour.md, Clones).
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, readlink, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { serviceError } from '../../src/errors/errors.js';
import {
  DEVCONTAINER_DIR,
  findDefinitionIn,
  FIXED_CANDIDATES,
  type ListingKind,
  subfolderCandidate,
} from '../../src/rules/definition.js';
import { parseJsonc } from './jsonc.js';
import { buildReadSet, type ReadPath, referencedPaths, usesDockerfile } from './read-set.js';

export interface DevcontainerDefinition {
  /** Absolute path of the devcontainer.json to pass as `--config`. */
  readonly configFile: string;
  /** The definition's path relative to the clone, or undefined for the generated fallback. */
  readonly repositoryPath?: string;
  /** Builds a Dockerfile (`build.dockerfile` or `dockerFile`); true as well when unparseable (unknown). */
  readonly dockerfileBased: boolean;
}

const isInside = (root: string, path: string): boolean => path === root || path.startsWith(root + sep);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

const MAX_LINK_HOPS = 40;

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
async function realpathLoose(path: string, hops = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    // A dangling link (its target not checked out, or missing) still points somewhere: follow it.
    const target = hops < MAX_LINK_HOPS ? await readlink(path).catch(() => undefined) : undefined;
    if (target !== undefined) return realpathLoose(resolve(dirname(path), target), hops + 1);
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathLoose(parent, hops), path.slice(parent.length));
  }
}

/** Throws DEFINITION_OUTSIDE_CLONE unless `path` stays in `root` lexically and after symlinks. */
async function assertInside(root: string, path: string, shown: string): Promise<void> {
  if (!isInside(root, path) || !isInside(root, await realpathLoose(path)))
    throw serviceError('DEFINITION_OUTSIDE_CLONE', { path: shown });
}

/** The lookup rule on disk: the candidates that exist (following links) as a listing. */
async function findDefinition(root: string): Promise<string | undefined> {
  const entries = await readdir(join(root, DEVCONTAINER_DIR)).catch(() => [] as string[]);
  const listing = new Map<string, ListingKind>();
  for (const candidate of [...FIXED_CANDIDATES, ...entries.map(subfolderCandidate)])
    if (await exists(join(root, candidate))) listing.set(candidate, 'file');
  const found = findDefinitionIn(listing);
  return found !== undefined && 'path' in found ? found.path : undefined;
}

/** Whether `path` (absolute, real) lies in one of the read set's paths under `root`. */
const inReadSet = (root: string, readSet: readonly ReadPath[], path: string): boolean =>
  readSet.some((entry) => {
    const target = entry.path === '' ? root : join(root, entry.path);
    return entry.kind === 'dir' ? isInside(target, path) : path === target;
  });

/** Throws unless `path` resolves (after links) inside the clone and inside the read set. */
async function assertReadable(
  root: string,
  readSet: readonly ReadPath[],
  path: string,
  shown: string,
): Promise<void> {
  await assertInside(root, path, shown);
  if (!inReadSet(root, readSet, await realpathLoose(path)))
    throw serviceError('DEFINITION_OUTSIDE_READ_SET', { path: shown });
}

/** Every symbolic link under `path` (itself included), not following any; the clone's `.git` left out. */
async function linksUnder(root: string, path: string): Promise<string[]> {
  const info = await lstat(path).catch(() => undefined);
  if (info === undefined) return [];
  if (info.isSymbolicLink()) return [path];
  if (!info.isDirectory()) return [];
  const entries: Dirent[] = await readdir(path, { withFileTypes: true });
  const links: string[] = [];
  for (const entry of entries) {
    if (entry.name === '.git' && path === root) continue;
    const child = join(path, entry.name);
    if (entry.isSymbolicLink()) links.push(child);
    else if (entry.isDirectory()) links.push(...(await linksUnder(root, child)));
  }
  return links;
}

/** Refuses any link in the read set whose target leaves the clone or the read set. */
async function assertLinksInside(root: string, readSet: readonly ReadPath[]): Promise<void> {
  for (const entry of readSet) {
    for (const link of await linksUnder(root, entry.path === '' ? root : join(root, entry.path))) {
      const shown = `${relative(root, link)} -> ${JSON.stringify((await readlink(link)).slice(0, 200))}`;
      await assertReadable(root, readSet, link, shown);
    }
  }
}

/** The generated definition of a repository without one (its bytes are the build key's config). */
export const fallbackDefinitionText = (image: string): string => `${JSON.stringify({ image }, null, 2)}\n`;

export async function resolveDefinition(options: {
  cloneDir: string;
  /** A directory outside the clone for the generated fallback definition. */
  generatedDir: string;
  fallbackImage?: string;
  /** The definition's repository path as found in the commit's trees (clone.ts); else looked up on disk. */
  configPath?: string;
}): Promise<DevcontainerDefinition> {
  const root = await realpath(options.cloneDir);
  const found = options.configPath ?? (await findDefinition(root));
  if (found === undefined) {
    if (options.fallbackImage === undefined || options.fallbackImage === '')
      throw serviceError('NO_DEFINITION');
    const configFile = join(options.generatedDir, 'devcontainer.json');
    await writeFile(configFile, fallbackDefinitionText(options.fallbackImage), {
      mode: 0o600,
    });
    return { configFile, dockerfileBased: false };
  }
  const configFile = join(root, found);
  await assertInside(root, configFile, found);
  const realConfig = await realpath(configFile);
  let definition: unknown;
  try {
    definition = parseJsonc(await readFile(realConfig, 'utf8'));
  } catch {
    // Unparseable: the Dev Containers CLI reports it in the build log.
    definition = undefined;
  }
  const readSet = buildReadSet(found, definition);
  if (!inReadSet(root, readSet, realConfig))
    throw serviceError('DEFINITION_OUTSIDE_READ_SET', { path: found });
  const configDir = dirname(realConfig);
  for (const ref of definition === undefined ? [] : referencedPaths(definition)) {
    const target = resolve(configDir, ref);
    await assertReadable(
      root,
      readSet,
      target,
      `${relative(root, realConfig)}: ${JSON.stringify(ref.slice(0, 200))}`,
    );
  }
  await assertLinksInside(root, readSet);
  return {
    configFile: realConfig,
    repositoryPath: found,
    dockerfileBased: definition === undefined ? true : usesDockerfile(definition),
  };
}
