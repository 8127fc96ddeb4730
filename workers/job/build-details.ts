/**
 * What a build's record tells of its key (workers/reuse/build-key.ts): each input by name with its
 * digest, and for a build that ran, the inputs that differ from the last build of its repository
 * and branch (every replica's in Redis mode), a path's with the files under it that differ. Of the build secrets only their ids and a digest of their keyed
 * identity, never a value.
 */
import { createHash } from 'node:crypto';
import type { BuildKeyView, ChangedInput, RebuiltBecause } from '../../src/builds/types.js';
import type { BuildKeyInput } from '../reuse/build-key.js';
import { describeRebuilt, type RebuiltInput } from '../reuse/rebuilt-inputs.js';

const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The key and its inputs by name (paths by their git object id). */
export function keyView(key: string, input: BuildKeyInput): BuildKeyView {
  const inputs = [
    { name: 'config file', digest: input.configDigest },
    ...input.paths.map((path) => ({ name: `path ${path.path || '/'}`, digest: path.objectId })),
    ...input.baseImages.map((ref) => ({ name: `base image ${ref.ref}`, digest: ref.digest })),
    ...input.features.map((ref) => ({ name: `feature ${ref.ref}`, digest: ref.digest })),
    { name: 'platforms', digest: input.platforms.join(',') || 'default' },
    { name: 'Dev Containers CLI', digest: input.cliVersion },
    { name: 'build process', digest: String(input.buildProcessVersion) },
    ...(input.secretIds === undefined || input.secretIds.length === 0
      ? []
      : [{ name: `build secrets ${[...input.secretIds].sort().join(',')}`, digest: 'ids only' }]),
    ...(input.secretsIdentity === undefined
      ? []
      : [{ name: 'build secrets identity', digest: sha256(input.secretsIdentity) }]),
  ];
  return { key, inputs };
}

/** One changed input as the record names it: old and new value, a path's files. */
function changedInput(change: RebuiltInput): ChangedInput {
  const { files } = change;
  return {
    input: change.input,
    ...(change.before === undefined ? {} : { before: change.before }),
    ...(change.after === undefined ? {} : { after: change.after }),
    ...(files === undefined ? {} : { files: [...files.files], moreFiles: files.more }),
  };
}

/** Why a build ran: the inputs changed since the last build (undefined: no earlier build known). */
export function rebuiltBecause(changed: readonly RebuiltInput[] | undefined): RebuiltBecause {
  if (changed === undefined) return { inputs: ['no earlier build'], changes: [] };
  return {
    inputs: changed.length > 0 ? changed.map(describeRebuilt) : ['none: the earlier image is gone'],
    changes: changed.map(changedInput),
  };
}
