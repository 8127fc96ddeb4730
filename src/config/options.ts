/**
 * THE option table: one row per server option. It drives argv and env parsing, the settings file
 * schema, `--help`, the README configuration table, the type of the values and where each value
 * lands in Config, which gives Config its option fields (option-values.ts). Pure: no I/O.
 */
import {
  AUTH_MODES,
  LAYER_COMPRESSIONS,
  PROVENANCE_MODES,
  RETENTION_MODES,
  SSH_HOST_KEY_POLICIES,
} from './modes.js';
import { BUILD_PLATFORM_PATTERN } from '../rules/image-reference.js';
import { CACHE_TYPES, parseCacheSpec } from '../rules/cache-spec.js';
import { BUILDER_MODES } from '../rules/limits.js';
import { FORGES, type Forge, headerTitle, secretFileLabel } from '../rules/forges.js';
import { builderEntryProblem, builderEntryText, parseBuilderEntry } from './builder-endpoints.js';

type OptionType = 'string' | 'integer' | 'number' | 'boolean' | 'list';
export type OptionValue = string | number | boolean | readonly string[];

/** A JSON schema fragment for one value (ajv); `description` doubles as the hint of a pattern error. */
export type ValueSchema = Readonly<Record<string, unknown>>;

/** One row of the table: everything said about an option but its name (the row's key). */
export interface OptionRow {
  /** Human label, as in the README's Configuration table. */
  readonly label: string;
  readonly flag: `--${string}`;
  readonly env: string;
  /**
   * The place of Config (dotted) the value lands in as it is; absent: its settings key, or, with
   * none, no place. `false`: a named step reads it instead (src/config/config-fields.ts: files it
   * names, values it converts or combines). Config's type follows (option-values.ts).
   */
  readonly lands?: string | false;
  /** Dotted path in the settings file; absent when the option has no settings key. */
  readonly settingsKey?: string;
  readonly type: OptionType;
  /** Placeholder of the value in `--help` (`<n>`, `<url>`...); booleans take none. */
  readonly placeholder?: string;
  /** Absent: the option is unset unless given. */
  readonly default?: OptionValue;
  /** How the default reads in `--help` and the README. */
  readonly defaultText: string;
  /** Allowed values (enums): the option's value type is their union. */
  readonly values?: readonly string[];
  /** Constraints of a value (or of each list item), checked with ajv for every source. */
  readonly schema: ValueSchema;
  /** A further check of a valid value: returns a problem text or undefined. */
  readonly check?: (value: OptionValue) => string | undefined;
  /** A list option whose settings file value may also be one comma-separated string. */
  readonly settingsText?: boolean;
  /** Turns a structured settings file item of a list option into its text form (others stay as they are). */
  readonly settingsItem?: (item: unknown) => unknown;
  /** Never echoed in messages, logs or the config view. */
  readonly secret: boolean;
  readonly description: string;
}

export type OptionName = keyof typeof OPTION_TABLE;

export interface OptionSpec extends Omit<OptionRow, 'lands'> {
  readonly name: OptionName;
  /** Where the value lands in Config as it is (see OptionRow's `lands`); absent: nowhere. */
  readonly lands?: string;
}

/** A row's place in Config, as option-values.ts's `LandsAt` says for its type. */
function landsAt(row: OptionRow): string | undefined {
  return row.lands === false ? undefined : (row.lands ?? row.settingsKey);
}

const PORT_SCHEMA = { type: 'integer', minimum: 0, maximum: 65535 } as const;
const SECONDS_SCHEMA = { type: 'integer', minimum: 1 } as const;
const NON_EMPTY = { type: 'string', minLength: 1 } as const;
/** What every option naming a file shares. */
const FILE_PATH = { type: 'string', placeholder: '<file>', schema: NON_EMPTY, secret: false } as const;

/** The row of the option naming a forge's webhook secret file, from the forge's facts. */
function hookSecretRow(forge: Forge) {
  const { secret, senders, signature } = FORGES[forge];
  const capitalised = `${secret.charAt(0).toUpperCase()}${secret.slice(1)}`;
  return {
    label: secretFileLabel(forge),
    flag: `--${forge}-hook-${secret}-file` as const,
    env: `${forge.toUpperCase()}_HOOK_${secret.toUpperCase()}_FILE`,
    settingsKey: `prebuilds.hooks.${forge}${capitalised}File`,
    lands: false as const,
    ...FILE_PATH,
    defaultText: `unset (POST /hooks/${forge} refused)`,
    description: `File holding the ${secret === 'token' ? 'secret token' : 'secret'} of the ${senders} webhook (\`${headerTitle(signature.header)}\`).`,
  };
}

const checkCacheSpec = (value: OptionValue): string | undefined => {
  const parsed = parseCacheSpec(String(value));
  if (parsed.ok) return undefined;
  return parsed.problem === 'type'
    ? `cache type "${parsed.type}" is not allowed (allowed: ${CACHE_TYPES.join(', ')})`
    : 'must be a reference or comma-separated key=value fields (buildx syntax) without spaces or quotes';
};

const checkDsn = (value: OptionValue): string | undefined => {
  try {
    const url = new URL(String(value));
    return url.protocol === 'https:' || url.protocol === 'http:'
      ? undefined
      : 'must be an http(s) URL (https://<key>@<host>/<project>)';
  } catch {
    return 'must be an http(s) URL (https://<key>@<host>/<project>)';
  }
};

const checkRedisUrl = (value: OptionValue): string | undefined => {
  const problem = 'must be a redis:// or rediss:// URL (redis[s]://[[user]:password@]host[:port][/db])';
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    return problem;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return problem;
  if (url.hostname === '') return problem;
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d+$/.test(url.pathname)) return problem;
  return undefined;
};

