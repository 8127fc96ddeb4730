/**
 * Loads the configuration once at startup: every option of the table resolves
 * flag > environment variable > settings file > default; the git credentials and registry
 * mapping files (and the build secrets file) replace the settings file's entries; the ambient registry auth is read from
 * the docker config. Every problem is collected and thrown at once as a ConfigError.
 * The result is deep-frozen.
 */
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerBuildSecret } from '../rules/build-secret-rules.js';
import { parseArgv, type ParsedArgv } from './argv.js';
import { buildSecretEntries } from './build-secrets.js';
import { builderDeclarations } from './builder-endpoints.js';
import { builderTls, builderTlsProblems } from './builder-tls.js';
import { childEnvironment } from './child-env.js';
import { ConfigError } from './config-error.js';
import { duplicateCredentialProblems } from './credential-entries.js';
import { eventSubscriptions } from './event-subscriptions.js';
import { readDockerConfig, readStructuredFile } from './files.js';
import {
  OPTIONS,
  optionByName,
  type OptionName,
  type OptionSpec,
  type OptionValue,
  type OptionValues,
} from './options.js';
import {
  formatAjvErrors,
  optionValidators,
  pointerToPath,
  validateGitCredentialsFile,
  validateRegistryMappingFile,
  validateSettings,
} from './schema.js';
import { valueFromText } from './text-values.js';
import { loadSigningKey } from './signing-key.js';
import { hookSecrets, prebuildConfigurations } from './prebuilds.js';
import type {
  BuildDefaults,
  Config,
  DockerConfigDocument,
  EventsConfig,
  GitCredential,
  PrebuildSettings,
  RegistryMappingRule,
  SigningKey,
} from './types.js';
import { packageVersion } from './version.js';

export type Environment = Readonly<Record<string, string | undefined>>;

export interface LoadInput {
  /** Command-line arguments after the script (process.argv.slice(2)). */
  readonly argv: readonly string[];
  readonly env: Environment;
}

/** Where an option's effective value came from. */
export type ValueSource = 'flag' | 'env' | 'settings' | 'default' | 'unset';

export interface LoadedConfig {
  readonly config: Config;
  readonly sources: Readonly<Record<OptionName, ValueSource>>;
}

type Settings = Record<string, unknown>;

function settingsValue(settings: Settings | undefined, key: string): unknown {
  let node: unknown = settings;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** List options that also take one comma-separated string in the settings file: that string as a list. */
function listsFromText(values: unknown): unknown {
  for (const option of OPTIONS) {
    if (option.settingsText !== true || option.settingsKey === undefined) continue;
    const parts = option.settingsKey.split('.');
    const parent = settingsValue(values as Settings, parts.slice(0, -1).join('.'));
    const last = parts.at(-1) ?? '';
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) continue;
    const text = (parent as Record<string, unknown>)[last];
    if (Array.isArray(text) && option.settingsItem !== undefined) {
      (parent as Record<string, unknown>)[last] = text.map(option.settingsItem);
    }
    if (typeof text !== 'string') continue;
    const typed = valueFromText(option, text);
    (parent as Record<string, unknown>)[last] = typed.ok ? typed.value : text;
  }
  return values;
}

/** Validates a typed value against the option's schema and check; returns problem texts. */
function checkValue(option: OptionSpec, value: OptionValue, source: string): string[] {
  const validate = optionValidators.get(option.name);
  if (validate && !validate(value)) {
    return formatAjvErrors(validate.errors ?? [], { source, showValue: () => !option.secret });
  }
  const problem = option.check?.(value);
  if (problem === undefined) return [];
  return [`${source}: ${problem}${option.secret ? '' : ` (got ${JSON.stringify(value)})`}`];
}

function fromText(
  option: OptionSpec,
  text: string,
  source: string,
  problems: string[],
): OptionValue | undefined {
  const typed = valueFromText(option, text);
  if (!typed.ok) {
    problems.push(`${source}: ${typed.problem}${option.secret ? '' : ` (got ${JSON.stringify(text)})`}`);
    return undefined;
  }
  if (typed.value === undefined) return undefined;
  const found = checkValue(option, typed.value, source);
  problems.push(...found);
  return found.length === 0 ? typed.value : undefined;
}

interface SettingsFile {
  readonly values: Settings;
  /** Paths (as formatted in problems) that failed validation: their values are not used. */
  readonly invalid: ReadonlySet<string>;
}

