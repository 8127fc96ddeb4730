/**
 * The image a build targets, written once: `registry/name[:tag]`, the `sha-<7 hex>` tag the service
 * chooses when the request named none, and the ids that name a target in the in-flight map, the
 * leases and the recent key inputs. Pure, no imports.
 */

/** How many hex digits of the commit the default tag keeps. */
const SHORT_COMMIT = 7;

/** The tag the service chooses when the request named none: `sha-<7 hex of the commit>`. */
export const defaultTag = (commit: string): string => `sha-${commit.slice(0, SHORT_COMMIT)}`;

export class ImageTarget {
  constructor(
    readonly registry: string,
    readonly name: string,
    /** undefined: not known before the commit (the service chooses `defaultTag`). */
    readonly tag?: string,
  ) {}

  /** The target of a planned or parsed image (`{ registry, name, tag? }`). */
  static of(image: { readonly registry: string; readonly name: string; readonly tag?: string }): ImageTarget {
    return new ImageTarget(image.registry, image.name, image.tag);
  }

  /** `registry/name`: the repository in the registry. */
  get repository(): string {
    return `${this.registry}/${this.name}`;
  }

  /** `registry/name:tag`, or `registry/name` while the tag waits for the commit. */
  get image(): string {
    return this.tag === undefined ? this.repository : `${this.repository}:${this.tag}`;
  }

  /** `registry/name@digest`: one image of the repository. */
  atDigest(digest: string): string {
    return `${this.repository}@${digest}`;
  }

  /** The target once the commit is known: the tag the request named, else `defaultTag`. */
  atCommit(commit: string): TaggedImageTarget {
    return new TaggedImageTarget(this.registry, this.name, this.tag ?? defaultTag(commit));
  }

  /** The same repository under another tag (a build key's, a signature's). */
  withTag(tag: string): TaggedImageTarget {
    return new TaggedImageTarget(this.registry, this.name, tag);
  }

  /** The in-flight (and lease) id of a build key in this repository. */
  keyInFlightId(key: string): string {
    return `key:${this.repository}:${key}`;
  }

  /** The id of the recent key inputs of a git repository and branch built into this repository. */
  recentId(gitRepository: string, branch: string): string {
    return JSON.stringify([gitRepository, branch, this.repository]);
  }
}

/** A target whose tag is known. */
export class TaggedImageTarget extends ImageTarget {
  declare readonly tag: string;

  constructor(registry: string, name: string, tag: string) {
    super(registry, name, tag);
  }
}
