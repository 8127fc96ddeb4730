/**
 * The known_hosts line grammar of a pinned host key (sshd(8), SSH_KNOWN_HOSTS FILE FORMAT):
 * `[@marker] [hosts] <key type> <base64 key> [comment]`, one key per line; blank lines and
 * `#` lines are ignored. The host field is optional here (a bare `ssh-ed25519 AAAA...` pins
 * the key for the entry's host). One parser for the configuration check and for the
 * known_hosts file a clone uses. Pure: no I/O.
 */

export interface KnownHostsLine {
  /** `@cert-authority` or `@revoked`. */
  readonly marker?: string;
  /** The host patterns field, as written. */
  readonly hosts?: string;
  readonly keyType: string;
  readonly key: string;
  /** Everything after the key, as written (may contain spaces). */
  readonly comment?: string;
}

const MARKERS = new Set(['@cert-authority', '@revoked']);
/** ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, their -cert- forms... */
const KEY_TYPE = /^(?:ssh-|ecdsa-|sk-)[a-z0-9@.-]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,3}$/;

/** One line (already trimmed, not blank, not a `#` comment), or undefined when it is not a key line. */
export function parseKnownHostsLine(line: string): KnownHostsLine | undefined {
  const fields = line.trim().split(/\s+/);
  const marker = fields[0]?.startsWith('@') ? fields.shift() : undefined;
  if (marker !== undefined && !MARKERS.has(marker)) return undefined;
  const keyAt = (i: number): boolean => KEY_TYPE.test(fields[i] ?? '') && BASE64.test(fields[i + 1] ?? '');
  // Bare key (`type key [comment]`) unless a host field comes first; a marker needs hosts.
  const start = marker === undefined && keyAt(0) ? 0 : keyAt(1) ? 1 : -1;
  if (start < 0) return undefined;
  const hosts = start === 1 ? fields[0] : undefined;
  const comment = fields.slice(start + 2).join(' ');
  return {
    ...(marker === undefined ? {} : { marker }),
    ...(hosts === undefined ? {} : { hosts }),
    keyType: fields[start] as string,
    key: fields[start + 1] as string,
    ...(comment === '' ? {} : { comment }),
  };
}

/** The key lines of a pinned host key text (blank and `#` lines dropped). */
export const keyLines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

/** Whether a pinned host key text holds at least one key line and nothing but key lines. */
export function isPinnedHostKey(text: string): boolean {
  const lines = keyLines(text);
  return lines.length > 0 && lines.every((line) => parseKnownHostsLine(line) !== undefined);
}

/** A parsed line written again for `hosts` (the name ssh looks up), marker and comment kept. */
export function formatKnownHostsLine(line: KnownHostsLine, hosts: string): string {
  return [line.marker, hosts, line.keyType, line.key, line.comment].filter((f) => f !== undefined).join(' ');
}
