import { redisTargetOf, redisView } from './redis-target.js';
import { builderEndpoints } from './builder-endpoints.js';
import type { Config } from './types.js';
import { FORGE_NAMES } from '../rules/forges.js';

/** The configurations as given; of the webhooks only which are set, never a secret. */
function prebuildsView(config: Config): Record<string, unknown> {
  const { prebuilds } = config;
  return {
    configurations: prebuilds.configurations.map((c) => structuredClone(c)),
    reconcileIntervalSeconds: prebuilds.reconcileIntervalSeconds,
    refreshIntervalSeconds: prebuilds.refreshIntervalSeconds,
    hooks: Object.fromEntries(
      FORGE_NAMES.map((forge) => [forge, prebuilds.hookSecrets[forge] !== undefined]),
    ),
  };
}

/** The builders, each with the platforms it declares, and which TLS parts are set. */
/** Redis mode by endpoint (or a cluster's nodes) only: the URL or the password file holds a password. */
function redisSection(config: Config): Record<string, unknown> {
  const target = redisTargetOf(config.redis);
  return target === undefined ? { configured: false } : { configured: true, ...redisView(target) };
}

function buildersView(config: Config): Record<string, unknown> {
  return {
    builderConfigured: config.builders.length > 0,
    builderName: config.builderName,
    builders: builderEndpoints(config),
    // The platforms each builder declares ([]: any, emulated where needed).
    builderPlatforms: config.builders.map((builder) => ({
      builder: builder.endpoint,
      platforms: [...builder.platforms],
    })),
    nativePlatformsOnly: config.build.nativePlatformsOnly,
    // Which TLS parts are set, never a file's content (the key is a secret).
    builderTls: {
      ca: config.builderTls?.caPath !== undefined,
      clientCertificate: config.builderTls?.certPath !== undefined,
      ...(config.builderTls?.serverName === undefined ? {} : { serverName: config.builderTls.serverName }),
    },
  };
}

/** The effective configuration as `GET /config` shows it: no secret ever, credentials by host and kind only. */
export function effectiveConfigView(config: Config): Record<string, unknown> {
  const defaultBuildOptions: Record<string, unknown> = {
    noCache: config.build.noCache,
    mode: config.build.mode,
  };
  if (config.build.cacheFrom !== undefined) defaultBuildOptions.cacheFrom = config.build.cacheFrom;
  if (config.build.cacheTo !== undefined) defaultBuildOptions.cacheTo = config.build.cacheTo;
  return {
    ...buildersView(config),
    sshHostKeyPolicy: config.sshHostKeyPolicy,
    defaultPlatforms: [...config.build.platforms],
    defaultBuildOptions,
    gitCredentials: config.gitCredentials.map(({ host, kind }) => ({ host, kind })),
    registryMappingRules: config.registryMappingRules.map(({ registry }) => ({ registry })),
    // By id and scope only: never a value.
    buildSecrets: (config.buildSecrets ?? []).map(({ id, repositories }) => ({
      id,
      repositories: repositories.map((scope) => ({ ...scope })),
    })),
    // By URL host and types only: never a secret, never the URL's path or query.
    eventSubscriptions: config.events.subscriptions.map(({ name, url, types }) => ({
      name,
      host: new URL(url).host,
      types: types === undefined ? 'all' : [...types],
    })),
    insecureRegistries: [...config.insecureRegistries],
    allowInsecureGitProtocols: config.git.allowInsecureProtocols,
    cloneTimeoutSeconds: config.build.cloneTimeoutSeconds,
    buildTimeoutSeconds: config.build.timeoutSeconds,
    maxConcurrentBuilds: config.build.maxConcurrent,
    maxBuildsPerBuilder: config.build.maxPerBuilder,
    buildReuse: config.build.reuse,
    retention: {
      ...config.retention,
      keepTags: [...config.retention.keepTags],
      repositories: [...config.retention.repositories],
    },
    supplyChain: {
      provenance: config.build.provenance,
      sbom: config.build.sbom,
      ...(config.build.sbomGenerator === undefined ? {} : { sbomGenerator: config.build.sbomGenerator }),
      provenanceBuilderId: config.build.provenanceBuilderId,
      // The public half only: what verifiers need, never the key.
      signing:
        config.signing === undefined
          ? { enabled: false }
          : { enabled: true, publicKeyFingerprint: config.signing.fingerprint },
    },
    registryAuth: Object.keys(config.registryAuth.auths).map((registry) => ({ registry })),
    prebuilds: prebuildsView(config),
    // Redis by endpoint only: its URL holds a password.
    redis: redisSection(config),
  };
}
