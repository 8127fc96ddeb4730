/**
 * Loads the configuration once at startup: every option of the table resolves
 * flag > environment variable > settings file > default; the side files replace the settings
 * file's lists (side-files.ts); the ambient registry auth is read from the docker config. Every
 * problem is collected and thrown at once as a ConfigError. The result is deep-frozen.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgv, type ParsedArgv } from './argv.js';
import { authProblems, browserSignInProblems } from './auth.js';
import { builderTlsProblems } from './builder-tls.js';
import { redisOptionProblems, redisPassword } from './redis-options.js';
import { configOf } from './config-fields.js';
import { ConfigError } from './config-error.js';
import { readDockerConfig } from './files.js';
import type { OptionValues } from './option-values.js';
import { OPTIONS, optionByName, type OptionName, type OptionSpec, type OptionValue } from './options.js';
import { formatAjvErrors } from './ajv-problems.js';
import { optionValidators } from './schema.js';
import { isInvalid, readSettings, settingsValue, type SettingsFile } from './settings-file.js';
import { loadSideFiles } from './side-file-loader.js';
import { valueFromText } from './text-values.js';
import { loadSigningKey } from './signing-key.js';
import { hookSecret, hookSecrets } from './prebuilds.js';
import { FORGE_NAMES, FORGES } from '../rules/forges.js';
import type { Config, DockerConfigDocument, Environment, SigningKey } from './types.js';

export interface LoadInput {
  /** Command-line arguments after the script (process.argv.slice(2)). */
  readonly argv: readonly string[];
  readonly env: Environment;
}

/** Where an option's effective value came from. */
type ValueSource = 'flag' | 'env' | 'settings' | 'default' | 'unset';

interface LoadedConfig {
  readonly config: Config;
  readonly sources: Readonly<Record<OptionName, ValueSource>>;
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

function deepFreeze<T>(value: T): T {
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
  readonly problems: string[];
}

/** An option's environment variable; an empty value means unset. */
function envText(env: Environment, option: OptionSpec): string | undefined {
  const text = env[option.env];
  return text === undefined || text === '' ? undefined : text;
}

/** The settings file path itself: flag > env. */
function settingsPathOf(argv: ParsedArgv, env: Environment): string | undefined {
  const text = argv.values.get('settingsPath') ?? envText(env, optionByName('settingsPath'));
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
    inputs.problems.push(`settings file ${settings.path}: ${option.settingsKey}: ${problem}${got}`);
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

/** Resolves everything; throws ConfigError listing every problem. */
function loadConfigWithSources(input: LoadInput): LoadedConfig {
  const { env } = input;
  const problems: string[] = [];
  const argv = parseArgv(input.argv);
  problems.push(...argv.problems);
  const settingsPath = settingsPathOf(argv, env);
  const settings = settingsPath === undefined ? undefined : readSettings(settingsPath, problems);
  const inputs: Inputs = { argv, env, settings, problems };
  const { options, sources } = resolveOptions(inputs);
  // The problems are listed in this order: the files', the docker config's, the signing key's, TLS.
  const lists = loadSideFiles(options, settings, problems);
  const hooks = hookSecrets(
    Object.fromEntries(FORGE_NAMES.map((forge) => [forge, options[FORGES[forge].secretOption]])),
    problems,
  );
  const docker = ambientDockerConfig(env, problems);
  const signing = signingKeyOf(options.signingKeyPath, sources.signingKeyPath, env, problems);
  problems.push(...builderTlsProblems(options));
  problems.push(...redisOptionProblems(options));
  const password = redisPassword(options.redisPasswordFile, problems);
  problems.push(
    ...authProblems({
      mode: options.authMode,
      issuers: lists.authIssuers,
      tokens: lists.authTokens,
      rules: lists.authRules,
    }),
  );
  const browserClientSecret = browserClientSecretOf(options.authBrowserClientSecretFile, env, problems);
  problems.push(
    ...browserSignInProblems(
      {
        issuer: options.authBrowserIssuer,
        clientId: options.authBrowserClientId,
        redirectUrl: options.authBrowserRedirectUrl,
        scopes: options.authBrowserScopes,
        secretGiven: browserClientSecret !== undefined,
      },
      lists.authIssuers,
      options.authMode,
    ),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  const config = configOf({
    options,
    lists,
    hookSecrets: hooks,
    signing,
    redisPassword: password,
    ...docker,
    env,
    browserClientSecret,
  });
  return deepFreeze({ config, sources });
}

/** People's sign-in client secret: env AUTH_BROWSER_CLIENT_SECRET, else its file; never shown. */
function browserClientSecretOf(
  path: string | undefined,
  env: Environment,
  problems: string[],
): string | undefined {
  const fromEnv = env.AUTH_BROWSER_CLIENT_SECRET;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return hookSecret(path, optionByName('authBrowserClientSecretFile').label, problems);
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

export function loadConfig(input: LoadInput): Config {
  return loadConfigWithSources(input).config;
}
