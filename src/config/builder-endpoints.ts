/**
 * Builder endpoints and the platforms each declares (docs/fleet.md). As a flag or environment value
 * an entry reads `endpoint[=platform+platform...]` (`=` and `+` never occur in a BuildKit endpoint);
 * in the settings file an entry is that text or `{endpoint, platforms}`. An entry declaring no
 * platform builds any (emulation where needed). Pure.
 */
import { BUILD_PLATFORM_PATTERN } from '../rules/image-reference.js';

/** One builder as configured: its endpoint and the platforms it builds natively ([] = any). */
export interface BuilderDeclaration {
  readonly endpoint: string;
  readonly platforms: readonly string[];
}

const ENDPOINT = /^[a-z][a-z0-9+.-]*:\/\/[^\s=]+$/;
const PLATFORM = new RegExp(BUILD_PLATFORM_PATTERN);

/** `tcp://a:1=linux/amd64+linux/386` -> `{endpoint: 'tcp://a:1', platforms: ['linux/amd64', 'linux/386']}`. */
export function parseBuilderEntry(entry: string): BuilderDeclaration {
  const at = entry.indexOf('=');
  if (at < 0) return { endpoint: entry, platforms: [] };
  const platforms = entry
    .slice(at + 1)
    .split('+')
    .map((platform) => platform.trim());
  return { endpoint: entry.slice(0, at), platforms };
}

/** The text form of a settings file entry `{endpoint, platforms}`; other values are returned as they are. */
export function builderEntryText(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
  const { endpoint, platforms, ...rest } = item as Record<string, unknown>;
  const wellFormed =
    typeof endpoint === 'string' &&
    Object.keys(rest).length === 0 &&
    (platforms === undefined ||
      (Array.isArray(platforms) && platforms.every((platform) => typeof platform === 'string')));
  if (!wellFormed) return item;
  const list = (platforms ?? []) as string[];
  return list.length === 0 ? endpoint : `${endpoint}=${list.join('+')}`;
}

/** The problem of one entry, or undefined. */
export function builderEntryProblem(entry: string): string | undefined {
  const { endpoint, platforms } = parseBuilderEntry(entry);
  if (!ENDPOINT.test(endpoint)) return `"${endpoint}" must be a URL such as tcp://host:port`;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/.test(endpoint)) {
    return 'an endpoint must not hold credentials (use the --builder-tls-* options)';
  }
  const bad = platforms.find((platform) => !PLATFORM.test(platform));
  if (bad !== undefined) {
    return `"${entry}": "${bad}" is not a platform (endpoint=os/arch[/variant]+os/arch...)`;
  }
  const twice = platforms.find((platform, i) => platforms.indexOf(platform) !== i);
  return twice === undefined ? undefined : `"${entry}" declares ${twice} twice`;
}

/** The declarations of the option's entries, in order. */
export function builderDeclarations(entries: readonly string[]): BuilderDeclaration[] {
  return entries.map(parseBuilderEntry);
}

/** The builders' endpoints, in the order configured (empty: no builder; readiness never passes). O(builders). */
export const builderEndpoints = (config: { readonly builders: readonly BuilderDeclaration[] }): string[] =>
  config.builders.map((builder) => builder.endpoint);

/** The platforms `endpoint` declares among `builders` ([] when it declares none or is not listed). */
export function declaredPlatforms(
  builders: readonly BuilderDeclaration[],
  endpoint: string,
): readonly string[] {
  return builders.find((builder) => builder.endpoint === endpoint)?.platforms ?? [];
}
