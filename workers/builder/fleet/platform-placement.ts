/**
 * Where each platform of a build may run (docs/fleet.md): first the builders declaring it, in the
 * repository's rendezvous order within that pool, then (unless only native platforms are built)
 * the builders declaring no platform, in the repository's order. A platform with no candidate at
 * all is refused before any work. Pure.
 */
import type { BuilderDeclaration } from '../../../src/config/builder-endpoints.js';
import { serviceError } from '../../../src/errors/errors.js';
import { placementOrder } from './placement.js';

/** The endpoints one platform may use, best first; the first `native` of them declare it. */
export interface PlatformOrder {
  readonly platform: string;
  readonly order: readonly string[];
  readonly native: number;
}

/** Whether the build's platforms are placed one by one (some builder declares platforms, or only native ones are built). */
export function placesPerPlatform(
  platforms: readonly string[],
  builders: readonly BuilderDeclaration[],
  nativeOnly: boolean,
): boolean {
  return platforms.length > 0 && (nativeOnly || builders.some((builder) => builder.platforms.length > 0));
}

/** Each platform's candidates for the placement `key`; throws PLATFORM_NOT_DECLARED (400) for one with none. */
export function platformOrders(
  key: string,
  platforms: readonly string[],
  builders: readonly BuilderDeclaration[],
  nativeOnly: boolean,
): PlatformOrder[] {
  const undeclared = builders.filter((builder) => builder.platforms.length === 0).map((b) => b.endpoint);
  const fallback = nativeOnly ? [] : placementOrder(key, undeclared);
  return [...new Set(platforms)].map((platform) => {
    const pool = builders.filter((builder) => builder.platforms.includes(platform)).map((b) => b.endpoint);
    const order = [...placementOrder(key, pool), ...fallback];
    if (order.length === 0) throw serviceError('PLATFORM_NOT_DECLARED', { platform });
    return { platform, order, native: pool.length };
  });
}
