/**
 * The Config of what loading gave: each option lands where its row of the option table says;
 * every other field is one named step of STEPS, whose type makes the compiler check that the steps
 * fill each field the rows do not, and no field twice. Pure: the files were read before.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builderDeclarations } from './builder-endpoints.js';
import { builderTls } from './builder-tls.js';
import { childEnvironment } from './child-env.js';
import type { StepPath, StepValue } from './config-paths.js';
import type { LandedPath, OptionValues } from './option-values.js';
import { OPTIONS } from './options.js';
import type { SideLists } from './side-files.js';
import type { Config, DockerConfigDocument, Environment, HookSecrets, SigningKey } from './types.js';
import { packageVersion } from './version.js';

/** What loading gave: the options, the side files' lists and what else was read at startup. */
export interface Loaded {
  readonly options: OptionValues;
  readonly lists: SideLists;
  readonly hookSecrets: HookSecrets;
  readonly signing: SigningKey | undefined;
  /** The Redis Cluster's password (read from its file), or undefined. */
  readonly redisPassword: string | undefined;
  readonly dockerConfigDir: string;
  readonly registryAuth: DockerConfigDocument;
  readonly env: Environment;
  /** People's sign-in client secret (docs/auth.md), when the provider gave one. */
  readonly browserClientSecret: string | undefined;
}

type Step<P extends StepPath> = (loaded: Loaded) => StepValue<P>;

/** A compile error names a place both a row and a step would fill. */
type FilledOnce<Twice extends never> = Twice;
export type NoPlaceTwice = FilledOnce<Extract<LandedPath, StepPath>>;

/** The fields no option lands in as it is (undefined: the field is absent). */
const STEPS: { readonly [P in StepPath]: Step<P> } = {
  builders: ({ options }) => builderDeclarations(options.builderEndpoint),
  builderTls: ({ options }) => builderTls(options),
  gitCredentials: ({ lists }) => lists.gitCredentials.map((entry) => ({ ...entry })),
  registryMappingRules: ({ lists }) => lists.registryMappingRules.map((rule) => ({ ...rule })),
  buildSecrets: ({ lists }) => (lists.buildSecrets.length > 0 ? lists.buildSecrets : undefined),
  'events.subscriptions': ({ lists }) => lists.eventSubscriptions,
  'events.retrySeconds': ({ options }) => options.eventRetrySeconds.map(Number),
  signing: ({ signing }) => signing,
  'redis.password': ({ redisPassword }) => redisPassword,
  'prebuilds.configurations': ({ lists }) => lists.prebuildConfigurations,
  'prebuilds.hookSecrets': ({ hookSecrets }) => hookSecrets,
  'build.quotas': ({ lists }) => lists.buildQuotas,
  'auth.issuers': ({ lists }) => lists.authIssuers,
  // Digests compared in lower case (src/auth/static-tokens.ts).
  'auth.tokens': ({ lists }) => lists.authTokens.map((t) => ({ ...t, sha256: t.sha256.toLowerCase() })),
  'auth.rules': ({ lists }) =>
    lists.authRules.map((rule) => ({
      ...rule,
      repositories: rule.repositories ?? [],
      images: rule.images ?? [],
    })),
  'auth.browserClientSecret': ({ browserClientSecret }) => browserClientSecret,
  scratchDir: ({ env }) =>
    join(env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : tmpdir(), 'image-build-service'),
  dockerConfigDir: ({ dockerConfigDir }) => dockerConfigDir,
  registryAuth: ({ registryAuth }) => ({ auths: { ...registryAuth.auths } }),
  childEnv: ({ env }) => childEnvironment(env),
  version: () => packageVersion(),
};

/**
 * Puts a value at its place (`builderName`, `service.port`): its sections are made even for
 * undefined, which leaves the field itself absent.
 */
function place(config: Record<string, unknown>, path: string, value: unknown): void {
  const fields = path.split('.');
  const last = fields.pop() ?? '';
  let section = config;
  for (const field of fields) section = (section[field] ??= {}) as Record<string, unknown>;
  if (value !== undefined) section[last] = value;
}

/** The configuration: the landing options (lists copied), then the steps. */
export function configOf(loaded: Loaded): Config {
  const config: Record<string, unknown> = {};
  for (const option of OPTIONS) {
    if (option.lands === undefined) continue;
    const value = loaded.options[option.name];
    place(config, option.lands, Array.isArray(value) ? [...(value as string[])] : value);
  }
  for (const [path, step] of Object.entries(STEPS) as [StepPath, (loaded: Loaded) => unknown][]) {
    place(config, path, step(loaded));
  }
  // Complete and well typed: the rows' places and values are Config's option fields (types.ts
  // derives them from the rows) and STEPS holds every step's place (its type).
  return config as unknown as Config;
}