function readSettings(path: string, problems: string[]): SettingsFile | undefined {
  const what = 'settings file';
  const file = readStructuredFile(path, what);
  if (!file.ok) {
    problems.push(...file.problems);
    return undefined;
  }
  const values = listsFromText(file.value ?? {});
  if (validateSettings(values)) return { values: values as Settings, invalid: new Set() };
  const errors = validateSettings.errors ?? [];
  const secretKeys = OPTIONS.filter((o) => o.secret).map((o) => o.settingsKey ?? o.name);
  problems.push(
    ...formatAjvErrors(errors, {
      source: `${what} ${path}`,
      showValue: (errorPath) =>
        !errorPath.startsWith('gitCredentials') &&
        !errorPath.startsWith('buildSecrets') &&
        !errorPath.startsWith('events.subscriptions') &&
        !secretKeys.some((key) => errorPath.startsWith(key)),
    }),
  );
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return undefined;
  return { values: values as Settings, invalid: new Set(errors.map((e) => pointerToPath(e.instancePath))) };
}

/** Whether the settings value at `key` (or anything below it) failed validation. */
function isInvalid(settings: SettingsFile, key: string): boolean {
  for (const path of settings.invalid) {
    if (path === key || path.startsWith(`${key}[`) || path.startsWith(`${key}.`)) return true;
  }
  return false;
}

function readEntriesFile<T>(
  path: string,
  what: string,
  validate: typeof validateGitCredentialsFile,
  showValues: boolean,
  problems: string[],
): T[] | undefined {
  const file = readStructuredFile(path, what);
  if (!file.ok) {
    problems.push(...file.problems);
    return undefined;
  }
  const value = file.value ?? [];
  if (validate(value)) return value as T[];
  problems.push(
    ...formatAjvErrors(validate.errors ?? [], { source: `${what} ${path}`, showValue: () => showValues }),
  );
  return undefined;
}

/**
 * Credential entries or mapping rules: the file named by its path option (a bare array, which
 * replaces the settings file's section), else the settings file's list, else none.
 */
function entriesFromFileOrSettings<T>(source: {
  path: string | undefined;
  what: string;
  validate: typeof validateGitCredentialsFile;
  showValues: boolean;
  settings: SettingsFile | undefined;
  section: string;
  key: string;
  problems: string[];
}): T[] {
  if (source.path !== undefined) {
    return (
      readEntriesFile<T>(source.path, source.what, source.validate, source.showValues, source.problems) ?? []
    );
  }
  if (source.settings === undefined || isInvalid(source.settings, source.section)) return [];
  return (settingsValue(source.settings.values, source.key) as T[] | undefined) ?? [];
}

/** The build secrets file (flag > env), which replaces the settings file's `buildSecrets.entries`. */
function serverBuildSecrets(
  path: string | undefined,
  settings: SettingsFile | undefined,
  settingsPath: string | undefined,
  problems: string[],
): ServerBuildSecret[] {
  if (path !== undefined) {
    const what = 'build secrets file';
    const file = readStructuredFile(path, what);
    if (file.ok) return buildSecretEntries(file.value ?? [], `${what} ${path}`, problems);
    problems.push(...file.problems);
    return [];
  }
  if (settings === undefined || isInvalid(settings, 'buildSecrets')) return [];
  const raw = settingsValue(settings.values, 'buildSecrets.entries');
  return buildSecretEntries(raw, `settings file ${settingsPath}: buildSecrets.entries`, problems);
}

/** The prebuild settings: the configurations file (flag > env) replaces `prebuilds.configurations`. */
function prebuildSettings(options: OptionValues, inputs: Inputs): PrebuildSettings {
  const { settings, settingsPath, problems } = inputs;
  const path = options.prebuildConfigurationsPath;
  let configurations: PrebuildSettings['configurations'] = [];
  if (path !== undefined) {
    const what = 'prebuild configurations file';
    const file = readStructuredFile(path, what);
    if (file.ok) configurations = prebuildConfigurations(file.value, `${what} ${path}`, problems);
    else problems.push(...file.problems);
  } else if (settings !== undefined && !isInvalid(settings, 'prebuilds.configurations')) {
    const raw = settingsValue(settings.values, 'prebuilds.configurations');
    configurations = prebuildConfigurations(
      raw,
      `settings file ${settingsPath}: prebuilds.configurations`,
      problems,
    );
  }
  const secretPaths = {
    github: options.githubHookSecretFile,
    gitlab: options.gitlabHookTokenFile,
    gitea: options.giteaHookSecretFile,
  };
  return {
    configurations,
    reconcileIntervalSeconds: options.prebuildReconcileIntervalSeconds,
    refreshIntervalSeconds: options.prebuildRefreshIntervalSeconds,
    hookSecrets: hookSecrets(dropUndefined(secretPaths), problems),
  };
}

