/**
 * The loaded configuration: one frozen object built at startup by src/config/load.ts; nothing else
 * reads the environment or argv. Its option fields are derived from the option table (place and
 * value type from each row); the fields named steps fill (side files, keys, the environment) are
 * written here, as no row states their shape, such as a credential entry's or an access rule's.
 */
import type { KeyObject } from 'node:crypto';

import type { BuildSecretScope, ServerBuildSecret } from '../rules/build-secret-rules.js';
import type { EventStatus } from '../rules/event-types.js';
import type { Forge } from '../rules/forges.js';

import type { BuilderMode } from '../rules/limits.js';
import type { BuilderDeclaration } from './builder-endpoints.js';
export { AUTH_ACTIONS, type AuthAction, type ProvenanceMode, type SshHostKeyPolicy } from './modes.js';
import type { AuthAction } from './modes.js';
import type { OptionFields } from './option-values.js';

/** An OIDC issuer whose ID tokens are accepted. */
export interface AuthIssuer {
  readonly name: string;
  /** `https://...`, compared exactly with a token's `iss`; discovery and keys are fetched from it. */
  readonly issuer: string;
  /** A token's `aud` must contain it. */
  readonly audience: string;
}

/** A static bearer token, kept only as the sha256 (hex) of the token. */
export interface AuthToken {
  readonly name: string;
  readonly sha256: string;
}

/** Repositories a rule covers: the host (`*`: any) and a glob of the path (`{claim}` placeholders). */
export interface AuthRepositoryPattern {
  readonly host: string;
  readonly path: string;
}

/** Images a rule covers: the registry exactly (`*`: any) and a glob of the name (`{claim}` placeholders). */
export interface AuthImagePattern {
  readonly registry: string;
  readonly name: string;
}

/** One access rule: whose tokens it applies to, and the actions it grants on which resources. */
export interface AuthRule {
  readonly name: string;
  /** The issuer (by name) whose ID tokens the rule applies to; or `token`. */
  readonly issuer?: string;
  /** The static token (by name) the rule applies to. */
  readonly token?: string;
  /** The tenant of the builds it admits (docs/queue.md), `{claim}` placeholders allowed. */
  readonly tenant?: string;
  /** Each named claim of the token must equal its value. */
  readonly claims?: Readonly<Record<string, string>>;
  readonly actions: readonly AuthAction[];
  readonly repositories: readonly AuthRepositoryPattern[];
  readonly images: readonly AuthImagePattern[];
}

/** Caller identity and access rules (docs/auth.md): the mode from its option, the rest from side files. */
export type AuthSettings = Config['auth'];

interface GitCredentialHttps {
  readonly host: string;
  /** Narrows the entry to one port when set. */
  readonly port?: number;
  readonly kind: 'https';
  readonly username: string;
  readonly token: string;
}

interface GitCredentialSsh {
  readonly host: string;
  readonly port?: number;
  readonly kind: 'ssh';
  readonly privateKey: string;
  /** known_hosts-style key (`ssh-ed25519 AAAA...`, optionally prefixed by the host), required under `pinned`. */
  readonly pinnedHostKey?: string;
}

export type GitCredential = GitCredentialHttps | GitCredentialSsh;

export interface RegistryMappingRule {
  readonly registry: string;
  /** Exact, case-insensitive repository host. */
  readonly hostMatch?: string;
  /** Prefix of the repository path without its leading `/`. */
  readonly pathPrefix?: string;
}

/** One entry of the ambient docker-config document (`auths.<key>`). */
export interface DockerAuthEntry {
  readonly auth?: string;
  readonly username?: string;
  readonly password?: string;
  readonly identitytoken?: string;
}

export interface DockerConfigDocument {
  readonly auths: Readonly<Record<string, DockerAuthEntry>>;
}

/** Mutual TLS to every builder: file paths only (the key's text is never loaded into the config). */
export interface BuilderTls {
  readonly caPath?: string;
  readonly certPath?: string;
  readonly keyPath?: string;
  readonly serverName?: string;
}

/** The image retention policy and its schedule (docs/retention.md), all from the retention options. */
export type RetentionSettings = Config['retention'];

/** A cap on the builds of the tenants its glob matches (docs/queue.md). */
export interface TenantQuota {
  readonly tenant: string;
  readonly maxRunning?: number;
  readonly maxQueued?: number;
  /** Build minutes (run time) a month, UTC, before its new builds answer 429 (docs/usage.md). */
  readonly monthlyBuildMinutes?: number;
  /** The share of monthlyBuildMinutes that sends the budget warning event (default 80). */
  readonly warnAtPercent?: number;
}

/** A build's defaults and limits: the build options, and the tenant quotas of their side file. */
export type BuildDefaults = Config['build'];

