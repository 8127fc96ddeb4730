/**
 * Platform selection in an image index: the `platform` parameter against the index entries,
 * compared after normalising (x86_64 -> amd64, aarch64 -> arm64, arm64/v8 -> arm64, ...).
 * Attestation entries (`unknown/unknown`) never match. Pure.
 */
import type { Descriptor, Platform } from './manifest.js';

const ARCH_ALIASES: Record<string, string> = {
  x86_64: 'amd64',
  'x86-64': 'amd64',
  aarch64: 'arm64',
  i386: '386',
  i686: '386',
  armhf: 'arm',
  armel: 'arm',
};

/** Normalised os/architecture/variant (lower case, aliases resolved, `arm64/v8` -> `arm64`). */
export function normalizePlatform(platform: Platform): Platform {
  const os = platform.os.toLowerCase();
  const architecture =
    ARCH_ALIASES[platform.architecture.toLowerCase()] ?? platform.architecture.toLowerCase();
  let variant = platform.variant?.toLowerCase();
  if (architecture === 'arm64' && (variant === 'v8' || variant === '8')) variant = undefined;
  if (architecture === 'arm' && platform.architecture.toLowerCase() === 'armhf' && !variant) variant = 'v7';
  if (architecture === 'arm' && platform.architecture.toLowerCase() === 'armel' && !variant) variant = 'v6';
  return variant ? { os, architecture, variant } : { os, architecture };
}

/** `os/arch[/variant]` (the docs/openapi.yaml pattern already checked) -> Platform. */
export function parsePlatform(text: string): Platform {
  const [os = '', architecture = '', variant] = text.split('/');
  return normalizePlatform(variant ? { os, architecture, variant } : { os, architecture });
}

export const formatPlatform = (p: Platform): string =>
  p.variant ? `${p.os}/${p.architecture}/${p.variant}` : `${p.os}/${p.architecture}`;

/** Attestation manifests (BuildKit provenance/SBOM) sit in the index as `unknown/unknown`. */
export function isAttestation(descriptor: Descriptor): boolean {
  if (descriptor.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest') return true;
  return descriptor.platform?.os === 'unknown' && descriptor.platform.architecture === 'unknown';
}

/** Whether an entry's platform satisfies the wanted one (a wanted variant must match; none accepts any). */
export function platformMatches(entry: Platform, wanted: Platform): boolean {
  const e = normalizePlatform(entry);
  const w = normalizePlatform(wanted);
  if (e.os !== w.os || e.architecture !== w.architecture) return false;
  return w.variant === undefined || e.variant === w.variant;
}

export type PlatformSelection =
  { found: true; descriptor: Descriptor } | { found: false; available: string[] };

/**
 * The index entry for `wanted`: an exact variant match first, else the first matching entry.
 * When none matches, the available platforms (attestations excluded, de-duplicated).
 */
export function selectPlatform(manifests: readonly Descriptor[], wanted: Platform): PlatformSelection {
  const candidates = manifests.filter((d) => d.platform && !isAttestation(d));
  const w = normalizePlatform(wanted);
  const matching = candidates.filter((d) => d.platform && platformMatches(d.platform, w));
  const exact = matching.find((d) => d.platform && normalizePlatform(d.platform).variant === w.variant);
  const chosen = exact ?? matching[0];
  if (chosen) return { found: true, descriptor: chosen };
  const available = [
    ...new Set(candidates.map((d) => formatPlatform(normalizePlatform(d.platform as Platform)))),
  ];
  return { found: false, available };
}
