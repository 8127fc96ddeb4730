/**
 * Image name derivation: a repository path -> a name in the OCI name grammar (the grammar
 * itself lives in src/registry/reference.ts). Pure.
 */

const MAX_DERIVED_NAME_LENGTH = 128;

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
