/** Secret masking for captured command output and command lines (pure). */
import { decodeBasicAuth } from './basic-auth.js';

export const MASK = '***';
const MIN_SECRET_LENGTH = 4;

/** The strings to look for: each secret, and each line of a multi-line secret (private keys). */
export function secretVariants(secrets: readonly string[]): string[] {
  const out = new Set<string>();
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH) out.add(secret);
    if (secret.includes('\n')) {
      for (const line of secret.split(/\r?\n/)) {
        const trimmed = line.trim();
        if (trimmed.length >= 8 && !/^-----(BEGIN|END) /.test(trimmed)) out.add(trimmed);
      }
    }
  }
  // Longest first, so a secret that contains another is masked whole.
  return [...out].sort((a, b) => b.length - a.length);
}

export function maskSecrets(text: string, variants: readonly string[]): string {
  let masked = text;
  for (const secret of variants) {
    if (masked.includes(secret)) masked = masked.split(secret).join(MASK);
  }
  return masked;
}

const MASK_BYTES = Buffer.from(MASK);

/** Variants prepared for maskBytes: their bytes, and the ones to look for first. */
export interface ByteVariants {
  /** Each variant's UTF-8 bytes, in the variants' order. */
  readonly all: readonly Buffer[];
  /**
   * The variants that contain no other variant. Every variant contains one of them, so text
   * without any of them holds no secret: one scan per probe instead of one per variant (the
   * Redis URL and its password, a private key and its lines).
   */
  readonly probes: readonly Buffer[];
}

export function byteVariants(variants: readonly string[]): ByteVariants {
  const probes = variants.filter(
    (variant) => !variants.some((other) => other !== variant && variant.includes(other)),
  );
  return {
    all: variants.map((variant) => Buffer.from(variant)),
    probes: probes.map((probe) => Buffer.from(probe)),
  };
}

/**
 * maskSecrets on UTF-8 bytes (captured output is masked as it streams, without decoding it): the
 * same replacements in the same order, so that for any text
 * `maskBytes(Buffer.from(text), byteVariants(v))` equals `Buffer.from(maskSecrets(text, v))`.
 * Returns `bytes` itself when no secret occurs.
 */
export function maskBytes(bytes: Buffer, variants: ByteVariants): Buffer {
  if (!variants.probes.some((probe) => bytes.includes(probe))) return bytes;
  let masked = bytes;
  for (const secret of variants.all) {
    let at = masked.indexOf(secret);
    if (at < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(masked.subarray(from, at), MASK_BYTES);
      from = at + secret.length;
      at = masked.indexOf(secret, from);
    }
    parts.push(masked.subarray(from));
    masked = Buffer.concat(parts);
  }
  return masked;
}

/**
 * Secrets of the server's own configuration: git tokens, private keys, ambient registry passwords,
 * the Redis URL and Cluster password, build secret values.
 */
export function configSecrets(config: {
  redis: { url?: string; password?: string };
  gitCredentials: readonly ({ token: string } | { privateKey: string })[];
  buildSecrets?: readonly { value: string }[];
  registryAuth: {
    auths: Readonly<Record<string, { auth?: string; password?: string; identitytoken?: string }>>;
  };
}): string[] {
  const secrets: string[] = redisSecrets(config.redis.url);
  if (config.redis.password !== undefined) secrets.push(config.redis.password);
  for (const entry of config.gitCredentials) {
    secrets.push('token' in entry ? entry.token : entry.privateKey);
  }
  for (const entry of Object.values(config.registryAuth.auths)) {
    if (entry.auth) {
      secrets.push(entry.auth);
      const decoded = decodeBasicAuth(entry.auth);
      if (decoded) secrets.push(decoded.password);
    }
    if (entry.password) secrets.push(entry.password);
    if (entry.identitytoken) secrets.push(entry.identitytoken);
  }
  for (const entry of config.buildSecrets ?? []) secrets.push(entry.value);
  return secrets;
}

/** The secrets a Redis URL holds (its password, decoded and as written; the whole URL), for masking. */
export function redisSecrets(redisUrl: string | undefined): string[] {
  if (redisUrl === undefined) return [];
  const url = new URL(redisUrl);
  const secrets = [redisUrl];
  if (url.password !== '') {
    secrets.push(url.password);
    try {
      secrets.push(decodeURIComponent(url.password));
    } catch {
      // an undecodable password is masked as written
    }
  }
  return secrets;
}
