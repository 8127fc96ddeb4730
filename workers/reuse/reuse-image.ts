/**
 * Reuse through the registry API (see README "Build reuse"): the key of a successful build is
 * recorded as the tag `build-key-<hex>` of the target repository, pointing at the built image
 * (the same manifest or index). A later build with that key finds it with one manifest request
 * and writes its own tag: a relabelled copy (src/registry/relabel.ts) with this request's
 * revision and source labels. Every call uses the push credentials of the build.
 */
import { imageNotFound, internal } from '../../src/errors.js';
import { PUSH_ACTIONS, type RegistryCall, type RegistryClient } from '../../src/registry/client.js';
import { parseImageString } from '../../src/registry/image-string.js';
import type { ImageReference } from '../../src/registry/reference.js';
import { putManifest } from '../../src/registry/push.js';
import { manifestMediaType, writeRelabelled } from '../../src/registry/relabel.js';
import { buildKeyTag } from './build-key.js';
import type { CredentialsFor } from './registry-credentials.js';

export const LABEL_SOURCE = 'org.opencontainers.image.source';
export const LABEL_REVISION = 'org.opencontainers.image.revision';

export interface ReuseTarget {
  readonly registry: string;
  readonly name: string;
  readonly tag: string;
}

export interface RegistryAccess {
  readonly client: RegistryClient;
  readonly insecureRegistries: readonly string[];
  readonly credentialsFor: CredentialsFor;
}

function pushCall(target: ReuseTarget, tag: string, access: RegistryAccess): RegistryCall {
  const parsed = parseImageString(`${target.registry}/${target.name}:${tag}`, access.insecureRegistries);
  // The plan checked registry, name and tag already: a refusal here is a programming error.
  if (parsed === undefined) throw internal('a planned image reference failed the reference grammar');
  const ref: ImageReference = parsed.ref;
  return { ref, credentials: access.credentialsFor(ref), actions: PUSH_ACTIONS };
}

export type ReuseOutcome =
  | { readonly kind: 'reused'; readonly earlier: string; readonly digest: string }
  | { readonly kind: 'absent' };

/**
 * Looks the key up in the target repository; when recorded, writes `target.tag` as a relabelled
 * copy and returns the earlier image (`<registry>/<name>@<digest>`) and the new digest. Registry
 * failures throw (the caller falls back to a build).
 */
export async function reuseByKey(
  key: string,
  target: ReuseTarget,
  labels: { source: string; revision: string },
  access: RegistryAccess,
): Promise<ReuseOutcome> {
  const keyCall = pushCall(target, buildKeyTag(key), access);
  const recorded = await access.client.getManifest(keyCall, keyCall.ref.tag);
  if (recorded === undefined) return { kind: 'absent' };
  const call = pushCall(target, target.tag, access);
  const digest = await writeRelabelled(access.client, call, recorded, {
    [LABEL_SOURCE]: labels.source,
    [LABEL_REVISION]: labels.revision,
  });
  return { kind: 'reused', earlier: `${target.registry}/${target.name}@${recorded.digest}`, digest };
}

/** The digest the registry serves for `target.tag` (the image just pushed or written). */
export async function pushedDigest(target: ReuseTarget, access: RegistryAccess): Promise<string> {
  const call = pushCall(target, target.tag, access);
  const manifest = await access.client.getManifest(call, target.tag);
  if (manifest === undefined) throw imageNotFound(call.ref.image);
  return manifest.digest;
}

/** Records `key` for the image just pushed under `target.tag` (the same manifest under the key's tag). */
export async function recordKey(key: string, target: ReuseTarget, access: RegistryAccess): Promise<string> {
  const built = pushCall(target, target.tag, access);
  const manifest = await access.client.getManifest(built, target.tag);
  if (manifest === undefined) throw imageNotFound(built.ref.image);
  const keyCall = pushCall(target, buildKeyTag(key), access);
  await putManifest(access.client, keyCall, keyCall.ref.tag, manifest.body, manifestMediaType(manifest));
  return keyCall.ref.image;
}
