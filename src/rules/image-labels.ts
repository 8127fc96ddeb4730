/**
 * The labels the service writes into the config of every image it builds or reuses: the OCI
 * `source` and `revision`, and what image retention reads back from the registry alone
 * (docs/retention.md), so an instance with an empty store still knows each image's branch.
 */

/** The git repository the image was built from (OCI). */
export const LABEL_SOURCE = 'org.opencontainers.image.source';
/** The git commit the image was built from (OCI). */
export const LABEL_REVISION = 'org.opencontainers.image.revision';

/** The git branch the image was built from. */
export const LABEL_BRANCH = 'image-build-service.branch';
/** When the service wrote the image (ISO 8601): its build time for retention. */
export const LABEL_BUILT = 'image-build-service.built';
/** The tag the request named (`image.tag`), empty when the service chose `sha-<commit>`. */
export const LABEL_NAMED_TAG = 'image-build-service.tag';
/** The build key of the image (64 hex), empty when the build had none. */
export const LABEL_BUILD_KEY = 'image-build-service.build-key';
