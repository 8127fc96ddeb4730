/**
 * The docker CLI as the Dev Containers CLI sees it (`--docker-path`) when one of two faults of
 * @devcontainers/cli 0.89.0 applies (Dockerfile-based definition, several platforms): a small sh
 * wrapper that works around them and passes everything else to docker unchanged.
 * - It drops `--label` when it builds a Dockerfile-based definition: the wrapper adds the OCI
 *   labels to every `docker buildx build`.
 * - It parses `--platform a,b` as one platform (`os/arch,os/arch`) when it reads the base
 *   image from the registry, finds nothing and falls back to `docker pull` (no engine here).
 *   So the CLI gets the first platform only, and the wrapper puts the full list back on
 *   `buildx build --platform`.
 * - It has no `--provenance` or `--attest`: the wrapper adds the configured attestations
 *   (docs/supply-chain.md) to every `docker buildx build`.
 * - It adds `--secret id=<id>,src=<file>` for each file of the build secrets folder whose path
 *   SECRETS_DIR_VAR holds (workers/builder/secret-files.ts): paths only, never values.
 * Values come from environment variables expanded inside double quotes ("$VAR"): the shell
 * never interprets them (no word splitting, globbing or substitution); argv is rebuilt with
 * the POSIX `for arg do shift; set -- "$@" ...` rotation, never re-parsed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const LABEL_SOURCE_VAR = 'IBS_LABEL_SOURCE';
export const LABEL_REVISION_VAR = 'IBS_LABEL_REVISION';
/** When set: the value given to `buildx build --platform` instead of the CLI's. */
export const PLATFORMS_VAR = 'IBS_BUILD_PLATFORMS';
/** When set: `buildx build --provenance` (`mode=min`, `mode=max` or `false`). */
export const PROVENANCE_VAR = 'IBS_PROVENANCE';
/** When set: `buildx build --attest` of the SBOM (`type=sbom[,generator=<image>]`). */
export const SBOM_VAR = 'IBS_ATTEST_SBOM';
/** When set: the folder of the build secret files (one file per secret, named by its id). */
export const SECRETS_DIR_VAR = 'IBS_BUILD_SECRETS_DIR';

export const DOCKER_WRAPPER_SCRIPT = [
  '#!/bin/sh',
  'if [ "$1" = buildx ] && [ "$2" = build ]; then',
  '  shift 2',
  '  replace=',
  '  for arg do',
  '    shift',
  '    if [ -n "$replace" ]; then',
  `      set -- "$@" "$${PLATFORMS_VAR}"`,
  '      replace=',
  '      continue',
  '    fi',
  `    if [ "$arg" = --platform ] && [ -n "$${PLATFORMS_VAR}" ]; then replace=1; fi`,
  '    set -- "$@" "$arg"',
  '  done',
  `  if [ -n "$${SBOM_VAR}" ]; then set -- --attest "$${SBOM_VAR}" "$@"; fi`,
  `  if [ -n "$${PROVENANCE_VAR}" ]; then set -- --provenance "$${PROVENANCE_VAR}" "$@"; fi`,
  `  if [ -n "$${SECRETS_DIR_VAR}" ]; then`,
  `    for file in "$${SECRETS_DIR_VAR}"/*; do`,
  '      [ -f "$file" ] || continue',
  '      set -- --secret "id=${file##*/},src=$file" "$@"',
  '    done',
  '  fi',
  '  exec docker buildx build \\',
  `    --label "org.opencontainers.image.source=$${LABEL_SOURCE_VAR}" \\`,
  `    --label "org.opencontainers.image.revision=$${LABEL_REVISION_VAR}" \\`,
  '    "$@"',
  'fi',
  'exec docker "$@"',
  '',
].join('\n');

/** Writes the wrapper (0700) into `dir` and returns its path. */
export async function writeDockerWrapper(dir: string): Promise<string> {
  const path = join(dir, 'docker-wrapper');
  await writeFile(path, DOCKER_WRAPPER_SCRIPT, { mode: 0o700, flag: 'wx' });
  return path;
}
