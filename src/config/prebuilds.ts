/**
 * The prebuild settings (docs/prebuilds.md): the configurations (from their own file, or the
 * settings file's `prebuilds.configurations`), checked here with problems naming the entry by
 * position and repository; the webhook secrets read once from their files at startup.
 */
import { ajv } from '../rules/ajv.js';
import { BUILD_PLATFORM_PATTERN, NAME_PATTERN, REGISTRY_PATTERN } from '../rules/image-reference.js';
import { BUILDER_MODES } from '../rules/limits.js';
import { FORGE_NAMES, type Forge, secretFileLabel } from '../rules/forges.js';
import { formatAjvErrors } from './ajv-problems.js';
import { readText } from './files.js';
import type { HookSecrets, PrebuildConfiguration } from './types.js';

const NON_EMPTY = { type: 'string', minLength: 1 } as const;
const GLOBS = { type: 'array', minItems: 1, items: NON_EMPTY } as const;

const PREBUILD_CONFIGURATION_SCHEMA = {
  type: 'object',
  required: ['repository', 'branches', 'image'],
  properties: {
    repository: NON_EMPTY,
    branches: GLOBS,
    paths: GLOBS,
    image: {
      type: 'object',
      required: ['registry', 'name'],
      properties: {
        registry: { type: 'string', pattern: REGISTRY_PATTERN, description: 'a registry host[:port]' },
        name: { type: 'string', pattern: NAME_PATTERN, description: 'a repository name (lower case)' },
      },
      additionalProperties: false,
    },
    platforms: { type: 'array', items: { type: 'string', pattern: BUILD_PLATFORM_PATTERN } },
    buildOptions: {
      type: 'object',
      properties: {
        noCache: { type: 'boolean' },
        cacheFrom: NON_EMPTY,
        cacheTo: NON_EMPTY,
        mode: { type: 'string', enum: [...BUILDER_MODES] },
      },
      additionalProperties: false,
    },
    refreshOnBaseChange: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

const validateConfiguration = ajv.compile(PREBUILD_CONFIGURATION_SCHEMA);

/** How a configuration is named in problems: its position, and its repository when it has one. */
export function configurationLabel(entry: unknown, index: number): string {
  const repository = (entry as { repository?: unknown } | null)?.repository;
  return typeof repository === 'string'
    ? `prebuild configuration ${index} (${repository})`
    : `prebuild configuration ${index}`;
}

/** The checked configurations of `raw` (refreshOnBaseChange defaults to true); problems otherwise. */
export function prebuildConfigurations(
  raw: unknown,
  source: string,
  problems: string[],
): PrebuildConfiguration[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(`${source}: must be a list of prebuild configurations`);
    return [];
  }
  const out: PrebuildConfiguration[] = [];
  for (const [i, entry] of raw.entries()) {
    if (!validateConfiguration(entry)) {
      const label = `${source}: ${configurationLabel(entry, i)}`;
      problems.push(
        ...formatAjvErrors(validateConfiguration.errors ?? [], { source: label, showValue: () => true }),
      );
      continue;
    }
    const value = entry as Omit<PrebuildConfiguration, 'refreshOnBaseChange'> & {
      refreshOnBaseChange?: boolean;
    };
    out.push({ ...value, refreshOnBaseChange: value.refreshOnBaseChange ?? true });
  }
  return out;
}

/** A webhook secret from its file (trailing newline dropped); the problem never shows the content. */
export function hookSecret(path: string | undefined, what: string, problems: string[]): string | undefined {
  if (path === undefined) return undefined;
  const read = readText(path);
  if (!read.ok) {
    problems.push(`${what} ${path} ${read.why}`);
    return undefined;
  }
  const secret = read.text.replace(/\r?\n$/, '');
  if (secret.length === 0 || /[\r\n]/.test(secret)) {
    problems.push(`${what} ${path} must hold one non-empty line`);
    return undefined;
  }
  return secret;
}

/** The webhook secrets of the options, by forge (each unset when its file is). */
export function hookSecrets(paths: { readonly [F in Forge]?: string }, problems: string[]): HookSecrets {
  const secrets: { [F in Forge]?: string } = {};
  for (const forge of FORGE_NAMES) {
    const secret = hookSecret(paths[forge], secretFileLabel(forge), problems);
    if (secret !== undefined) secrets[forge] = secret;
  }
  return secrets;
}
