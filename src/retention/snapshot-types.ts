/**
 * What retention knows of a registry repository, read from the registry alone (snapshot.ts):
 * the service's images by tag with their labels, the other tags, build-key tags and cosign
 * signature tags. The planner (policy.ts) works on this and nothing else.
 */

/** An image the service built or reused: a tag whose config carries the retention labels. */
export interface ServiceImage {
  readonly tag: string;
  /** The digest the tag names (index or manifest). */
  readonly digest: string;
  /** Platform and attestation manifests under an index (none for a single manifest). */
  readonly children: readonly string[];
  /** The git repository (its OCI source label, `IMAGE_LABELS.source`). */
  readonly source: string;
  readonly branch: string;
  /** Build time, ms since the epoch. */
  readonly builtMs: number;
  /** The tag the request named, empty when the service chose it. */
  readonly namedTag: string;
  /** The build key, empty when none. */
  readonly key: string;
}

/** A tag that is not the service's (no labels, or not an image): its digests are never deleted. */
export interface OtherTag {
  readonly tag: string;
  readonly digest: string;
  readonly children: readonly string[];
}

/** A tag pointing at another manifest's digest: `build-key-<key>`, or cosign's `sha256-<hex>.sig|.att`. */
export interface AttachedTag {
  readonly tag: string;
  /** The digest the tag itself names. */
  readonly digest: string;
  /** build-key tags: the key; signature tags: the digest they sign (`sha256:<hex>`). */
  readonly of: string;
}

export interface RepositorySnapshot {
  /** `<registry>/<name>`. */
  readonly repository: string;
  readonly images: readonly ServiceImage[];
  readonly others: readonly OtherTag[];
  readonly keyTags: readonly AttachedTag[];
  readonly signatureTags: readonly AttachedTag[];
}

/** The reference a served tag is recorded under (a digest is recorded as itself). */
export const servedTag = (tag: string): string => `tag:${tag}`;

/** When each image was last served: by digest (`sha256:...`) or by tag (`servedTag`), ms. */
export type ServedTimes = ReadonlyMap<string, number>;
