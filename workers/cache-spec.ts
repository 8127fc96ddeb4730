/**
 * buildx cache specs (`--cache-from` / `--cache-to`), pure: the `type=` of a spec must be
 * one of registry, gha, inline; a bare reference means `type=registry,ref=<ref>`, and a
 * spec without `type=` gets `type=registry` first. Quotes are refused by the request
 * schema (buildx reads specs as CSV, and a quoted field could hide a second `type=`).
 */
import { isAllowedCacheType } from '../src/config/cache-spec.js';
import { cacheTypeNotAllowed, invalidFields } from '../src/errors.js';

const KEY = /^[A-Za-z0-9_.-]+$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /["\s\x00-\x1f\x7f]/;

/** Returns the normalised spec (`type=...` always first-class), or throws a 400. */
export function normaliseCacheSpec(field: 'cacheFrom' | 'cacheTo', spec: string): string {
  if (spec === '' || UNSAFE.test(spec)) throw invalidFields();
  if (!spec.includes('=')) {
    if (spec.includes(',')) throw invalidFields();
    return `type=registry,ref=${spec}`;
  }
  const parts = spec.split(',');
  let type: string | undefined;
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0 || !KEY.test(part.slice(0, eq))) throw invalidFields();
    if (part.slice(0, eq).toLowerCase() === 'type') {
      if (type !== undefined) throw invalidFields(); // a second type= would override the first
      type = part.slice(eq + 1);
    }
  }
  if (type === undefined) return `type=registry,${spec}`;
  if (!isAllowedCacheType(type)) throw cacheTypeNotAllowed(field, type);
  return spec;
}
