/**
 * Cache import/export specs in buildx syntax (`--cache-from` / `--cache-to`): THE parse and normalise
 * function, used by the configuration check (`--build-cache-*`) and the build plan
 * (`buildOptions.cache*`), so a default the configuration accepts is always plannable. Rules:
 * docs/behaviour.md (Image names, registries, credentials), docs/openapi.yaml (BuildOptions). Pure.
 * Whitespace, quotes and control characters are refused: buildx reads specs as CSV, and a quoted
 * field could hide a second `type=`.
 */

/** The cache types the service accepts (docs/openapi.yaml, BuildOptions). */
export const CACHE_TYPES = ['registry', 'gha', 'inline'] as const;
type CacheType = (typeof CACHE_TYPES)[number];

export type CacheSpecParse =
  | { readonly ok: true; readonly spec: string; readonly type: CacheType }
  | { readonly ok: false; readonly problem: 'malformed' }
  | { readonly ok: false; readonly problem: 'type'; readonly type: string };

const KEY = /^[A-Za-z0-9_.-]+$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /["\s\x00-\x1f\x7f]/;

const isAllowedCacheType = (type: string): type is CacheType =>
  (CACHE_TYPES as readonly string[]).includes(type);

/** The normalised spec (`type=` always present), or why it is refused. */
export function parseCacheSpec(spec: string): CacheSpecParse {
  if (spec === '' || UNSAFE.test(spec)) return { ok: false, problem: 'malformed' };
  if (!spec.includes('=')) {
    if (spec.includes(',')) return { ok: false, problem: 'malformed' };
    return { ok: true, spec: `type=registry,ref=${spec}`, type: 'registry' };
  }
  let type: string | undefined;
  for (const field of spec.split(',')) {
    const eq = field.indexOf('=');
    if (eq <= 0 || !KEY.test(field.slice(0, eq))) return { ok: false, problem: 'malformed' };
    if (field.slice(0, eq).toLowerCase() !== 'type') continue;
    // A second type= would override the first.
    if (type !== undefined) return { ok: false, problem: 'malformed' };
    type = field.slice(eq + 1);
  }
  if (type === undefined) return { ok: true, spec: `type=registry,${spec}`, type: 'registry' };
  if (!isAllowedCacheType(type)) return { ok: false, problem: 'type', type };
  return { ok: true, spec, type };
}
