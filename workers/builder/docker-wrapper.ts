/**
 * The docker CLI as the Dev Containers CLI sees it (`--docker-path`): a sh wrapper that passes all to
 * docker except `docker buildx build`, to which it adds what @devcontainers/cli 0.89.0 drops or cannot
 * say (docs/behaviour.md, Known limits): the OCI and retention labels, the full `--platform` list, the
 * layer compression, the attestations (docs/supply-chain.md), a `--secret` per secret file and the
 * secrets' keyed identity (docs/secrets.md). Values come from environment variables in double quotes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  IMAGE_LABELS,
  imageLabelValues,
  OCI_LABELS,
  RETENTION_LABELS,
  type ImageLabel,
  type ImageOrigin,
} from '../../src/rules/image-labels.js';

/** The variable the wrapper reads a label's value from: `buildKey` reads `IBS_LABEL_BUILD_KEY`. */
export const labelVar = (label: ImageLabel): string =>
  `IBS_LABEL_${label.replace(/[A-Z]/g, (upper) => `_${upper}`).toUpperCase()}`;

/** The wrapper's variables of an image of `origin`: every label (src/rules/image-labels.ts). */
export function labelEnv(origin: ImageOrigin): Record<string, string> {
  const values = imageLabelValues(origin);
  return Object.fromEntries(
    (Object.keys(IMAGE_LABELS) as ImageLabel[]).map((label) => [labelVar(label), values[label]]),
  );
}

/** `--label "<name>=$<variable>"` of each label named. */
const labelOptions = (labels: readonly ImageLabel[]): string =>
  labels.map((label) => `--label "${IMAGE_LABELS[label]}=$${labelVar(label)}"`).join(' ');

/** When set: the value given to `buildx build --platform` instead of the CLI's. */
export const PLATFORMS_VAR = 'IBS_BUILD_PLATFORMS';
/** When set: `buildx build --provenance` (`mode=min`, `mode=max` or `false`). */
export const PROVENANCE_VAR = 'IBS_PROVENANCE';
/**
 * When set: `--push` becomes `--output type=image,push=true,compression=<it>,force-compression=true`
 * (and `oci-mediatypes=true` but for gzip): layers cached in another compression are converted.
 */
export const COMPRESSION_VAR = 'IBS_LAYER_COMPRESSION';
/** When set: `buildx build --attest` of the SBOM (`type=sbom[,generator=<image>]`). */
export const SBOM_VAR = 'IBS_ATTEST_SBOM';
/** When set: the folder of the build secret files (one file per secret, named by its id). */
export const SECRETS_DIR_VAR = 'IBS_BUILD_SECRETS_DIR';
/**
 * When set: the keyed identity of the secrets offered (secret-identity.ts). Every `-f` Dockerfile is
 * replaced by its keyed copy (keyed-dockerfile.cjs, run by the node in NODE_VAR) and the identity is
 * passed as the build argument IDENTITY_ARG, last (so that no earlier `--build-arg` overrides it).
 */
export const SECRETS_IDENTITY_VAR = 'IBS_BUILD_SECRETS_IDENTITY';
/** The folder keyed-dockerfile.cjs writes its copies into: the request's own, in the scratch space. */
export const KEYED_DIR_VAR = 'IBS_KEYED_DOCKERFILE_DIR';
/** The node that runs keyed-dockerfile.cjs (this service's own). */
export const NODE_VAR = 'IBS_NODE';
/** The build argument that carries the identity into every stage (reserved: docs/secrets.md). */
export const IDENTITY_ARG = 'IBS_BUILD_SECRETS_IDENTITY';
/** The keying script, beside this module (copied to dist/ by the build). */
export const KEYED_DOCKERFILE_SCRIPT = fileURLToPath(new URL('./keyed-dockerfile.cjs', import.meta.url));

/** The keyed copy of the Dockerfile `$1` (a shell function of the wrapper; fails the build when it fails). */
const KEY_FUNCTION = [
  'keyed() {',
  `  copy=$("$${NODE_VAR}" "$keyer" "$1" ${IDENTITY_ARG} "$${KEYED_DIR_VAR}") || exit 1`,
  '  keyedfiles=$((keyedfiles + 1))',
  '}',
];