/** One Redis Cluster node: `host:port` (a name, an IPv4 address or a bracketed IPv6 one). */
const CLUSTER_NODE_SCHEMA = {
  type: 'string',
  pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}$',
  description: 'host:port',
} as const;

const checkClusterNodes = (value: OptionValue): string | undefined => {
  const nodes = value as readonly string[];
  const bad = nodes.find((node) => {
    const port = Number(node.slice(node.lastIndexOf(':') + 1));
    return port < 1 || port > 65535;
  });
  return bad === undefined ? undefined : `${bad}: the port must be 1 to 65535`;
};

/** What every switch that is off by default shares. */
const OFF_SWITCH = {
  type: 'boolean',
  default: false,
  defaultText: 'false',
  schema: { type: 'boolean' },
  secret: false,
} as const;

/** What the two cache spec options share. */
const CACHE_SPEC = {
  type: 'string',
  placeholder: '<spec>',
  defaultText: 'unset',
  schema: NON_EMPTY,
  check: checkCacheSpec,
  secret: false,
} as const;

/** One entry `endpoint[=platform+...]` (a settings file `{endpoint, platforms}` is read as that text). */
const ENDPOINT_SCHEMA = {
  type: 'string',
  pattern: '^[a-z][a-z0-9+.-]*://\\S+$',
  description: 'a URL such as tcp://host:port, optionally =os/arch+os/arch (or {endpoint, platforms})',
} as const;

