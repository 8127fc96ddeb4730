/** Secret masking for captured command output and command lines (pure). */
import { decodeBasicAuth } from '../config/basic-auth.js';
import { redisSecrets } from '../config/redis-url.js';

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

/** Secrets of the server's own configuration: git tokens, private keys, ambient registry passwords, the Redis URL. */
export function configSecrets(config: {
  redisUrl?: string;
  gitCredentials: readonly ({ token: string } | { privateKey: string })[];
  registryAuth: {
    auths: Readonly<Record<string, { auth?: string; password?: string; identitytoken?: string }>>;
  };
}): string[] {
  const secrets: string[] = redisSecrets(config.redisUrl);
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
  return secrets;
}
