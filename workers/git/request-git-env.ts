/**
 * The hardened git environment of one request's git commands (see git-env.ts), with the
 * request's credential in 0600 files of its `git/` directory (a global git config with a header
 * scoped to the repository's origin for https, a key file for ssh) and its known_hosts. The
 * caller removes that directory as soon as its git commands have ended.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeBasicAuth } from '../../src/secrets/basic-auth.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { RequestDir } from '../common/request-dir.js';
import { credentialConfig, gitEnv, repoOrigin } from './git-env.js';
import { prepareKnownHosts } from './host-keys.js';

async function credentialFiles(
  plan: BuildPlan,
  secretsDir: string,
): Promise<{ sshKeyFile?: string; credentialConfigFile?: string }> {
  const cred = plan.gitCredential;
  if (cred === undefined) return {};
  if (cred.kind === 'ssh') {
    const sshKeyFile = join(secretsDir, 'id_key');
    const key = cred.privateKey.endsWith('\n') ? cred.privateKey : `${cred.privateKey}\n`;
    await writeFile(sshKeyFile, key, { mode: 0o600, flag: 'wx' });
    return { sshKeyFile };
  }
  if (plan.url.scheme !== 'https' && plan.url.scheme !== 'http') return {};
  const credentialConfigFile = join(secretsDir, 'gitconfig');
  await writeFile(credentialConfigFile, credentialConfig(repoOrigin(plan.url), cred.username, cred.token), {
    mode: 0o600,
    flag: 'wx',
  });
  return { credentialConfigFile };
}

/** The request's secrets plus the encoded form of the https credential. */
export function gitSecrets(plan: BuildPlan): string[] {
  const cred = plan.gitCredential;
  if (cred?.kind !== 'https') return plan.secrets;
  return [...plan.secrets, encodeBasicAuth(cred.username, cred.token)];
}

/** The environment of the request's git commands (credential files written into `dir.gitSecrets`). */
export async function requestGitEnv(
  plan: BuildPlan,
  config: StepDeps['config'],
  dir: Pick<RequestDir, 'gitSecrets' | 'home'>,
): Promise<Record<string, string>> {
  const knownHosts = await prepareKnownHosts({
    policy: config.sshHostKeyPolicy,
    scratchDir: config.scratchDir,
    requestSecretsDir: dir.gitSecrets,
    ...(plan.gitCredential?.kind === 'ssh' && plan.gitCredential.pinnedHostKey !== undefined
      ? { pinnedHostKey: plan.gitCredential.pinnedHostKey }
      : {}),
  });
  const files = await credentialFiles(plan, dir.gitSecrets);
  return gitEnv({
    baseEnv: config.childEnv,
    allowInsecureProtocols: config.git.allowInsecureProtocols,
    home: dir.home,
    knownHosts,
    ...files,
  });
}