/** The entries of a list or of one comma-separated text (settings objects in their text form). */
function endpointList(value: OptionValue): string[] {
  const items: unknown[] = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [];
  return items
    .map((item) => builderEntryText(item))
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

const checkEndpoints = (value: OptionValue): string | undefined => {
  const entries = endpointList(value);
  for (const entry of entries) {
    const problem = builderEntryProblem(entry);
    if (problem !== undefined) return problem;
  }
  const endpoints = entries.map((entry) => parseBuilderEntry(entry).endpoint);
  const twice = endpoints.find((endpoint, i) => endpoints.indexOf(endpoint) !== i);
  return twice === undefined ? undefined : `"${twice}" is listed twice`;
};

/** The rows, by option name; a row's default is read from here wherever it is needed. */
export const OPTION_TABLE = {
  builderEndpoint: {
    label: 'Builder endpoints',
    flag: '--builder-endpoint',
    env: 'BUILDER_ENDPOINT',
    settingsKey: 'builder.endpoint',
    lands: false,
    type: 'list',
    settingsText: true,
    settingsItem: builderEntryText,
    placeholder: '<url[=os/arch+...],...>',
    default: [],
    defaultText: 'unset; readiness never passes',
    schema: ENDPOINT_SCHEMA,
    check: checkEndpoints,
    secret: false,
    description:
      'BuildKit endpoint(s) of the remote builders (`docker buildx create --driver remote <url>`): one, ' +
      'or a comma-separated list (a list in the settings file) placed by repository (docs/fleet.md). ' +
      'An entry may declare the platforms it builds natively: `tcp://host:port=linux/amd64+linux/386`, ' +
      'or `{endpoint, platforms}` in the settings file.',
  },
  builderTlsCa: {
    label: 'Builder TLS CA file',
    flag: '--builder-tls-ca',
    env: 'BUILDER_TLS_CA_PATH',
    settingsKey: 'builder.tls.ca',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset',
    description: "PEM file of the CA that signed the builders' server certificates (mutual TLS).",
  },
  builderTlsCert: {
    label: 'Builder TLS client certificate file',
    flag: '--builder-tls-cert',
    env: 'BUILDER_TLS_CERT_PATH',
    settingsKey: 'builder.tls.cert',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset',
    description: "PEM file of the service's client certificate for the builders; given with its key.",
  },
  builderTlsKey: {
    label: 'Builder TLS client key file',
    flag: '--builder-tls-key',
    env: 'BUILDER_TLS_KEY_PATH',
    settingsKey: 'builder.tls.key',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset',
    description:
      "PEM file of the client certificate's private key; only its path is ever passed on (the key is a secret).",
  },
  builderTlsServerName: {
    label: 'Builder TLS server name',
    flag: '--builder-tls-server-name',
    env: 'BUILDER_TLS_SERVER_NAME',
    settingsKey: 'builder.tls.serverName',
    lands: false,
    type: 'string',
    placeholder: '<name>',
    defaultText: "unset: each endpoint's host",
    schema: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9.-]*$',
      description: 'a DNS name such as buildkitd.build.svc',
    },
    secret: false,
    description: "Name the builders' server certificates are checked against.",
  },
  port: {
    label: 'HTTP port',
    flag: '--port',
    env: 'PORT',
    settingsKey: 'service.port',
    type: 'integer',
    placeholder: '<port>',
    default: 8080,
    defaultText: '8080',
    schema: PORT_SCHEMA,
    secret: false,
    description: 'TCP port the HTTP server listens on (0 picks a free port; the startup log names it).',
  },
  host: {
    label: 'Listen address',
    flag: '--host',
    env: 'HOST',
    settingsKey: 'service.host',
    type: 'string',
    placeholder: '<address>',
    defaultText: 'unset: every interface',
    schema: {
      type: 'string',
      pattern: '^[A-Za-z0-9.:_%-]+$',
      description: 'an IP address or host name such as 127.0.0.1, ::1 or localhost',
    },
    secret: false,
    description: 'Address the HTTP server listens on (`127.0.0.1` for this machine only).',
  },
  builderName: {
    label: 'Builder name',
    flag: '--builder-name',
    env: 'BUILDER_NAME',
    // No settings key (flag and environment only): the row names its place.
    lands: 'builderName',
    type: 'string',
    placeholder: '<name>',
    default: 'service-remote',
    defaultText: '`service-remote`',
    schema: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
      description: 'letters, digits, _ . -',
    },
    secret: false,
    description: 'Name of the buildx builder instance the service creates for the endpoint.',
  },
  sshHostKeyPolicy: {
    label: 'SSH host key policy',
    flag: '--ssh-host-key-policy',
    env: 'SSH_HOST_KEY_POLICY',
    settingsKey: 'sshHostKeyPolicy',
    type: 'string',
    placeholder: '<policy>',
    default: 'tofu',
    defaultText: '`tofu`',
    values: SSH_HOST_KEY_POLICIES,
    schema: { type: 'string', enum: [...SSH_HOST_KEY_POLICIES] },
    secret: false,
    description:
      "`tofu` trusts an SSH host key on first use; `pinned` requires the credential entry's `pinnedHostKey`.",
  },
  insecureRegistries: {
    label: 'Plain-HTTP registries',
    flag: '--insecure-registries',
    env: 'INSECURE_REGISTRIES',
    settingsKey: 'insecureRegistries',
    type: 'list',
    placeholder: '<host:port,...>',
    default: [],
    defaultText: 'empty list (HTTPS everywhere)',
    schema: { type: 'string', pattern: '^[^\\s/]+$', description: 'host[:port] without scheme or path' },
    secret: false,
    description: 'Registries (host[:port], comma-separated) spoken to over plain HTTP.',
  },
  allowInsecureGitProtocols: {
    label: 'Accept `git://` and `http://` URLs',
    flag: '--allow-insecure-git-protocols',
    env: 'ALLOW_INSECURE_GIT_PROTOCOLS',
    settingsKey: 'git.allowInsecureProtocols',
    ...OFF_SWITCH,
    description: 'Accept `git://` and `http://` repository URLs.',
  },
  gitCredentialsConfigPath: {
    label: 'Git credentials file path',
    flag: '--git-credentials-config-path',
    env: 'GIT_CREDENTIALS_CONFIG_PATH',
    ...FILE_PATH,
    defaultText: 'unset (empty list)',
    description:
      "JSON/YAML array of git credential entries; replaces the settings file's `gitCredentials.entries`.",
  },
  registryMappingConfigPath: {
    label: 'Registry mapping file path',
    flag: '--registry-mapping-config-path',
    env: 'REGISTRY_MAPPING_CONFIG_PATH',
    ...FILE_PATH,
    defaultText: 'unset (empty list)',
    description:
      "JSON/YAML array of registry mapping rules; replaces the settings file's `registryMapping.rules`.",
  },
  buildSecretsConfigPath: {
    label: 'Build secrets file path',
    flag: '--build-secrets-config-path',
    env: 'BUILD_SECRETS_CONFIG_PATH',
    ...FILE_PATH,
    defaultText: 'unset (no server build secrets)',
    description:
      'JSON/YAML array of build secret entries `{id, value | file, repositories: [{host, pathPrefix?}]}`' +
      " (docs/secrets.md); replaces the settings file's `buildSecrets.entries`.",
  },
  eventSubscriptionsConfigPath: {
    label: 'Event subscriptions file path',
    flag: '--event-subscriptions-config-path',
    env: 'EVENT_SUBSCRIPTIONS_CONFIG_PATH',
    ...FILE_PATH,
    defaultText: 'unset (no subscriptions)',
    description:
      'JSON/YAML array of event subscriptions `{name, url, secrets, types?, repositories?, statuses?}`' +
      " (docs/events.md); replaces the settings file's `events.subscriptions`.",
  },
  eventRetrySeconds: {
    label: 'Event retry delays, seconds',
    flag: '--event-retry-seconds',
    env: 'EVENT_RETRY_SECONDS',
    settingsKey: 'events.retrySeconds',
    lands: false,
    type: 'list',
    placeholder: '<s,...>',
    default: ['5', '300', '1800', '7200', '18000', '36000', '36000'],
    defaultText: '5,300,1800,7200,18000,36000,36000',
    schema: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', pattern: '^\\d+$' },
      ],
      description: 'a whole number of seconds',
    },
    secret: false,
    description:
      'Delays between the attempts of an event delivery (each with up to 10 % jitter); after the last, the delivery fails.',
  },
  buildPlatforms: {
    label: 'Default platforms',
    flag: '--build-platforms',
    env: 'BUILD_PLATFORMS',
    settingsKey: 'build.platforms',
    type: 'list',
    placeholder: '<os/arch,...>',
    default: [],
    defaultText: 'empty list',
    schema: {
      type: 'string',
      pattern: BUILD_PLATFORM_PATTERN,
      description: 'os/arch[/variant], e.g. linux/amd64',
    },
    secret: false,
    description: 'Platforms built when a request names none (comma-separated).',
  },
  buildNoCache: {
    label: 'Default no-cache',
    flag: '--build-no-cache',
    env: 'BUILD_NO_CACHE',
    settingsKey: 'build.noCache',
    ...OFF_SWITCH,
    description: 'Build without cache unless a request says otherwise.',
  },
  buildCacheFrom: {
    label: 'Default cache-from',
    flag: '--build-cache-from',
    env: 'BUILD_CACHE_FROM',
    settingsKey: 'build.cacheFrom',
    ...CACHE_SPEC,
    description: `Cache import spec (buildx syntax; type ${CACHE_TYPES.join(', ')}).`,
  },
  buildCacheTo: {
    label: 'Default cache-to',
    flag: '--build-cache-to',
    env: 'BUILD_CACHE_TO',
    settingsKey: 'build.cacheTo',
    ...CACHE_SPEC,
    description: `Cache export spec (buildx syntax; type ${CACHE_TYPES.join(', ')}).`,
  },
  builderMode: {
    label: 'Default builder mode',
    flag: '--builder-mode',
    env: 'BUILDER_MODE',
    settingsKey: 'build.mode',
    type: 'string',
    placeholder: '<mode>',
    default: 'auto',
    defaultText: '`auto`',
    values: BUILDER_MODES,
    schema: { type: 'string', enum: [...BUILDER_MODES] },
    secret: false,
    description: 'Whether builds use the remote builder (`auto`) or not at all (`never`).',
  },
  cloneTimeoutSeconds: {
    label: 'Clone timeout, seconds',
    flag: '--clone-timeout',
    env: 'CLONE_TIMEOUT_SECONDS',
    settingsKey: 'build.cloneTimeoutSeconds',
    type: 'integer',
    placeholder: '<seconds>',
    default: 600,
    defaultText: '600',
    schema: SECONDS_SCHEMA,
    secret: false,
    description: 'The git clone is killed after this many seconds.',
  },
  buildTimeoutSeconds: {
    label: 'Build and push timeout, seconds',
    flag: '--build-timeout',
    env: 'BUILD_TIMEOUT_SECONDS',
    settingsKey: 'build.timeoutSeconds',
    type: 'integer',
    placeholder: '<seconds>',
    default: 3600,
    defaultText: '3600',
    schema: SECONDS_SCHEMA,
    secret: false,
    description: 'The dev container build and push is killed after this many seconds.',
  },
  maxConcurrentBuilds: {
    label: 'Concurrent builds per instance',
    flag: '--max-concurrent-builds',
    env: 'MAX_CONCURRENT_BUILDS',
    settingsKey: 'build.maxConcurrent',
    type: 'integer',
    placeholder: '<n>',
    default: 4,
    defaultText: '4 (0 means no limit)',
    schema: { type: 'integer', minimum: 0 },
    secret: false,
    description: 'Builds running at once; one more answers 429 with Retry-After.',
  },
  maxQueuedBuilds: {
    label: 'Queued builds',
    flag: '--max-queued-builds',
    env: 'MAX_QUEUED_BUILDS',
    settingsKey: 'build.maxQueued',
    type: 'integer',
    placeholder: '<n>',
    default: 200,
    defaultText: '200',
    schema: { type: 'integer', minimum: 0 },
    secret: false,
    description:
      'Async builds waiting for a slot (docs/queue.md; shared by every replica in Redis mode); one more answers 429.',
  },
  maxQueuedPrebuilds: {
    label: 'Queued prebuilds',
    flag: '--max-queued-prebuilds',
    env: 'MAX_QUEUED_PREBUILDS',
    settingsKey: 'build.maxQueuedPrebuilds',
    type: 'integer',
    placeholder: '<n>',
    default: 10_000,
    defaultText: '10000',
    schema: { type: 'integer', minimum: 0 },
    secret: false,
    description:
      'Prebuilds (push, reconcile, refresh) waiting for a slot, apart from `build.maxQueued` (docs/queue.md); one more is refused and logged.',
  },
  buildQuotasPath: {
    label: 'Tenant quotas file path',
    flag: '--build-quotas-path',
    env: 'BUILD_QUOTAS_PATH',
    ...FILE_PATH,
    defaultText: 'unset (no per-tenant cap)',
    description:
      "JSON/YAML array of tenant quotas `{tenant, maxRunning?, maxQueued?, monthlyBuildMinutes?, warnAtPercent?}` (docs/queue.md, docs/usage.md); replaces the settings file's `build.quotas`.",
  },
  maxBuildsPerBuilder: {
    label: 'Concurrent builds per builder',
    flag: '--max-builds-per-builder',
    env: 'MAX_BUILDS_PER_BUILDER',
    settingsKey: 'build.maxPerBuilder',
    type: 'integer',
    placeholder: '<n>',
    default: 0,
    defaultText: '0 (no limit)',
    schema: { type: 'integer', minimum: 0 },
    secret: false,
    description:
      'Builds one builder runs at once; a build whose first builder is full goes to the next in its order, and 429 when all are.',
  },
  nativePlatformsOnly: {
    label: 'Native platforms only',
    flag: '--native-platforms-only',
    env: 'NATIVE_PLATFORMS_ONLY',
    settingsKey: 'build.nativePlatformsOnly',
    ...OFF_SWITCH,
    description:
      'A platform no declaring builder can take fails the build (400 when none declares it, 503 when they are down or full) ' +
      'instead of falling back to a builder that declares none (docs/fleet.md).',
  },
  buildReuse: {
    label: 'Build reuse',
    flag: '--build-reuse',
    env: 'BUILD_REUSE',
    settingsKey: 'build.reuse',
    type: 'boolean',
    default: true,
    defaultText: 'true',
    schema: { type: 'boolean' },
    secret: false,
    description:
      'Reuse the image of an earlier build whose inputs (build key) are unchanged, and follow identical builds in flight.',
  },
  fallbackImage: {
    label: 'Fallback image',
    flag: '--fallback-image',
    env: 'FALLBACK_IMAGE',
    settingsKey: 'build.fallbackImage',
    type: 'string',
    placeholder: '<image>',
    defaultText: 'unset (such builds fail)',
    schema: { type: 'string', pattern: '^\\S+$', description: 'an image reference' },
    secret: false,
    description: 'Image used as `{image: <fallback>}` for repositories without a devcontainer.json.',
  },
  buildProvenance: {
    label: 'Provenance attestation',
    flag: '--build-provenance',
    env: 'BUILD_PROVENANCE',
    settingsKey: 'build.provenance',
    type: 'string',
    placeholder: '<mode>',
    default: 'min',
    defaultText: '`min` (as buildx)',
    values: PROVENANCE_MODES,
    schema: { type: 'string', enum: PROVENANCE_MODES },
    secret: false,
    description:
      'SLSA provenance of built images (`buildx build --provenance`); a reuse re-issues it for the image it writes (docs/supply-chain.md).',
  },
  buildCompression: {
    label: 'Layer compression',
    flag: '--build-compression',
    env: 'BUILD_COMPRESSION',
    settingsKey: 'build.compression',
    type: 'string',
    placeholder: '<compression>',
    default: 'gzip',
    defaultText: '`gzip` (as buildx)',
    values: LAYER_COMPRESSIONS,
    schema: { type: 'string', enum: LAYER_COMPRESSIONS },
    secret: false,
    description:
      'Layer compression of built images: gzip, zstd or estargz (OCI media types); `buildOptions.compression` chooses per request, and a reuse keeps the image it reuses (docs/reuse.md).',
  },
  buildSbom: {
    label: 'SBOM attestation',
    flag: '--build-sbom',
    env: 'BUILD_SBOM',
    settingsKey: 'build.sbom',
    ...OFF_SWITCH,
    description:
      'Attach an SBOM attestation to built images (`buildx build --attest type=sbom`); a reuse carries it over.',
  },
  buildSbomGenerator: {
    label: 'SBOM generator image',
    flag: '--build-sbom-generator',
    env: 'BUILD_SBOM_GENERATOR',
    settingsKey: 'build.sbomGenerator',
    type: 'string',
    placeholder: '<image>',
    defaultText: "unset: BuildKit's own scanner",
    schema: { type: 'string', pattern: '^[a-z0-9][^\\s,\'"]*$', description: 'an image reference' },
    secret: false,
    description:
      "Scanner image of the SBOM attestation (`--attest type=sbom,generator=<image>`), following BuildKit's SBOM protocol.",
  },
  provenanceBuilderId: {
    label: 'Provenance builder id',
    flag: '--provenance-builder-id',
    env: 'PROVENANCE_BUILDER_ID',
    settingsKey: 'build.provenanceBuilderId',
    type: 'string',
    placeholder: '<uri>',
    default: 'urn:image-build-service:builder',
    defaultText: '`urn:image-build-service:builder`',
    schema: {
      type: 'string',
      pattern: '^[A-Za-z][A-Za-z0-9+.-]*:\\S+$',
      description: 'a URI such as https://builds.example.com/image-build-service',
    },
    secret: false,
    description:
      '`builder.id` of the provenance a reuse re-issues: this service, as the URI your policies trust.',
  },
  signingKeyPath: {
    label: 'Signing key path',
    flag: '--signing-key',
    env: 'SIGNING_KEY_PATH',
    settingsKey: 'signing.keyPath',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset (nothing signed)',
    description:
      'PEM private key (ECDSA P-256, PKCS#8; if encrypted, its password in `SIGNING_KEY_PASSWORD`): every image answered is signed for `cosign verify --key`.',
  },
  errorTrackingDsn: {
    label: 'Error-tracking DSN',
    flag: '--error-tracking-dsn',
    env: 'ERROR_TRACKING_DSN',
    settingsKey: 'errorTracking.dsn',
    type: 'string',
    placeholder: '<dsn>',
    defaultText: 'unset (error tracking off)',
    schema: NON_EMPTY,
    check: checkDsn,
    secret: true,
    description: 'Error-tracking (Sentry) DSN; 5xx answers and crashes are reported.',
  },
  serviceName: {
    label: 'Service name',
    flag: '--service-name',
    env: 'SERVICE_NAME',
    settingsKey: 'observability.serviceName',
    type: 'string',
    placeholder: '<name>',
    default: 'service-builder',
    defaultText: '`service-builder`',
    schema: NON_EMPTY,
    secret: false,
    description: '`service.name` of every log line and span (`OTEL_SERVICE_NAME` wins for spans).',
  },
  environment: {
    label: 'Deployment environment',
    flag: '--environment',
    env: 'DEPLOYMENT_ENVIRONMENT',
    settingsKey: 'observability.environment',
    type: 'string',
    placeholder: '<name>',
    default: 'development',
    defaultText: '`development`',
    schema: NON_EMPTY,
    secret: false,
    description: '`deployment.environment.name` of every log line, span and error report.',
  },
  commandLogRetention: {
    label: 'Command-log retention per kind',
    flag: '--command-log-retention',
    env: 'COMMAND_LOG_RETENTION',
    settingsKey: 'logs.retention',
    type: 'integer',
    placeholder: '<n>',
    default: 10,
    defaultText: '10',
    schema: SECONDS_SCHEMA,
    secret: false,
    description: 'Captured command logs kept per kind (`git`, `img`); the oldest are pruned first.',
  },
  buildHistory: {
    label: 'Finished builds listed',
    flag: '--build-history',
    env: 'BUILD_HISTORY',
    settingsKey: 'build.history',
    type: 'integer',
    placeholder: '<n>',
    default: 1000,
    defaultText: '1000',
    schema: { type: 'integer', minimum: 1 },
    secret: false,
    description:
      'Finished builds kept for `GET /builds` (the newest, listed a page at a time); their durations also estimate the Retry-After of a 429.',
  },
  buildHistoryDays: {
    label: 'Days a finished build is listed',
    flag: '--build-history-days',
    env: 'BUILD_HISTORY_DAYS',
    settingsKey: 'build.historyDays',
    type: 'number',
    placeholder: '<days>',
    default: 30,
    defaultText: '30 (fractions allowed)',
    schema: { type: 'number', exclusiveMinimum: 0 },
    secret: false,
    description:
      'A finished build leaves `GET /builds` (and `GET /builds/{id}` answers 404) this many days after it finished, even within `build.history`.',
  },
  retentionMode: {
    label: 'Retention mode',
    flag: '--retention-mode',
    env: 'RETENTION_MODE',
    settingsKey: 'retention.mode',
    type: 'string',
    placeholder: '<mode>',
    default: 'off',
    defaultText: '`off`',
    values: RETENTION_MODES,
    schema: { type: 'string', enum: [...RETENTION_MODES] },
    secret: false,
    description:
      'Image retention (docs/retention.md): `off`, `dry-run` (the scheduled run logs its plan) or `delete`.',
  },
  retentionKeepPerBranch: {
    label: 'Retention: newest images kept per branch',
    flag: '--retention-keep-per-branch',
    env: 'RETENTION_KEEP_PER_BRANCH',
    settingsKey: 'retention.keepPerBranch',
    type: 'integer',
    placeholder: '<n>',
    default: 2,
    defaultText: '2 (0 turns the rule off)',
    schema: { type: 'integer', minimum: 0 },
    secret: false,
    description: 'The newest images (by build time) kept per repository and branch.',
  },
  retentionKeepServedDays: {
    label: 'Retention: days an image served is kept',
    flag: '--retention-keep-served-days',
    env: 'RETENTION_KEEP_SERVED_DAYS',
    settingsKey: 'retention.keepServedDays',
    type: 'number',
    placeholder: '<days>',
    default: 30,
    defaultText: '30 (0 turns the rule off; fractions allowed)',
    schema: { type: 'number', minimum: 0 },
    secret: false,
    description:
      'Images built, answered, read (GET /image, GET /devcontainer) or reused from in the last this many days are kept.',
  },
  retentionKeepTags: {
    label: 'Retention: tags always kept',
    flag: '--retention-keep-tags',
    env: 'RETENTION_KEEP_TAGS',
    settingsKey: 'retention.keepTags',
    type: 'list',
    placeholder: '<glob,...>',
    default: [],
    defaultText: 'empty list (every tag a request named is kept)',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_.*?-]{1,128}$', description: 'a tag glob (`*`, `?`)' },
    secret: false,
    description:
      'Tags matching one of these globs are kept; when set, a tag a request named is kept only if it matches.',
  },
  retentionIntervalMinutes: {
    label: 'Retention: minutes between runs',
    flag: '--retention-interval-minutes',
    env: 'RETENTION_INTERVAL_MINUTES',
    settingsKey: 'retention.intervalMinutes',
    type: 'integer',
    placeholder: '<minutes>',
    default: 60,
    defaultText: '60',
    schema: { type: 'integer', minimum: 1 },
    secret: false,
    description: 'The scheduled run (dry-run or delete mode) starts this often; one replica at a time.',
  },
  retentionRepositories: {
    label: 'Retention: repositories always scanned',
    flag: '--retention-repositories',
    env: 'RETENTION_REPOSITORIES',
    settingsKey: 'retention.repositories',
    type: 'list',
    placeholder: '<registry/name,...>',
    default: [],
    defaultText: 'empty list',
    schema: { type: 'string', minLength: 3, pattern: '^[^\\s,/]+/[^\\s,]+$', description: 'registry/name' },
    secret: false,
    description:
      'Registry repositories (`<registry>/<name>`) scanned besides those the service answered builds for.',
  },
  usageRetentionDays: {
    label: 'Usage: days kept',
    flag: '--usage-retention-days',
    env: 'USAGE_RETENTION_DAYS',
    settingsKey: 'usage.retentionDays',
    type: 'integer',
    placeholder: '<days>',
    default: 400,
    defaultText: '400',
    schema: { type: 'integer', minimum: 1, maximum: 3660 },
    secret: false,
    description: 'How long the hourly usage buckets of GET /usage are kept (docs/usage.md).',
  },
  usageMetricTenants: {
    label: 'Usage: tenants named in metrics',
    flag: '--usage-metric-tenants',
    env: 'USAGE_METRIC_TENANTS',
    settingsKey: 'usage.metricTenants',
    type: 'list',
    placeholder: '<tenant,...>',
    default: [],
    defaultText: 'empty list (the tenants of `build.quotas` only)',
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\s,*?]+$',
      description: 'a tenant name',
    },
    secret: false,
    description:
      'Tenants labelled by name in the service_tenant_* metrics besides those `build.quotas` names; every other tenant is `other` (docs/usage.md).',
  },
  redisUrl: {
    label: 'Redis URL',
    flag: '--redis-url',
    env: 'REDIS_URL',
    settingsKey: 'redis.url',
    type: 'string',
    placeholder: '<url>',
    defaultText: 'unset (embedded mode: one instance, logs in its scratch space)',
    schema: NON_EMPTY,
    check: checkRedisUrl,
    secret: true,
    description:
      'Redis (or Valkey) shared by every replica: command logs and the build list live there ' +
      '(`redis://` or `rediss://` for TLS; its password is a secret).',
  },
  redisClusterNodes: {
    label: 'Redis Cluster nodes',
    flag: '--redis-cluster-nodes',
    env: 'REDIS_CLUSTER_NODES',
    settingsKey: 'redis.clusterNodes',
    type: 'list',
    settingsText: true,
    placeholder: '<host:port,...>',
    default: [],
    defaultText: 'unset (no cluster)',
    schema: CLUSTER_NODE_SCHEMA,
    check: checkClusterNodes,
    secret: false,
    description:
      'A Redis Cluster shared by every replica instead of one server (docs/redis.md): some of its ' +
      'nodes, `host:port`; the client learns the others. Not with `redis.url`. Password: ' +
      '`redis.passwordFile`; TLS: `redis.tls`.',
  },
  redisSentinels: {
    label: 'Redis Sentinels',
    flag: '--redis-sentinels',
    env: 'REDIS_SENTINELS',
    settingsKey: 'redis.sentinels',
    type: 'list',
    settingsText: true,
    placeholder: '<host:port,...>',
    default: [],
    defaultText: 'unset (no Sentinel)',
    schema: CLUSTER_NODE_SCHEMA,
    check: checkClusterNodes,
    secret: false,
    description:
      'Redis Sentinels that name the primary of `redis.sentinelName` (docs/redis.md): `host:port`; ' +
      'the client follows a failover. Not with `redis.url` or `redis.clusterNodes`. Password: ' +
      '`redis.passwordFile` (the primary, its replicas and the Sentinels); TLS: `redis.tls`.',
  },
  redisSentinelName: {
    label: 'Redis Sentinel primary name',
    flag: '--redis-sentinel-name',
    env: 'REDIS_SENTINEL_NAME',
    settingsKey: 'redis.sentinelName',
    type: 'string',
    placeholder: '<name>',
    defaultText: 'unset',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', description: 'a Sentinel master name' },
    secret: false,
    description:
      'The name the Sentinels monitor the primary under (`sentinel monitor <name> ...`); needed with `redis.sentinels`.',
  },
  redisPasswordFile: {
    label: 'Redis Cluster or Sentinel password file',
    flag: '--redis-password-file',
    env: 'REDIS_PASSWORD_FILE',
    settingsKey: 'redis.passwordFile',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset (no password)',
    description:
      "File holding the password of the Redis Cluster's nodes, or of the Sentinels' primary, replicas and " +
      'Sentinels (`requirepass`; a secret, read once at startup). Only with `redis.clusterNodes` or ' +
      '`redis.sentinels`: a single server takes its password in `redis.url`.',
  },
  redisTls: {
    label: 'Redis Cluster or Sentinel TLS',
    flag: '--redis-tls',
    env: 'REDIS_TLS',
    settingsKey: 'redis.tls',
    ...OFF_SWITCH,
    description:
      "TLS to the Redis Cluster's nodes, or to the Sentinels and their primary (the system's CAs, " +
      '`NODE_EXTRA_CA_CERTS`). Only with `redis.clusterNodes` or `redis.sentinels`: a single server ' +
      'says it with `rediss://`.',
  },
  prebuildConfigurationsPath: {
    label: 'Prebuild configurations file path',
    flag: '--prebuild-configurations-path',
    env: 'PREBUILD_CONFIGURATIONS_PATH',
    ...FILE_PATH,
    defaultText: 'unset (no prebuilds)',
    description:
      'JSON/YAML array of prebuild configurations `{repository, branches, paths?, image, ...}`' +
      " (docs/prebuilds.md); replaces the settings file's `prebuilds.configurations`.",
  },
  prebuildReconcileIntervalSeconds: {
    label: 'Prebuild reconcile interval',
    flag: '--prebuild-reconcile-interval-seconds',
    env: 'PREBUILD_RECONCILE_INTERVAL_SECONDS',
    settingsKey: 'prebuilds.reconcileIntervalSeconds',
    type: 'integer',
    placeholder: '<s>',
    default: 300,
    defaultText: '300',
    schema: SECONDS_SCHEMA,
    secret: false,
    description: "Seconds between two reads of the configured repositories' heads (`git ls-remote`).",
  },
  prebuildRefreshIntervalSeconds: {
    label: 'Prebuild refresh interval',
    flag: '--prebuild-refresh-interval-seconds',
    env: 'PREBUILD_REFRESH_INTERVAL_SECONDS',
    settingsKey: 'prebuilds.refreshIntervalSeconds',
    type: 'integer',
    placeholder: '<s>',
    default: 21600,
    defaultText: '21600 (6 h)',
    schema: SECONDS_SCHEMA,
    secret: false,
    description: "Seconds between two checks of the newest prebuilds' base image and feature digests.",
  },
  githubHookSecretFile: hookSecretRow('github'),
  gitlabHookTokenFile: hookSecretRow('gitlab'),
  giteaHookSecretFile: hookSecretRow('gitea'),
  authMode: {
    label: 'Caller identity mode',
    flag: '--auth-mode',
    env: 'AUTH_MODE',
    settingsKey: 'auth.mode',
    type: 'string',
    placeholder: '<mode>',
    default: 'off',
    defaultText: '`off`',
    values: AUTH_MODES,
    schema: { type: 'string', enum: [...AUTH_MODES] },
    secret: false,
    description:
      'Caller identity (docs/auth.md): `off` answers every caller (cluster-internal use), `enforce` asks ' +
      'each request for a bearer token (OIDC ID token or static token) that a rule allows.',
  },
  authIssuersPath: {
    label: 'Identity issuers file path',
    flag: '--auth-issuers-path',
    env: 'AUTH_ISSUERS_PATH',
    ...FILE_PATH,
    defaultText: 'unset (empty list)',
    description:
      "JSON/YAML array of OIDC issuers `{name, issuer, audience}`; replaces the settings file's `auth.issuers`.",
  },
  authTokensPath: {
    label: 'Static tokens file path',
    flag: '--auth-tokens-path',
    env: 'AUTH_TOKENS_PATH',
    ...FILE_PATH,
    defaultText: 'unset (empty list)',
    description:
      "JSON/YAML array of static bearer tokens `{name, sha256}` (the token's sha256, hex); " +
      "replaces the settings file's `auth.tokens`.",
  },
  authRulesPath: {
    label: 'Access rules file path',
    flag: '--auth-rules-path',
    env: 'AUTH_RULES_PATH',
    ...FILE_PATH,
    defaultText: 'unset (empty list)',
    description:
      'JSON/YAML array of access rules `{name, issuer | token, claims?, actions, repositories, images}` ' +
      "(docs/auth.md); replaces the settings file's `auth.rules`.",
  },
  authBrowserIssuer: {
    label: 'People sign-in issuer',
    flag: '--auth-browser-issuer',
    env: 'AUTH_BROWSER_ISSUER',
    settingsKey: 'auth.browser.issuer',
    type: 'string',
    placeholder: '<name>',
    defaultText: 'unset (no sign-in for people: the pages ask for a token)',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$', description: 'an issuer name' },
    secret: false,
    description:
      'The entry of `auth.issuers` (by name) people sign in with from the pages (OpenID Connect ' +
      'authorization code flow with PKCE, docs/auth.md); its ID tokens carry the client id as audience.',
  },
  authBrowserClientId: {
    label: 'People sign-in client id',
    flag: '--auth-browser-client-id',
    env: 'AUTH_BROWSER_CLIENT_ID',
    settingsKey: 'auth.browser.clientId',
    type: 'string',
    placeholder: '<id>',
    defaultText: 'unset',
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '^[!-~]+$',
      description: 'printable, no spaces',
    },
    secret: false,
    description: "The service's client id at the provider: the `aud` of a person's ID token.",
  },
  authBrowserScopes: {
    label: 'People sign-in scopes',
    flag: '--auth-browser-scopes',
    env: 'AUTH_BROWSER_SCOPES',
    settingsKey: 'auth.browser.scopes',
    type: 'list',
    placeholder: '<scope,...>',
    default: ['openid', 'email', 'profile'],
    defaultText: 'openid,email,profile',
    schema: { type: 'string', pattern: '^[!#-\\[\\]-~]+$', description: 'a scope token' },
    settingsText: true,
    secret: false,
    description:
      'Scopes asked of the provider (`openid` always among them); add `groups` where the provider needs it.',
  },
  authBrowserRedirectUrl: {
    label: 'People sign-in redirect URL',
    flag: '--auth-browser-redirect-url',
    env: 'AUTH_BROWSER_REDIRECT_URL',
    settingsKey: 'auth.browser.redirectUrl',
    type: 'string',
    placeholder: '<url>',
    defaultText: 'unset',
    schema: {
      type: 'string',
      pattern: '^https?://[^\\s?#]+/auth/callback$',
      description: "the service's own http(s) URL ending in /auth/callback",
    },
    secret: false,
    description:
      'The URL of `/auth/callback` as the browser reaches the service (registered at the provider); ' +
      'plain http only on a loopback address.',
  },
  authBrowserSessionHours: {
    label: 'People session length, hours',
    flag: '--auth-browser-session-hours',
    env: 'AUTH_BROWSER_SESSION_HOURS',
    settingsKey: 'auth.browser.sessionHours',
    type: 'integer',
    placeholder: '<hours>',
    default: 8,
    defaultText: '8',
    schema: { type: 'integer', minimum: 1, maximum: 720 },
    secret: false,
    description: "A person's session ends after this long, or at their ID token's expiry if sooner.",
  },
  authBrowserClientSecretFile: {
    label: 'People sign-in client secret file',
    flag: '--auth-browser-client-secret-file',
    env: 'AUTH_BROWSER_CLIENT_SECRET_FILE',
    settingsKey: 'auth.browser.clientSecretFile',
    lands: false,
    ...FILE_PATH,
    defaultText: 'unset: env AUTH_BROWSER_CLIENT_SECRET, else a public client (PKCE alone)',
    description:
      'File holding the client secret the provider gave the service (env `AUTH_BROWSER_CLIENT_SECRET` ' +
      'wins); never shown.',
  },
  shutdownGraceSeconds: {
    label: 'Shutdown grace, seconds',
    flag: '--shutdown-grace-seconds',
    env: 'SHUTDOWN_GRACE_SECONDS',
    settingsKey: 'service.shutdownGraceSeconds',
    type: 'integer',
    placeholder: '<seconds>',
    default: 290,
    defaultText: '290',
    schema: SECONDS_SCHEMA,
    secret: false,
    description:
      'After SIGTERM/SIGINT, in-flight requests and builds get this long; then the builds another ' +
      'replica can run go back to the shared queue and running commands are killed (keep it at ' +
      'least 10 s under the orchestrator termination grace, 300 s by default).',
  },
  settingsPath: {
    label: 'Settings file path',
    flag: '--settings',
    env: 'SERVICE_CONFIG_PATH',
    // The settings file's own path has no settings key: the row names its place.
    lands: 'settingsPath',
    ...FILE_PATH,
    defaultText: 'unset',
    description: 'JSON (`.json`) or YAML (`.yaml`, `.yml`) settings file.',
  },
} as const satisfies Readonly<Record<string, OptionRow>>;

/** Every option, in the README table's order. */
export const OPTIONS: readonly OptionSpec[] = Object.freeze(
  Object.entries(OPTION_TABLE).map(
    ([name, row]: [string, OptionRow]) =>
      Object.freeze({ ...row, name: name as OptionName, lands: landsAt(row) }) as OptionSpec,
  ),
);

export const OPTION_BY_FLAG: ReadonlyMap<string, OptionSpec> = new Map(OPTIONS.map((o) => [o.flag, o]));

export function optionByName(name: OptionName): OptionSpec {
  const option = OPTIONS.find((o) => o.name === name);
  if (!option) throw new Error(`no option ${name}`);
  return option;
}