/** In the argument loop: a Dockerfile option (`-f F`, `--file F`, `--file=F`, `-fF`) gets the keyed copy. */
const KEYED_FILE_OPTION = [
  `    if [ -n "$${SECRETS_IDENTITY_VAR}" ]; then`,
  '      case "$arg" in',
  '        -f | --file) file=1 ;;',
  '        --file=* | -f?*)',
  '          path=${arg#--file=}',
  '          [ "$path" = "$arg" ] && path=${arg#-f} && path=${path#=}',
  '          keyed "$path"',
  '          set -- "$@" --file "$copy"',
  '          continue',
  '          ;;',
  '      esac',
  '    fi',
];

/** After the loop: a build offered secrets had its Dockerfile keyed; the identity goes last. */
const IDENTITY_ARGUMENT = [
  `  if [ -n "$${SECRETS_IDENTITY_VAR}" ]; then`,
  '    if [ "$keyedfiles" -eq 0 ]; then',
  "      echo 'docker wrapper: a build offered secrets without -f: refused (docs/secrets.md)' >&2",
  '      exit 1',
  '    fi',
  `    set -- "$@" --build-arg "${IDENTITY_ARG}=$${SECRETS_IDENTITY_VAR}"`,
  '  fi',
];

/** The retention labels (src/rules/image-labels.ts), when the build is given its branch. */
const RETENTION_LABEL_OPTIONS = [
  `  if [ -n "$${labelVar('branch')}" ]; then`,
  `    set -- ${labelOptions(Object.keys(RETENTION_LABELS) as ImageLabel[])} "$@"`,
  '  fi',
];

/** The OCI labels, always. */
const OCI_LABEL_OPTIONS = labelOptions(Object.keys(OCI_LABELS) as ImageLabel[]);

/** The wrapper for the keying script at `keyer` (the service's own, or a test's). */
function dockerWrapperScript(keyer: string = KEYED_DOCKERFILE_SCRIPT): string {
  return [
    '#!/bin/sh',
    ...KEY_FUNCTION,
    'if [ "$1" = buildx ] && [ "$2" = build ]; then',
    '  shift 2',
    `  keyer='${keyer.replaceAll("'", "'\\''")}'`,
    '  replace=',
    '  file=',
    '  keyedfiles=0',
    '  for arg do',
    '    shift',
    '    if [ -n "$replace" ]; then',
    `      set -- "$@" "$${PLATFORMS_VAR}"`,
    '      replace=',
    '      continue',
    '    fi',
    '    if [ -n "$file" ]; then',
    '      keyed "$arg"',
    '      set -- "$@" "$copy"',
    '      file=',
    '      continue',
    '    fi',
    `    if [ "$arg" = --platform ] && [ -n "$${PLATFORMS_VAR}" ]; then replace=1; fi`,
    `    if [ "$arg" = --push ] && [ -n "$${COMPRESSION_VAR}" ]; then`,
    '      output="type=image,push=true,compression=$' + COMPRESSION_VAR + ',force-compression=true"',
    `      [ "$${COMPRESSION_VAR}" = gzip ] || output="$output,oci-mediatypes=true"`,
    '      set -- "$@" --output "$output"',
    '      continue',
    '    fi',
    ...KEYED_FILE_OPTION,
    '    set -- "$@" "$arg"',
    '  done',
    ...IDENTITY_ARGUMENT,
    `  if [ -n "$${SBOM_VAR}" ]; then set -- --attest "$${SBOM_VAR}" "$@"; fi`,
    `  if [ -n "$${PROVENANCE_VAR}" ]; then set -- --provenance "$${PROVENANCE_VAR}" "$@"; fi`,
    `  if [ -n "$${SECRETS_DIR_VAR}" ]; then`,
    `    for file in "$${SECRETS_DIR_VAR}"/*; do`,
    '      [ -f "$file" ] || continue',
    '      set -- --secret "id=${file##*/},src=$file" "$@"',
    '    done',
    '  fi',
    ...RETENTION_LABEL_OPTIONS,
    `  exec docker buildx build ${OCI_LABEL_OPTIONS} "$@"`,
    'fi',
    'exec docker "$@"',
    '',
  ].join('\n');
}

const DOCKER_WRAPPER_SCRIPT = dockerWrapperScript();

/** Writes the wrapper (0700) into `dir` and returns its path. */
export async function writeDockerWrapper(dir: string): Promise<string> {
  const path = join(dir, 'docker-wrapper');
  await writeFile(path, DOCKER_WRAPPER_SCRIPT, { mode: 0o700, flag: 'wx' });
  return path;
}
