/**
 * The docker CLI as the Dev Containers CLI sees it (`--docker-path`): a small sh wrapper that passes
 * everything to docker unchanged except `docker buildx build`, to which it adds what
 * @devcontainers/cli 0.89.0 drops or cannot say (docs/behaviour.md, Known limits): the OCI labels,
 * the retention labels, the full `--platform` list (the CLI is given the first only), the attestations
 * (docs/supply-chain.md), a `--secret` per build secret file, by path (docs/secrets.md). Values come
 * from environment variables in double quotes; argv is rebuilt with `set --`, never re-parsed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LABEL_BRANCH, LABEL_BUILD_KEY, LABEL_BUILT, LABEL_NAMED_TAG } from '../../src/rules/image-labels.js';

export const LABEL_SOURCE_VAR = 'IBS_LABEL_SOURCE';
export const LABEL_REVISION_VAR = 'IBS_LABEL_REVISION';
/** When set: the retention labels (src/rules/image-labels.ts), from these four variables. */
export const LABEL_BRANCH_VAR = 'IBS_LABEL_BRANCH';
export const LABEL_BUILT_VAR = 'IBS_LABEL_BUILT';
export const LABEL_TAG_VAR = 'IBS_LABEL_TAG';
export const LABEL_KEY_VAR = 'IBS_LABEL_KEY';
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
  `  if [ -n "$${LABEL_BRANCH_VAR}" ]; then`,
  `    set -- --label "${LABEL_BRANCH}=$${LABEL_BRANCH_VAR}" --label "${LABEL_BUILT}=$${LABEL_BUILT_VAR}" \\`,
  `      --label "${LABEL_NAMED_TAG}=$${LABEL_TAG_VAR}" --label "${LABEL_BUILD_KEY}=$${LABEL_KEY_VAR}" "$@"`,
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
