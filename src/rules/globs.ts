/**
 * The one glob grammar of the settings: prebuild branches and paths, and the repository paths and
 * image names of access rules (docs/auth.md). Pure.
 */

/** Globs compiled lately (a page of builds tests each one's visibility against the same rules). */
const compiled = new Map<string, RegExp>();
const COMPILED_KEPT = 1000;

/** A glob as a RegExp: `**` any characters, `*` any but `/`, `?` one but `/`. Compiled once (cached). */
export function globToRegExp(glob: string): RegExp {
  const known = compiled.get(glob);
  if (known !== undefined) return known;
  if (compiled.size >= COMPILED_KEPT) compiled.clear();
  const regExp = compile(glob);
  compiled.set(glob, regExp);
  return regExp;
}

function compile(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` also matches no folder at all.
      out += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export const matchesAny = (value: string, globs: readonly string[]): boolean =>
  globs.some((glob) => globToRegExp(glob).test(value));
