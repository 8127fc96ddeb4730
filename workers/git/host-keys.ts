/**
 * Which known_hosts file ssh checks, and how strictly.
 * - tofu: one instance-wide known_hosts in the scratch space, `StrictHostKeyChecking=accept-new`:
 *   a host's first key is remembered for the life of the instance, a changed key is refused.
 * - pinned: a per-request known_hosts holding only the credential's pinned key,
 *   `StrictHostKeyChecking=yes`.
 */
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SshHostKeyPolicy } from '../../src/config/types.js';

export interface KnownHosts {
  readonly file: string;
  readonly strictHostKeyChecking: 'accept-new' | 'yes';
}

/** The instance-wide tofu file: `<scratch>/ssh/known_hosts`. */
export const tofuKnownHostsFile = (scratchDir: string): string => join(scratchDir, 'ssh', 'known_hosts');

export async function prepareKnownHosts(options: {
  policy: SshHostKeyPolicy;
  scratchDir: string;
  /** Per-request private directory (0700) for the pinned file. */
  requestSecretsDir: string;
  /** known_hosts lines of the pinned key (from the plan), required under `pinned`. */
  pinnedHostKey?: string;
}): Promise<KnownHosts> {
  if (options.policy === 'pinned') {
    if (options.pinnedHostKey === undefined) throw new Error('pinned policy without a pinned host key');
    const file = join(options.requestSecretsDir, 'known_hosts');
    await writeFile(file, `${options.pinnedHostKey.trim()}\n`, { mode: 0o600, flag: 'wx' });
    return { file, strictHostKeyChecking: 'yes' };
  }
  const file = tofuKnownHostsFile(options.scratchDir);
  await mkdir(join(options.scratchDir, 'ssh'), { recursive: true, mode: 0o700 });
  // Create it empty once (never truncate: it holds what this instance has learnt).
  await (await open(file, 'a', 0o600)).close();
  return { file, strictHostKeyChecking: 'accept-new' };
}
