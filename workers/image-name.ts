/**
 * Image name derivation and the OCI reference grammar pieces a build needs (pure).
 * https://github.com/distribution/reference/blob/main/reference.go
 */

/** One path component of an OCI repository name. */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
/** An OCI repository name (path components joined by `/`), without registry. */
export const IMAGE_NAME_PATTERN = `^${COMPONENT}(?:/${COMPONENT})*$`;
/** An OCI tag. */
export const IMAGE_TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';
/**
 * A registry: `host[:port]` (DNS name, IPv4 or bracketed IPv6), optionally followed by
 * a namespace path (`ghcr.io/org`) in the OCI name grammar.
 */
export const REGISTRY_PATTERN =
  '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*' +
  `|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?(?:/${COMPONENT})*$`;

export const MAX_DERIVED_NAME_LENGTH = 128;

/**
 * The image name for a repository path: its last segment without `.git`, percent-decoded,
 * lower-cased and reduced to the OCI name grammar (other characters and separator runs
 * become `-`, separators trimmed at both ends). undefined when nothing usable is left.
 */
export function deriveImageName(repositoryPath: string): string | undefined {
  const segments = repositoryPath.split('/').filter((s) => s !== '');
  let last = segments[segments.length - 1] ?? '';
  if (last.toLowerCase().endsWith('.git')) last = last.slice(0, -4);
  last = safeDecode(last).toLowerCase();
  let name = last
    .replace(/[^a-z0-9._-]+/g, '-')
    // Separator runs the grammar does not allow (`._`, `.-`, `..`, `___`...) become `-`.
    .replace(/[._-]{2,}/g, (run) => (run === '__' || /^-+$/.test(run) ? run : '-'))
    .replace(/^[._-]+|[._-]+$/g, '');
  if (name.length > MAX_DERIVED_NAME_LENGTH) {
    name = name.slice(0, MAX_DERIVED_NAME_LENGTH).replace(/[._-]+$/, '');
  }
  return name === '' ? undefined : name;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
