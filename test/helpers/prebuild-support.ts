/**
 * Helpers of the prebuild tests (their repositories come from pushed-repo.ts): webhook
 * deliveries signed as GitHub signs them, and the digest a registry serves for a tag.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import { ZERO } from './pushed-repo.js';

/** A GitHub push payload (the fields the service reads, plus some it must ignore). */
export function githubPush(
  repo: { url: string; name: string },
  branch: string,
  commits: { before: string; after: string },
) {
  return {
    ref: `refs/heads/${branch}`,
    before: commits.before,
    after: commits.after,
    deleted: commits.after === ZERO,
    repository: {
      full_name: `it/${repo.name}`,
      clone_url: repo.url,
      html_url: repo.url.replace(/\.git$/, ''),
    },
    commits: [{ id: commits.after, modified: ['ignored-by-the-service'] }],
  };
}

export interface HookAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** POSTs `payload` to `/hooks/<forge>` with the headers given (signature computed with `secret` for GitHub). */
export async function sendHook(
  url: string,
  forge: 'github' | 'gitlab' | 'gitea',
  payload: unknown,
  headers: Record<string, string>,
): Promise<HookAnswer> {
  const res = await fetch(`${url}/hooks/${forge}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

export const githubSignature = (secret: string, payload: unknown): string =>
  `sha256=${createHmac('sha256', secret).update(JSON.stringify(payload)).digest('hex')}`;

/** A GitHub push delivery signed with `secret`. */
export const githubHook = (url: string, secret: string, payload: unknown): Promise<HookAnswer> =>
  sendHook(url, 'github', payload, {
    'x-github-event': 'push',
    'x-github-delivery': randomBytes(8).toString('hex'),
    'x-hub-signature-256': githubSignature(secret, payload),
  });

/**
 * The digest `<registry>/<name>:<tag>` serves, or undefined when the tag does not exist. An answer
 * of 5xx is asked again a few times: the stack's registry (distribution on its filesystem store)
 * answers 500 "invalid checksum digest format" to a read that meets a manifest of the same digest
 * being written under another tag (the branch tag moving to the image just read).
 */
export async function tagDigest(registry: string, name: string, tag: string): Promise<string | undefined> {
  const head = () =>
    registryFetch(registry, `/v2/${name}/manifests/${tag}`, {
      method: 'HEAD',
      headers: { accept: MANIFEST_ACCEPT },
    });
  let res = await head();
  for (let tries = 1; res.status >= 500 && tries < 5; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100 * tries));
    res = await head();
  }
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`HEAD ${name}:${tag} answered ${res.status}`);
  return res.headers.get('docker-content-digest') ?? undefined;
}
