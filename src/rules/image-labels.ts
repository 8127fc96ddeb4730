/**
 * The labels the service writes into the config of every image it builds or reuses: the OCI
 * `source` and `revision`, and what image retention reads back from the registry alone
 * (docs/retention.md), so an instance with an empty store still knows each image's branch.
 */

/** The OCI labels: every image has them. */
export const OCI_LABELS = {
  /** The git repository the image was built from (OCI). */
  source: 'org.opencontainers.image.source',
  /** The git commit the image was built from (OCI). */
  revision: 'org.opencontainers.image.revision',
} as const;

/** The labels retention reads: an image has them when its build knows its branch. */
export const RETENTION_LABELS = {
  /** The git branch the image was built from. */
  branch: 'image-build-service.branch',
  /** When the service wrote the image (ISO 8601): its build time for retention. */
  built: 'image-build-service.built',
  /** The tag the request named (`image.tag`), empty when the service chose `sha-<commit>`. */
  namedTag: 'image-build-service.tag',
  /** The build key of the image (64 hex), empty when the build had none. */
  buildKey: 'image-build-service.build-key',
} as const;

/** Each label's name, by what it holds: the one list of the labels the service writes. */
export const IMAGE_LABELS = { ...OCI_LABELS, ...RETENTION_LABELS } as const;

/** A label, by what it holds. */
export type ImageLabel = keyof typeof IMAGE_LABELS;

/** What the clone of a build knows of where its image comes from. */
export interface ImageSource {
  readonly repository: string;
  readonly commit: string;
  readonly branch: string;
  /** The tag the request named, empty when the service chose it. */
  readonly namedTag: string;
}

/** Where an image comes from, as its labels tell it. */
export interface ImageOrigin extends ImageSource {
  /** When the service wrote the image (ISO 8601). */
  readonly built: string;
  /** The build key, empty when the build had none. */
  readonly key: string;
}

/** Each label's value for an image of `origin`, by what it holds. */
export function imageLabelValues(origin: ImageOrigin): Record<ImageLabel, string> {
  return {
    source: origin.repository,
    revision: origin.commit,
    branch: origin.branch,
    built: origin.built,
    namedTag: origin.namedTag,
    buildKey: origin.key,
  };
}

/** The labels of an image of `origin`, by name: the CLI's, the docker wrapper's and a reuse's. */
export function imageLabels(origin: ImageOrigin): Record<string, string> {
  const values = imageLabelValues(origin);
  return Object.fromEntries(
    (Object.keys(IMAGE_LABELS) as ImageLabel[]).map((label) => [IMAGE_LABELS[label], values[label]]),
  );
}
