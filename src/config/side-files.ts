/**
 * The side files: lists (git credentials, registry mapping rules, build secrets, prebuild
 * configurations, event subscriptions) that a file named by an option gives, else the settings
 * file under a key. One loader reads them all (size limit, JSON or YAML, checks naming the file
 * and the entry); each file is a row of SIDE_FILES. No problem echoes a secret of them.
 */
import type { ServerBuildSecret } from '../rules/build-secret-rules.js';
import type { ValidateFunction } from 'ajv';
import { buildSecretEntries } from './build-secrets.js';
import { duplicateCredentialProblems } from './credential-entries.js';
import { eventSubscriptions } from './event-subscriptions.js';
import { readStructuredFile } from './files.js';
import type { OptionValues } from './option-values.js';
import { prebuildConfigurations } from './prebuilds.js';
import { formatAjvErrors, validateGitCredentialsFile, validateRegistryMappingFile } from './schema.js';
import { isInvalid, settingsValue, type SettingsFile } from './settings-file.js';
import type {
  EventSubscription,
  GitCredential,
  PrebuildConfiguration,
  RegistryMappingRule,
} from './types.js';

/** Where a list came from, as problems name it and its items. */
export interface ListOrigin {
  /** `git credentials file /f.yaml`, or `settings file /s.yaml: gitCredentials.entries`. */
  readonly source: string;
  /** `git credentials file /f.yaml: [2]`, or `settings file /s.yaml: gitCredentials.entries[2]`. */
  readonly item: (index: number) => string;
}

/** Checks a parsed list (undefined: none) and returns its entries; every problem goes to `problems`. */
type Entries<T> = (raw: unknown, origin: ListOrigin, problems: string[]) => T[];

interface SideFile<T> {
  /** How problems name the file. */
  readonly what: string;
  /** The option naming the file; the file replaces the settings file's list. */
  readonly option: keyof OptionValues & `${string}Path`;
  /** Where the settings file holds the list. */
  readonly settingsKey: string;
  readonly entries: Entries<T>;
}

/** A list checked whole with an ajv schema; values are shown in problems only when `showValues`. */
function ajvEntries<T>(validate: ValidateFunction, showValues: boolean): Entries<T> {
  return (raw, origin, problems) => {
    const value = raw ?? [];
    if (validate(value)) return value as T[];
    const errors = validate.errors ?? [];
    problems.push(...formatAjvErrors(errors, { source: origin.source, showValue: () => showValues }));
    return [];
  };
}

/** A checker whose problems name its entries itself (by id, name or position). */
const bySource =
  <T>(check: (raw: unknown, source: string, problems: string[]) => T[]): Entries<T> =>
  (raw, origin, problems) =>
    check(raw, origin.source, problems);

const credentialEntries = ajvEntries<GitCredential>(validateGitCredentialsFile, false);

/** Git credentials: as their schema says, and no two for the same host, kind and port. */
const gitCredentialEntries: Entries<GitCredential> = (raw, origin, problems) => {
  const entries = credentialEntries(raw, origin, problems);
  problems.push(...duplicateCredentialProblems(entries, origin.item));
  return entries;
};

export const SIDE_FILES = {
  gitCredentials: {
    what: 'git credentials file',
    option: 'gitCredentialsConfigPath',
    settingsKey: 'gitCredentials.entries',
    entries: gitCredentialEntries,
  } satisfies SideFile<GitCredential>,
  registryMappingRules: {
    what: 'registry mapping file',
    option: 'registryMappingConfigPath',
    settingsKey: 'registryMapping.rules',
    entries: ajvEntries<RegistryMappingRule>(validateRegistryMappingFile, true),
  } satisfies SideFile<RegistryMappingRule>,
  buildSecrets: {
    what: 'build secrets file',
    option: 'buildSecretsConfigPath',
    settingsKey: 'buildSecrets.entries',
    entries: bySource(buildSecretEntries),
  } satisfies SideFile<ServerBuildSecret>,
  prebuildConfigurations: {
    what: 'prebuild configurations file',
    option: 'prebuildConfigurationsPath',
    settingsKey: 'prebuilds.configurations',
    entries: bySource(prebuildConfigurations),
  } satisfies SideFile<PrebuildConfiguration>,
  eventSubscriptions: {
    what: 'event subscriptions file',
    option: 'eventSubscriptionsConfigPath',
    settingsKey: 'events.subscriptions',
    entries: bySource(eventSubscriptions),
  } satisfies SideFile<EventSubscription>,
};

type Table = typeof SIDE_FILES;

/** What each side file gave. */
export type SideLists = { readonly [K in keyof Table]: ReturnType<Table[K]['entries']> };

/** One list: from its file when its option names one, else from the settings file, else none. */
function loadList<T>(
  file: SideFile<T>,
  options: OptionValues,
  settings: SettingsFile | undefined,
  problems: string[],
): T[] {
  const path = options[file.option];
  if (path !== undefined) {
    const read = readStructuredFile(path, file.what);
    if (!read.ok) {
      problems.push(...read.problems);
      return [];
    }
    const source = `${file.what} ${path}`;
    return file.entries(read.value, { source, item: (index) => `${source}: [${index}]` }, problems);
  }
  if (settings === undefined || isInvalid(settings, file.settingsKey)) return [];
  const source = `settings file ${settings.path}: ${file.settingsKey}`;
  const raw = settingsValue(settings.values, file.settingsKey);
  return file.entries(raw, { source, item: (index) => `${source}[${index}]` }, problems);
}

/** Every side file's list, in the order of SIDE_FILES (their problems too). */
export function loadSideFiles(
  options: OptionValues,
  settings: SettingsFile | undefined,
  problems: string[],
): SideLists {
  const lists: Record<string, unknown[]> = {};
  for (const [name, file] of Object.entries(SIDE_FILES) as [string, SideFile<unknown>][]) {
    lists[name] = loadList(file, options, settings, problems);
  }
  return lists as unknown as SideLists;
}
