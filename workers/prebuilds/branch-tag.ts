/**
 * The branch tag (docs/prebuilds.md): after a successful prebuild, `<name>:<branch>` is made to
 * point at the image just built, through the registry API only (the manifest read by its tag and
 * put under the branch tag, in the same repository: nothing to copy). Also the reader of the
 * commit of the branch's newest image, from its revision label.
 */
import type { PrebuildConfiguration } from '../../src/config/types.js';
import { ImageNotFoundError, serviceError } from '../../src/errors/errors.js';
import { PULL, PUSH_ACTIONS, type RegistryCall } from '../../src/registry/client.js';
import { type RegistryAccess, registryCall } from '../../src/registry/call.js';
import { readImageConfig } from '../../src/registry/image-config.js';
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

/** The commit of the branch's newest image (its revision label); undefined when it has none yet. */
export async function branchImageCommit(
  access: RegistryAccess,
  configuration: PrebuildConfiguration,
  branch: string,
): Promise<string | undefined> {
  const call = callFor(access, configuration.image, branchTag(branch), PULL);
  const platform = parsePlatform(configuration.platforms?.[0] ?? 'linux/amd64');
  try {
    const read = await readImageConfig(access.client, call, platform, false);
    return read.labels[IMAGE_LABELS.revision];
  } catch (err) {
    if (err instanceof ImageNotFoundError) return undefined;
    throw err;
  }
}
