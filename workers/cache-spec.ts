/**
 * A request's (or the configuration's default) cache spec for the build plan: the one parser
 * (src/config/cache-spec.ts) with its refusals as the contract's 400s.
 */
import { parseCacheSpec } from '../src/config/cache-spec.js';
import { cacheTypeNotAllowed, invalidFields } from '../src/errors.js';

/** Returns the normalised spec (`type=...` always present), or throws a 400. */
export function normaliseCacheSpec(field: 'cacheFrom' | 'cacheTo', spec: string): string {
  const parsed = parseCacheSpec(spec);
  if (parsed.ok) return parsed.spec;
  throw parsed.problem === 'type' ? cacheTypeNotAllowed(field, parsed.type) : invalidFields();
}
