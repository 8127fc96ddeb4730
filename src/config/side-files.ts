/**
 * The side files, one row each: lists (git credentials, registry mapping rules, build secrets,
 * prebuild configurations, event subscriptions) that a file named by an option gives, else the
 * settings file under a key. side-file-loader.ts reads them; schema.ts puts each list's schema at
 * its settings key. A secret list never has a value shown in a problem.
 */
import type { ServerBuildSecret } from '../rules/build-secret-rules.js';
import { AUTH_ISSUER_SCHEMA, AUTH_RULE_SCHEMA, AUTH_TOKEN_SCHEMA, duplicateNameProblems } from './auth.js';
import { buildSecretEntries } from './build-secrets.js';
import { duplicateCredentialProblems } from './credential-entries.js';
import { GIT_CREDENTIAL_SCHEMA, REGISTRY_MAPPING_RULE_SCHEMA } from './entry-schemas.js';
import { eventSubscriptions } from './event-subscriptions.js';
import type { OptionValues } from './option-values.js';
import { optionByName, type ValueSchema } from './options.js';
import { prebuildConfigurations } from './prebuilds.js';
import type {
  AuthIssuer,
  AuthRule,
  AuthToken,
  EventSubscription,
  GitCredential,
  PrebuildConfiguration,
  RegistryMappingRule,
  TenantQuota,
} from './types.js';
import { TENANT_QUOTA_SCHEMA } from './entry-schemas.js';

/** Where a list came from, as problems name it and its items. */
export interface ListOrigin {
  /** `git credentials file /f.yaml`, or `settings file /s.yaml: gitCredentials.entries`. */
  readonly source: string;
  /** `git credentials file /f.yaml: [2]`, or `settings file /s.yaml: gitCredentials.entries[2]`. */
  readonly item: (index: number) => string;
}

export interface SideFile<T> {
  /**
   * The option naming the file, which replaces the settings file's list; its label, less " path",
   * names the file in problems.
   */
  readonly option: keyof OptionValues & `${string}Path`;
  /** Where the settings file holds the list. */
  readonly settingsKey: string;
  /** The list's schema: the settings file is checked with it, and a file too unless `entries` checks it. */
  readonly schema?: ValueSchema;
  /** Whether the list holds secrets: no value of it is shown in a problem. */
  readonly secret: boolean;
  /** A check of the whole list (undefined: none) naming entries by id, name or position. */
  readonly entries?: (raw: unknown, source: string, problems: string[]) => T[];
  /** Problems of valid entries together (a schema checks each alone). */
  readonly across?: (entries: readonly T[], origin: ListOrigin) => string[];
}

const sideFile = <T>(row: SideFile<T>): SideFile<T> => row;

/** A list whose entries its `entries` function checks: the settings file only asks for a list. */
const LIST = { type: 'array' } as const;

/** The list's schema. */
export const listSchema = (side: Pick<SideFile<unknown>, 'schema'>): ValueSchema => side.schema ?? LIST;

/** How problems name the file: `git credentials file`. */
export function fileWhat(side: Pick<SideFile<unknown>, 'option'>): string {
  const label = optionByName(side.option).label.replace(/ path$/, '');
  return `${label.charAt(0).toLowerCase()}${label.slice(1)}`;
}

export const SIDE_FILES = {
  gitCredentials: sideFile<GitCredential>({
    option: 'gitCredentialsConfigPath',
    settingsKey: 'gitCredentials.entries',
    schema: { type: 'array', items: GIT_CREDENTIAL_SCHEMA },
    secret: true,
    across: (entries, origin) => duplicateCredentialProblems(entries, origin.item),
  }),
  registryMappingRules: sideFile<RegistryMappingRule>({
    option: 'registryMappingConfigPath',
    settingsKey: 'registryMapping.rules',
    schema: { type: 'array', items: REGISTRY_MAPPING_RULE_SCHEMA },
    secret: false,
  }),
  buildSecrets: sideFile<ServerBuildSecret>({
    option: 'buildSecretsConfigPath',
    settingsKey: 'buildSecrets.entries',
    secret: true,
    entries: buildSecretEntries,
  }),
  prebuildConfigurations: sideFile<PrebuildConfiguration>({
    option: 'prebuildConfigurationsPath',
    settingsKey: 'prebuilds.configurations',
    secret: false,
    entries: prebuildConfigurations,
  }),
  eventSubscriptions: sideFile<EventSubscription>({
    option: 'eventSubscriptionsConfigPath',
    settingsKey: 'events.subscriptions',
    secret: true,
    entries: eventSubscriptions,
  }),
  buildQuotas: sideFile<TenantQuota>({
    option: 'buildQuotasPath',
    settingsKey: 'build.quotas',
    schema: { type: 'array', items: TENANT_QUOTA_SCHEMA },
    secret: false,
  }),
  authIssuers: sideFile<AuthIssuer>({
    option: 'authIssuersPath',
    settingsKey: 'auth.issuers',
    schema: { type: 'array', items: AUTH_ISSUER_SCHEMA },
    secret: false,
    across: (entries, origin) => duplicateNameProblems(entries, origin.item),
  }),
  // A token's digest is not the token, but it is never shown either (docs/auth.md).
  authTokens: sideFile<AuthToken>({
    option: 'authTokensPath',
    settingsKey: 'auth.tokens',
    schema: { type: 'array', items: AUTH_TOKEN_SCHEMA },
    secret: true,
    across: (entries, origin) => duplicateNameProblems(entries, origin.item),
  }),
  authRules: sideFile<AuthRule>({
    option: 'authRulesPath',
    settingsKey: 'auth.rules',
    schema: { type: 'array', items: AUTH_RULE_SCHEMA },
    secret: false,
    across: (entries, origin) => duplicateNameProblems(entries, origin.item),
  }),
};

type Table = typeof SIDE_FILES;

/** What each side file gave. */
export type SideLists = { readonly [K in keyof Table]: Table[K] extends SideFile<infer T> ? T[] : never };
