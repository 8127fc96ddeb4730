/**
 * The build plan: everything decided from the request and the configuration
 * before any command runs (plan.ts builds it, workers/flow/build-flow.ts executes it).
 * Types only.
 */
import type { BuildSecret } from '../../src/rules/build-secret-rules.js';
import type { BuilderMode, LayerCompression } from '../../src/rules/limits.js';

/** A POST /build body that passed the shape check (src/http/build-schema.ts). */
export interface BuildRequest {
  repository: string;
  branch?: string | null;
  image?: { registry?: string | null; name?: string | null; tag?: string | null } | null;
  gitCredentials?: { username: string; token: string } | null;
  registryCredentials?: { registry: string; username: string; password: string } | null;
  platforms?: string[] | null;
  /** Checked by request-secrets.ts (its own 400s). */
  buildSecrets?: Record<string, unknown> | null;
  buildOptions?: {
    noCache?: boolean | null;
    cacheFrom?: string | null;
    cacheTo?: string | null;
    mode?: BuilderMode | null;
    compression?: LayerCompression | null;
  } | null;
}

export type RepoScheme = 'https' | 'ssh' | 'git' | 'http';

export interface RepoUrl {
  scheme: RepoScheme;
  /** `[user@]host:path` form (scheme is then 'ssh'). */
  scpStyle: boolean;
  /** ssh user (`git` in `git@host:x`); never set for https/http/git (credentials in URL are refused). */
  user?: string;
  /** Host name or IP, lower-cased; IPv6 without brackets. */
  host: string;
  /** Explicit port of the URL, kept as given. */
  port?: number;
  /** Repository path without the leading '/'. */
  path: string;
  /** What git clones: normalised, never with credentials. */
  cloneUrl: string;
}

export type PlannedGitCredential =
  | { kind: 'https'; username: string; token: string }
  | {
      kind: 'ssh';
      privateKey: string;
      /** A full known_hosts line for host:port when pinned (`[host]:port ssh-ed25519 AAAA...` or `host ssh-...`). */
      pinnedHostKey?: string;
    };

export interface BuildPlan {
  /** As the request gave it. */
  repository: string;
  url: RepoUrl;
  /** undefined: the repository's default branch. */
  branch?: string;
  image: {
    registry: string;
    name: string;
    /** undefined: `sha-<7 hex of the commit>`. */
    tag?: string;
  };
  gitCredential?: PlannedGitCredential;
  registryCredentials?: { registry: string; username: string; password: string };
  /** [] = pass no platform option. */
  platforms: string[];
  noCache: boolean;
  /** Normalised: `type=...` always present. */
  cacheFrom?: string;
  /** Normalised: `type=...` always present. */
  cacheTo?: string;
  mode: BuilderMode;
  /** Layer compression of the pushed image (a build key input when not gzip). */
  compression: LayerCompression;
  /**
   * The build secrets offered (docs/secrets.md), sorted by id: the server entries in scope, then
   * the request's. Never written anywhere but the request directory's 0600 files.
   */
  buildSecrets: readonly BuildSecret[];
  /**
   * The keyed identity of buildSecrets (builder/secret-identity.ts), set by the worker before the
   * build is admitted: the builder's cache, the build key and the request identity hold it.
   */
  secretsIdentity?: string;
  /** Every secret string of this request (tokens, passwords, keys) to mask in logs. */
  secrets: string[];
  /**
   * The request, when it carried no credential or secret of its own: another replica plans it
   * again from its own settings to run it from the shared queue (docs/queue.md).
   */
  request?: BuildRequest;
}

export interface BuildResult {
  image: string;
  registry: string;
  name: string;
  tag: string;
  branch: string;
  commit: string;
  gitCloneLogId: string;
  imageBuildLogId: string;
  /** The digest of the pushed index or manifest, as the registry serves it under `tag`. */
  digest: string;
}