/** The event subscriptions file (flag > env), which replaces the settings file's `events.subscriptions`. */
function eventsOf(options: OptionValues, inputs: Inputs): EventsConfig {
  const { settings, problems } = inputs;
  const path = options.eventSubscriptionsConfigPath;
  const retrySeconds = options.eventRetrySeconds.map(Number);
  if (path !== undefined) {
    const what = 'event subscriptions file';
    const file = readStructuredFile(path, what);
    if (!file.ok) problems.push(...file.problems);
    const subscriptions = file.ok ? eventSubscriptions(file.value ?? [], `${what} ${path}`, problems) : [];
    return { subscriptions, retrySeconds };
  }
  if (settings === undefined || isInvalid(settings, 'events.subscriptions'))
    return { subscriptions: [], retrySeconds };
  const raw = settingsValue(settings.values, 'events.subscriptions');
  const source = `settings file ${inputs.settingsPath}: events.subscriptions`;
  return { subscriptions: eventSubscriptions(raw, source, problems), retrySeconds };
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** What the options resolve from (besides their defaults), and where their problems go. */
interface Inputs {
  readonly argv: ParsedArgv;
  readonly env: Environment;
  readonly settings: SettingsFile | undefined;
  readonly settingsPath: string | undefined;
  readonly problems: string[];
}

/** An option's environment variable; an empty value means unset. */
function envText(env: Environment, option: OptionSpec): string | undefined {
  const text = env[option.env];
  // An empty environment value means unset.
  return text === undefined || text === '' ? undefined : text;
}

/** The settings file path itself: flag > env. */
function settingsPathOf(argv: ParsedArgv, env: Environment): string | undefined {
  const settingsOption = OPTIONS.find((o) => o.name === 'settingsPath') as OptionSpec;
  const text = argv.values.get('settingsPath') ?? envText(env, settingsOption);
  return text === undefined || text === '' ? undefined : text;
}

/**
 * Further checks of every valid settings value, used or overridden (the file is checked whole):
 * the options whose value failed them.
 */
function failedSettingsChecks(inputs: Inputs): Set<OptionName> {
  const { settings } = inputs;
  const failed = new Set<OptionName>();
  for (const option of OPTIONS) {
    if (settings === undefined || option.settingsKey === undefined || option.check === undefined) continue;
    const raw = settingsValue(settings.values, option.settingsKey);
    if (raw === undefined || isInvalid(settings, option.settingsKey)) continue;
    const problem = option.check(raw as OptionValue);
    if (problem === undefined) continue;
    failed.add(option.name);
    const got = option.secret ? '' : ` (got ${JSON.stringify(raw)})`;
    inputs.problems.push(`settings file ${inputs.settingsPath}: ${option.settingsKey}: ${problem}${got}`);
  }
  return failed;
}

interface Resolved {
  readonly value: OptionValue | undefined;
  readonly source: ValueSource;
}

/** One option: flag > environment variable > settings file > default. */
function resolveOption(option: OptionSpec, inputs: Inputs, failedChecks: ReadonlySet<OptionName>): Resolved {
  const { settings, problems } = inputs;
  const flagText = inputs.argv.values.get(option.name);
  if (flagText !== undefined)
    return { value: fromText(option, flagText, option.flag, problems), source: 'flag' };
  const fromEnv = envText(inputs.env, option);
  if (fromEnv !== undefined) return { value: fromText(option, fromEnv, option.env, problems), source: 'env' };
  if (
    settings !== undefined &&
    option.settingsKey !== undefined &&
    settingsValue(settings.values, option.settingsKey) !== undefined
  ) {
    const usable = !isInvalid(settings, option.settingsKey) && !failedChecks.has(option.name);
    const value = usable ? (settingsValue(settings.values, option.settingsKey) as OptionValue) : undefined;
    return { value, source: 'settings' };
  }
  return { value: option.default, source: option.default === undefined ? 'unset' : 'default' };
}

/** Every option of the table, and where each came from. */
function resolveOptions(inputs: Inputs): { options: OptionValues; sources: Record<OptionName, ValueSource> } {
  const failedChecks = failedSettingsChecks(inputs);
  const values: Partial<Record<OptionName, OptionValue>> = {};
  const sources = {} as Record<OptionName, ValueSource>;
  for (const option of OPTIONS) {
    const { value, source } = resolveOption(option, inputs, failedChecks);
    if (value !== undefined) values[option.name] = value;
    sources[option.name] = source;
  }
  return { options: values as OptionValues, sources };
}

/** Git credentials: the file (flag > env) replaces the settings file's entries; duplicates are problems. */
function gitCredentialsOf(options: OptionValues, inputs: Inputs): GitCredential[] {
  const { problems } = inputs;
  const gitCredentials = entriesFromFileOrSettings<GitCredential>({
    path: options.gitCredentialsConfigPath,
    what: 'git credentials file',
    validate: validateGitCredentialsFile,
    showValues: false,
    settings: inputs.settings,
    section: 'gitCredentials',
    key: 'gitCredentials.entries',
    problems,
  });
  const credentialsSource =
    options.gitCredentialsConfigPath !== undefined
      ? `git credentials file ${options.gitCredentialsConfigPath}: `
      : `settings file ${inputs.settingsPath}: gitCredentials.entries`;
  for (const problem of duplicateCredentialProblems(gitCredentials))
    problems.push(`${credentialsSource}${problem}`);
  return gitCredentials;
}

/** Registry mapping rules: the file (flag > env) replaces the settings file's rules. */
function registryMappingOf(options: OptionValues, inputs: Inputs): RegistryMappingRule[] {
  return entriesFromFileOrSettings<RegistryMappingRule>({
    path: options.registryMappingConfigPath,
    what: 'registry mapping file',
    validate: validateRegistryMappingFile,
    showValues: true,
    settings: inputs.settings,
    section: 'registryMapping',
    key: 'registryMapping.rules',
    problems: inputs.problems,
  });
}

/** The ambient registry auth: the docker config in DOCKER_CONFIG, else in ~/.docker. */
function ambientDockerConfig(
  env: Environment,
  problems: string[],
): { dockerConfigDir: string; registryAuth: DockerConfigDocument } {
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  const dockerConfigDir =
    env.DOCKER_CONFIG !== undefined && env.DOCKER_CONFIG !== '' ? env.DOCKER_CONFIG : join(home, '.docker');
  let registryAuth: DockerConfigDocument = { auths: {} };
  const dockerConfig = readDockerConfig(dockerConfigDir);
  if (dockerConfig.ok) registryAuth = dockerConfig.value;
  else problems.push(...dockerConfig.problems);
  return { dockerConfigDir, registryAuth };
}

/** What the files (and the environment) gave, beside the options. */
interface FromFiles {
  readonly gitCredentials: readonly GitCredential[];
  readonly registryMappingRules: readonly RegistryMappingRule[];
  readonly buildSecrets: ServerBuildSecret[];
  readonly events: EventsConfig;
  readonly signing: SigningKey | undefined;
  readonly settingsPath: string | undefined;
  readonly prebuilds: PrebuildSettings;
  readonly dockerConfigDir: string;
  readonly registryAuth: DockerConfigDocument;
}

/** The build defaults of the options. */
function buildDefaults(options: OptionValues): BuildDefaults {
  return {
    platforms: [...options.buildPlatforms],
    noCache: options.buildNoCache,
    cacheFrom: options.buildCacheFrom,
    cacheTo: options.buildCacheTo,
    mode: options.builderMode,
    cloneTimeoutSeconds: options.cloneTimeoutSeconds,
    timeoutSeconds: options.buildTimeoutSeconds,
    maxConcurrent: options.maxConcurrentBuilds,
    maxPerBuilder: options.maxBuildsPerBuilder,
    nativePlatformsOnly: options.nativePlatformsOnly,
    reuse: options.buildReuse,
    fallbackImage: options.fallbackImage,
    provenance: options.buildProvenance,
    sbom: options.buildSbom,
    sbomGenerator: options.buildSbomGenerator,
  };
}

/** The configuration of the resolved options and files (before dropUndefined). */
function assembleConfig(options: OptionValues, files: FromFiles, env: Environment): Config {
  const tmp = env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : tmpdir();
  return {
    builderEndpoints: builderDeclarations(options.builderEndpoint).map((builder) => builder.endpoint),
    builders: builderDeclarations(options.builderEndpoint),
    builderTls: builderTls(options),
    port: options.port,
    host: options.host,
    builderName: options.builderName,
    sshHostKeyPolicy: options.sshHostKeyPolicy,
    insecureRegistries: [...options.insecureRegistries],
    allowInsecureGitProtocols: options.allowInsecureGitProtocols,
    gitCredentials: files.gitCredentials.map((entry) => ({ ...entry })),
    registryMappingRules: files.registryMappingRules.map((rule) => ({ ...rule })),
    ...(files.buildSecrets.length > 0 ? { buildSecrets: files.buildSecrets } : {}),
    build: buildDefaults(options),
    events: files.events,
    provenanceBuilderId: options.provenanceBuilderId,
    signing: files.signing,
    errorTrackingDsn: options.errorTrackingDsn,
    serviceName: options.serviceName,
    environment: options.environment,
    commandLogRetention: options.commandLogRetention,
    buildHistory: options.buildHistory,
    retention: {
      mode: options.retentionMode,
      keepPerBranch: options.retentionKeepPerBranch,
      keepServedDays: options.retentionKeepServedDays,
      keepTags: [...options.retentionKeepTags],
      intervalMinutes: options.retentionIntervalMinutes,
      repositories: [...options.retentionRepositories],
    },
    redisUrl: options.redisUrl,
    shutdownGraceSeconds: options.shutdownGraceSeconds,
    settingsPath: files.settingsPath,
    prebuilds: files.prebuilds,
    scratchDir: join(tmp, 'image-build-service'),
    dockerConfigDir: files.dockerConfigDir,
    registryAuth: { auths: { ...files.registryAuth.auths } },
    childEnv: childEnvironment(env),
    version: packageVersion(),
  };
}

/** Resolves everything; throws ConfigError listing every problem. */
export function loadConfigWithSources(input: LoadInput): LoadedConfig {
  const { env } = input;
  const problems: string[] = [];
  const argv = parseArgv(input.argv);
  problems.push(...argv.problems);
  const settingsPath = settingsPathOf(argv, env);
  const settings = settingsPath === undefined ? undefined : readSettings(settingsPath, problems);
  const inputs: Inputs = { argv, env, settings, settingsPath, problems };
  const { options, sources } = resolveOptions(inputs);
  // The problems are listed in this order: the files', the docker config's, the signing key's, TLS.
  const gitCredentials = gitCredentialsOf(options, inputs);
  const registryMappingRules = registryMappingOf(options, inputs);
  const buildSecrets = serverBuildSecrets(options.buildSecretsConfigPath, settings, settingsPath, problems);
  const prebuilds = prebuildSettings(options, inputs);
  const events = eventsOf(options, inputs);
  const docker = ambientDockerConfig(env, problems);
  const signing = signingKeyOf(options.signingKeyPath, sources.signingKeyPath, env, problems);
  problems.push(...builderTlsProblems(options));
  if (problems.length > 0) throw new ConfigError(problems);
  const files = {
    gitCredentials,
    registryMappingRules,
    buildSecrets,
    signing,
    settingsPath,
    prebuilds,
    events,
    ...docker,
  };
  return deepFreeze({ config: dropUndefined(assembleConfig(options, files, env)), sources });
}

/** The signing key of `path` (problems name the option that gave it), or undefined. */
function signingKeyOf(
  path: string | undefined,
  source: ValueSource,
  env: Environment,
  problems: string[],
): SigningKey | undefined {
  if (path === undefined) return undefined;
  const option = optionByName('signingKeyPath');
  const name = source === 'flag' ? option.flag : source === 'env' ? option.env : option.settingsKey;
  const password = env.SIGNING_KEY_PASSWORD === '' ? undefined : env.SIGNING_KEY_PASSWORD;
  const key = loadSigningKey(path, password);
  if (typeof key !== 'string') return key;
  problems.push(`${name ?? option.flag}: ${key}`);
  return undefined;
}

/** Optional fields that resolved to nothing are absent, not `undefined`. */
function dropUndefined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue;
    out[key] =
      typeof child === 'object' && child !== null && !Array.isArray(child) && key === 'build'
        ? dropUndefined(child as object)
        : child;
  }
  return out as T;
}

export function loadConfig(input: LoadInput): Config {
  return loadConfigWithSources(input).config;
}
