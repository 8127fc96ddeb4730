/**
 * What a build reads from the repository (pure): the one list behind the sparse checkout and the
 * build key (docs/behaviour.md, Clones). Paths are repository-relative POSIX, no leading or trailing
 * `/`; `''` is the root (everything). A definition under `.devcontainer/`: its folder; a root
 * `.devcontainer.json`: itself and what it names; then a Dockerfile and its build context (default
 * the config's folder), local features, compose files; the fallback definition: nothing. Paths past
 * the root are not listed: the definition check refuses them.
 */
import { posix } from 'node:path';

type ReadPathKind = 'dir' | 'file';

export interface ReadPath {
  readonly path: string;
  readonly kind: ReadPathKind;
}

/** Strings of a string or string-array field. */
const asStrings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.filter((v): v is string => typeof v === 'string')
      : [];

/** An object-valued JSON field, or {} when it is absent or not an object. */
const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** The paths a definition names, relative to its own folder: Dockerfile, context, compose files, local features. */
export function referencedPaths(definition: unknown): string[] {
  const def = objectOf(definition);
  const build = objectOf(def.build);
  const features = Object.keys(objectOf(def.features));
  return [
    ...asStrings(build.dockerfile),
    ...asStrings(build.context),
    ...asStrings(def.dockerFile),
    ...asStrings(def.context),
    ...asStrings(def.dockerComposeFile),
    ...features.filter(isLocalFeature),
  ];
}

/** A feature id that names a folder of the repository (`./x`, `../x`), not an OCI reference or URL. */
export const isLocalFeature = (id: string): boolean => id.startsWith('./') || id.startsWith('../');

/** The Dockerfile a definition builds (relative to its folder), or undefined for image/compose definitions. */
export function dockerfileOf(definition: unknown): string | undefined {
  const def = objectOf(definition);
  const build = objectOf(def.build);
  const named = asStrings(build.dockerfile)[0] ?? asStrings(def.dockerFile)[0];
  return named;
}

/** Whether the definition builds a Dockerfile; true when it is not an object (unknown: assume so). */
export function usesDockerfile(definition: unknown): boolean {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) return true;
  return dockerfileOf(definition) !== undefined;
}

/** The build context (relative to the definition's folder) of a Dockerfile-based definition. */
function contextOf(definition: unknown): string {
  const def = objectOf(definition);
  return asStrings(objectOf(def.build).context)[0] ?? asStrings(def.context)[0] ?? '.';
}

/** The folder of a repository path ('' for a file at the root). */
export function repositoryFolder(path: string): string {
  const dir = posix.dirname(path);
  return dir === '.' ? '' : dir;
}

/** `dir/ref` normalised to a repository path, or undefined when it leaves the repository. */
export function repositoryPath(dir: string, ref: string): string | undefined {
  if (posix.isAbsolute(ref)) return undefined;
  const joined = posix.normalize(posix.join(dir === '' ? '.' : dir, ref));
  if (joined === '..' || joined.startsWith('../')) return undefined;
  const trimmed = joined.replace(/\/+$/, '');
  return trimmed === '.' ? '' : trimmed;
}

/** Whether repository path `path` is `dir` or inside it ('' is the whole repository). */
export const isUnder = (path: string, dir: string): boolean =>
  dir === '' || path === dir || path.startsWith(`${dir}/`);

/** Whether `path` is one of the read set's paths or inside one of its folders. */
export const inReadSet = (path: string, readSet: readonly ReadPath[]): boolean =>
  readSet.some((p) => (p.kind === 'dir' ? isUnder(path, p.path) : path === p.path));

/** Drops duplicates and paths inside a listed folder; sorted by path. */
function minimal(paths: ReadPath[]): ReadPath[] {
  const dirs = paths.filter((p) => p.kind === 'dir').map((p) => p.path);
  const kept = new Map<string, ReadPath>();
  for (const p of paths) {
    const inside = dirs.some((d) => d !== p.path && isUnder(p.path, d));
    if (!inside) kept.set(`${p.kind}:${p.path}`, p);
  }
  return [...kept.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The read set of a definition at `configPath` (repository-relative), parsed as `definition`
 * (undefined when it could not be parsed: then the config's folder, or everything for a root
 * config, since what it names is unknown). `configPath` undefined: the generated fallback, [].
 */
export function buildReadSet(configPath: string | undefined, definition: unknown): ReadPath[] {
  if (configPath === undefined) return [];
  const configDir = repositoryFolder(configPath);
  const paths: ReadPath[] = [];
  if (configDir === '') {
    paths.push({ path: configPath, kind: 'file' });
    if (definition === undefined) return [{ path: '', kind: 'dir' }];
  } else {
    paths.push({ path: configDir, kind: 'dir' });
  }
  if (definition === undefined) return minimal(paths);
  const def = objectOf(definition);
  for (const feature of Object.keys(objectOf(def.features)).filter(isLocalFeature)) {
    const path = repositoryPath(configDir, feature);
    if (path !== undefined) paths.push({ path, kind: 'dir' });
  }
  for (const compose of asStrings(def.dockerComposeFile)) {
    const path = repositoryPath(configDir, compose);
    if (path !== undefined) paths.push({ path, kind: 'file' });
  }
  const dockerfile = dockerfileOf(definition);
  if (dockerfile !== undefined) {
    const file = repositoryPath(configDir, dockerfile);
    if (file !== undefined) paths.push({ path: file, kind: 'file' });
    const context = repositoryPath(configDir, contextOf(definition));
    if (context !== undefined) paths.push({ path: context, kind: 'dir' });
  }
  return minimal(paths);
}
