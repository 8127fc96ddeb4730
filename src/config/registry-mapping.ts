/**
 * Registry mapping: which registry a repository's image goes to when a build request names none.
 * Pure: no I/O.
 */
import type { RegistryMappingRule } from './types.js';

/**
 * The first rule whose `hostMatch` (exact, case-insensitive host) and `pathPrefix` (string prefix
 * of the repository path without its leading `/`) both match; a rule with neither is a catch-all.
 */
export function matchRegistryRule(
  rules: readonly RegistryMappingRule[],
  host: string,
  path: string,
): RegistryMappingRule | undefined {
  const repoHost = host.toLowerCase();
  const repoPath = path.replace(/^\/+/, '');
  return rules.find((rule) => {
    if (rule.hostMatch !== undefined && rule.hostMatch.toLowerCase() !== repoHost) return false;
    if (rule.pathPrefix !== undefined && !repoPath.startsWith(rule.pathPrefix.replace(/^\/+/, '')))
      return false;
    return true;
  });
}
