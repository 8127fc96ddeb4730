/**
 * The branch tag (docs/prebuilds.md): after a successful prebuild, `<name>:<branch>` is made to
 * point at the image just built, through the registry API only (the manifest read by its tag and
 * put under the branch tag, in the same repository: nothing to copy). Also the reader of the
 * branch's newest image: its digest, and its commit from its revision label.
 */
import type { PrebuildConfiguration } from '../../src/config/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { PULL, PUSH_ACTIONS, type RegistryCall } from '../../src/registry/client.js';
import { type RegistryAccess, registryCall } from '../../src/registry/call.js';
import { readConfigOf } from '../../src/registry/image-config.js';
import { parsePlatform } from '../../src/registry/platform.js';
import { putManifest } from '../../src/registry/push.js';
import { manifestMediaType } from '../../src/registry/relabel.js';
import { ImageTarget } from '../../src/rules/image-target.js';
import { branchTag } from '../../src/prebuilds/names.js';
import { IMAGE_LABELS } from '../../src/rules/image-labels.js';

const callFor = (
  access: RegistryAccess,
  image: PrebuildConfiguration['image'],
  tag: string,
  actions: readonly string[],
): RegistryCall => registryCall(access, ImageTarget.of(image).withTag(tag), actions);

/** Points `<name>:<branch>` at the image tagged `fromTag`; answers the branch tag. */
export async function moveBranchTag(
  access: RegistryAccess,
  image: PrebuildConfiguration['image'],
  fromTag: string,
  branch: string,
): Promise<string> {
  const tag = branchTag(branch);
  const call = callFor(access, image, fromTag, PUSH_ACTIONS);
  const manifest = await access.client.getManifest(call, fromTag);
  if (manifest === undefined) throw serviceError('IMAGE_NOT_FOUND', { image: call.ref.image });
  await putManifest(access.client, call, tag, manifest.body, manifestMediaType(manifest));
  return tag;
}

/** The branch's newest image: its manifest's digest, and the reader of its commit (revision label). */
export interface BranchImage {
  readonly digest: string;
  readonly commit: () => Promise<string | undefined>;
}

/** One manifest GET of the branch tag; undefined when the branch has no image yet. */
export async function branchImage(
  access: RegistryAccess,
  configuration: PrebuildConfiguration,
  branch: string,
): Promise<BranchImage | undefined> {
  const call = callFor(access, configuration.image, branchTag(branch), PULL);
  const top = await access.client.getManifest(call, call.ref.tag);
  if (top === undefined) return undefined;
  const platform = parsePlatform(configuration.platforms?.[0] ?? 'linux/amd64');
  return {
    digest: top.digest,
    commit: async () => {
      const read = await readConfigOf(access.client, call, top, platform, false);
      return read.labels[IMAGE_LABELS.revision];
    },
  };
}
