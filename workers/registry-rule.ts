/**
 * Registry resolution (pure): `image.registry`, else the first registry mapping rule
 * whose selectors all match the repository (host: exact, case-insensitive; path prefix:
 * whole leading path segments of the repository path without its leading `/`).
 * A rule without selectors matches every repository (a catch-all default).
 *
 * Temporary home: switch to `matchRegistryRule` from src/config/registry-mapping.ts
 * when the foundation's version lands.
 */
import type { RegistryMappingRule } from '../src/config/types.js';

export function matchRegistryRule(
  rules: readonly RegistryMappingRule[],
  host: string,
  path: string,
): RegistryMappingRule | undefined {
  const cleanPath = path.replace(/^\/+/, '');
  return rules.find((rule) => {
    if (rule.hostMatch !== undefined && rule.hostMatch.toLowerCase() !== host.toLowerCase()) return false;
    if (rule.pathPrefix !== undefined) {
      const prefix = rule.pathPrefix.replace(/^\/+/, '').replace(/\/+$/, '');
      if (prefix !== '' && cleanPath !== prefix && !cleanPath.startsWith(`${prefix}/`)) return false;
    }
    return true;
  });
}
