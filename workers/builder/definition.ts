/**
 * Finds the dev container definition of a clone: `.devcontainer/devcontainer.json`, else
 * `.devcontainer.json`, else the lexically first `.devcontainer/<folder>/devcontainer.json`.
 * None: a generated `{"image": <fallback>}` outside the clone, or 400 NO_DEFINITION without a
 * fallback image. A definition, or a Dockerfile, build context, compose file or local feature
 * it names, that resolves outside the clone (through `..` or a symbolic link) is refused (400).
 */
import { readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { definitionOutsideClone, noDefinition } from '../../src/errors.js';
import { parseJsonc } from './jsonc.js';
import { referencedPaths, usesDockerfile } from './read-set.js';

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

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
async function realpathLoose(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathLoose(parent), path.slice(parent.length));
  }
}

/** Throws DEFINITION_OUTSIDE_CLONE unless `path` stays in `root` lexically and after symlinks. */
async function assertInside(root: string, path: string, shown: string): Promise<void> {
  if (!isInside(root, path) || !isInside(root, await realpathLoose(path)))
    throw definitionOutsideClone(shown);
}

async function findDefinition(root: string): Promise<string | undefined> {
  for (const candidate of ['.devcontainer/devcontainer.json', '.devcontainer.json']) {
    if (await exists(join(root, candidate))) return candidate;
  }
  const folder = join(root, '.devcontainer');
  const entries = await readdir(folder).catch(() => [] as string[]);
  for (const name of entries.sort()) {
    const candidate = `.devcontainer/${name}/devcontainer.json`;
    if (await exists(join(root, candidate))) return candidate;
  }
  return undefined;
}

export async function resolveDefinition(options: {
  cloneDir: string;
  /** A directory outside the clone for the generated fallback definition. */
  generatedDir: string;
  fallbackImage?: string;
}): Promise<DevcontainerDefinition> {
  const root = await realpath(options.cloneDir);
  const found = await findDefinition(root);
  if (found === undefined) {
    if (options.fallbackImage === undefined || options.fallbackImage === '') throw noDefinition();
    const configFile = join(options.generatedDir, 'devcontainer.json');
    await writeFile(configFile, `${JSON.stringify({ image: options.fallbackImage }, null, 2)}\n`, {
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
    return { configFile: realConfig, repositoryPath: found, dockerfileBased: true };
  }
  const configDir = dirname(realConfig);
  for (const ref of referencedPaths(definition)) {
    const target = resolve(configDir, ref);
    await assertInside(root, target, `${relative(root, realConfig)}: ${JSON.stringify(ref.slice(0, 200))}`);
  }
  return { configFile: realConfig, repositoryPath: found, dockerfileBased: usesDockerfile(definition) };
}
