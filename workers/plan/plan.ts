/**
 * Request -> build plan (pure, no I/O). Every 400 of POST /build after the shape check
 * (src/http/build-schema.ts) is decided here, before the queue admits the job and before
 * any command runs: the repository
 * URL and its scheme policy, the branch, the image name, the registry, the git credential
 * and the pinned host key, the cache specs, the build secrets. Request values override configuration defaults.
 */
import type { Config } from '../../src/config/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { parseCacheSpec } from '../../src/rules/cache-spec.js';
import { resolveGitCredential } from './credentials.js';
import { isValidRefName } from './ref-name.js';
import { parseRepoUrl } from './repo-url.js';
import { deriveImageName } from './image-name.js';
import type { BuildPlan, BuildRequest } from './plan-types.js';
import { requestSecrets } from './request-secrets.js';
import { offeredSecrets } from '../../src/rules/build-secret-rules.js';
import { matchRegistryRule } from '../../src/config/registry-mapping.js';

/** A request's (or the configuration's default) cache spec, normalised (`type=` always present), or a 400. */
export function normaliseCacheSpec(field: 'cacheFrom' | 'cacheTo', spec: string): string {
  const parsed = parseCacheSpec(spec);
  if (parsed.ok) return parsed.spec;
  throw parsed.problem === 'type'
    ? serviceError('CACHE_TYPE_NOT_ALLOWED', { field, type: parsed.type })
    : serviceError('INVALID_FIELDS');
}

/** The plan of a request that passed the shape check (src/http/build-schema.ts). */
export function planBuild(request: BuildRequest, config: Config): BuildPlan {
  const { repository } = request;

  const url = parseRepoUrl(repository, {
    allowInsecureGitProtocols: config.git.allowInsecureProtocols,
  });
  const buildSecrets = offeredSecrets(config.buildSecrets ?? [], url, requestSecrets(request.buildSecrets));

  const branch = request.branch ?? undefined;
  if (branch !== undefined && !isValidRefName(branch)) throw serviceError('INVALID_BRANCH', { branch });

  const name = request.image?.name ?? deriveImageName(url.path);
  if (name === undefined) throw serviceError('IMAGE_NAME_UNDERIVABLE', { path: url.path });

  const registry =
    request.image?.registry ?? matchRegistryRule(config.registryMappingRules, url.host, url.path)?.registry;
  if (registry === undefined) throw serviceError('NO_REGISTRY', { repository });

  const cacheFromSpec = request.buildOptions?.cacheFrom ?? config.build.cacheFrom;
  const cacheToSpec = request.buildOptions?.cacheTo ?? config.build.cacheTo;
  const cacheFrom = cacheFromSpec === undefined ? undefined : normaliseCacheSpec('cacheFrom', cacheFromSpec);
  const cacheTo = cacheToSpec === undefined ? undefined : normaliseCacheSpec('cacheTo', cacheToSpec);

  // After everything else: the pinned-host-key 400 needs a well-formed request first.
  const gitCredential = resolveGitCredential(url, request.gitCredentials ?? undefined, config);

  const requestPlatforms = request.platforms ?? [];
  const platforms = [...new Set(requestPlatforms.length > 0 ? requestPlatforms : config.build.platforms)];

  const secrets = new Set<string>();
  if (request.gitCredentials) secrets.add(request.gitCredentials.token);
  if (request.registryCredentials) secrets.add(request.registryCredentials.password);
  if (gitCredential?.kind === 'https') secrets.add(gitCredential.token);
  if (gitCredential?.kind === 'ssh') secrets.add(gitCredential.privateKey);
  for (const secret of buildSecrets) secrets.add(secret.value);

  const tag = request.image?.tag ?? undefined;
  return {
    repository,
    url,
    ...(branch === undefined ? {} : { branch }),
    image: { registry, name, ...(tag === undefined ? {} : { tag }) },
    ...(gitCredential === undefined ? {} : { gitCredential }),
    ...(request.registryCredentials ? { registryCredentials: { ...request.registryCredentials } } : {}),
    platforms,
    noCache: request.buildOptions?.noCache ?? config.build.noCache,
    ...(cacheFrom === undefined ? {} : { cacheFrom }),
    ...(cacheTo === undefined ? {} : { cacheTo }),
    mode: request.buildOptions?.mode ?? config.build.mode,
    compression: request.buildOptions?.compression ?? config.build.compression ?? 'gzip',
    buildSecrets,
    secrets: [...secrets],
    ...(portable(request) ? { request: portableRequest(request) } : {}),
  };
}

/** A request that carried no credential or secret of its own: any replica may plan it again. */
const portable = (request: BuildRequest): boolean =>
  !request.gitCredentials &&
  !request.registryCredentials &&
  Object.keys(request.buildSecrets ?? {}).length === 0;

/** The fields of the request that shape its build, as given (nothing else is kept). */
function portableRequest(request: BuildRequest): BuildRequest {
  const { repository, branch, image, platforms, buildOptions } = request;
  return structuredClone({
    repository,
    ...(branch == null ? {} : { branch }),
    ...(image == null ? {} : { image }),
    ...(platforms == null ? {} : { platforms }),
    ...(buildOptions == null ? {} : { buildOptions }),
  });
}