/** One prebuild configuration (docs/prebuilds.md): what a push, a reconcile or a refresh may build. */
export interface PrebuildConfiguration {
  readonly repository: string;
  /** Branch name globs. */
  readonly branches: readonly string[];
  /** Path globs: a push changing none of them does not build; absent: every path. */
  readonly paths?: readonly string[];
  readonly image: { readonly registry: string; readonly name: string };
  readonly platforms?: readonly string[];
  readonly buildOptions?: {
    readonly noCache?: boolean;
    readonly cacheFrom?: string;
    readonly cacheTo?: string;
    readonly mode?: BuilderMode;
  };
  readonly refreshOnBaseChange: boolean;
}

/** The webhook secrets by forge, read from their files at startup (secrets: never shown or logged). */
export type HookSecrets = { readonly [F in Forge]?: string };

/** The loaded signing key (src/config/signing-key.ts): the private key never leaves its KeyObject. */
export interface SigningKey {
  readonly path: string;
  readonly privateKey: KeyObject;
  /** SPKI PEM of the public key (what `cosign verify --key` takes). */
  readonly publicKeyPem: string;
  /** `sha256:<hex>` of the public key's DER (shown by /config). */
  readonly fingerprint: string;
}

/** One event subscription (docs/events.md); its secrets are never shown. */
export interface EventSubscription {
  readonly name: string;
  readonly url: string;
  /** `whsec_...`: every one signs each request (rotation). */
  readonly secrets: readonly string[];
  /** Event types, with or without version; absent: every type. */
  readonly types?: readonly string[];
  readonly repositories?: readonly BuildSecretScope[];
  readonly statuses?: readonly EventStatus[];
}

export interface EventsConfig {
  readonly subscriptions: readonly EventSubscription[];
  /** Delays between attempts, seconds (each with up to 10 % jitter); the last one repeats no more. */
  readonly retrySeconds: readonly number[];
}

/**
 * The fields of Config the named steps of config-fields.ts fill: what side files, keys, several
 * options together or the environment give, which no single row of the option table says.
 */
export interface StepFields {
  /**
   * The BuildKit endpoints, in the order given, each with the platforms it declares ([] = any,
   * emulated where needed); its endpoints alone: builderEndpoints (builder-endpoints.ts).
   */
  readonly builders: readonly BuilderDeclaration[];
  readonly builderTls?: BuilderTls;
  readonly gitCredentials: readonly GitCredential[];
  readonly registryMappingRules: readonly RegistryMappingRule[];
  /** The server's build secrets (docs/secrets.md), values read at startup; absent: none. */
  readonly buildSecrets?: readonly ServerBuildSecret[];
  readonly build: {
    /** Per-tenant caps, the first whose glob matches a tenant applies (docs/queue.md). */
    readonly quotas: readonly TenantQuota[];
  };
  /** Event subscriptions and their retry schedule (docs/events.md). */
  readonly events: EventsConfig;
  /** Every image answered is signed with it when set. */
  readonly signing?: SigningKey;
  readonly redis: {
    /** The Redis Cluster's password (a secret: never shown, logged or stored); absent: none. */
    readonly password?: string;
  };
  /** Prebuild configurations and webhook secrets; no configuration: no prebuild. */
  readonly prebuilds: {
    readonly configurations: readonly PrebuildConfiguration[];
    readonly hookSecrets: HookSecrets;
  };
  readonly auth: {
    readonly issuers: readonly AuthIssuer[];
    readonly tokens: readonly AuthToken[];
    readonly rules: readonly AuthRule[];
    /** People's sign-in client secret (`AUTH_BROWSER_CLIENT_SECRET` or its file); absent: a public client. */
    readonly browserClientSecret?: string;
  };
  /** Scratch space: per-request dirs, captured logs, tool caches. `<os tmpdir>/image-build-service`. */
  readonly scratchDir: string;
  /** Builder state directory: `$DOCKER_CONFIG` (default `~/.docker`): buildx state and the ambient `config.json`. */
  readonly dockerConfigDir: string;
  /** Ambient registry auth read from `<dockerConfigDir>/config.json` (`{auths: {}}` when missing). */
  readonly registryAuth: DockerConfigDocument;
  /**
   * Environment variables passed through to child processes (an allowlist taken from
   * the service's own environment at startup: PATH, proxy and CA variables, ...).
   */
  readonly childEnv: Readonly<Record<string, string>>;
  /** The service's package version. */
  readonly version: string;
}

/** Two field sets as one: the fields of either, a section both have holding the fields of both. */
type Merged<A, B> = Omit<A, keyof B> &
  Omit<B, keyof A> & { readonly [K in keyof A & keyof B]: Merged<A[K], B[K]> };

/**
 * The configuration: each option's field where its row of the option table lands it (its settings
 * key: `config.service.port` is `service.port` of the settings file), typed by its row (its
 * description tells what it means), and the fields of the named steps.
 */
export type Config = Merged<OptionFields, StepFields>;

/** The process environment configuration is loaded from (handed in by the composition root). */
export type Environment = Readonly<Record<string, string | undefined>>;
