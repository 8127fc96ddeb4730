/**
 * Cache import/export specs in buildx syntax (`type=registry,ref=host/name:cache`, or a bare
 * reference, which buildx reads as `type=registry`). Pure: no I/O.
 */

/** The cache types the service accepts (contract: Limits). */
export const CACHE_TYPES = ['registry', 'gha', 'inline'] as const;
export type CacheType = (typeof CACHE_TYPES)[number];

/** The `type=` of a spec: a bare reference is `registry`; key=value fields without `type=` give ''. */
export function cacheSpecType(spec: string): string {
  const fields = spec.split(',').map((field) => field.trim());
  if (fields.length === 1 && fields[0] !== undefined && !fields[0].includes('=')) return 'registry';
  for (const field of fields) {
    const eq = field.indexOf('=');
    if (eq > 0 && field.slice(0, eq).trim().toLowerCase() === 'type') return field.slice(eq + 1).trim();
  }
  return '';
}

export const isAllowedCacheType = (type: string): type is CacheType =>
  (CACHE_TYPES as readonly string[]).includes(type);
