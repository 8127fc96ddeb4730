/**
 * Branch/tag names (pure): `git check-ref-format --allow-onelevel` rules in TypeScript,
 * plus "never starts with `-`", so a name can never become a git option.
 * https://git-scm.com/docs/git-check-ref-format
 */

const MAX_REF_NAME_LENGTH = 255;

/** Characters git forbids anywhere: controls, DEL, space, `~ ^ : ? * [ \`. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const FORBIDDEN_CHARS = /[\x00-\x20\x7f~^:?*[\\]/;

export function isValidRefName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_REF_NAME_LENGTH) return false;
  if (name.startsWith('-')) return false;
  if (name === '@') return false;
  if (FORBIDDEN_CHARS.test(name)) return false;
  if (name.includes('..') || name.includes('@{') || name.includes('//')) return false;
  if (name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  for (const component of name.split('/')) {
    if (component.startsWith('.') || component.endsWith('.lock')) return false;
  }
  return true;
}
