/**
 * DELETE /image: resolve the tag's digest (HEAD), delete the manifest by digest. Best effort:
 * a registry without deletion support is a normal outcome (`unsupported`), not an error.
 */
import { LIMITS, type RegistryCall, type RegistryClient, errorCodes } from './client.js';
import { isValidTag, unexpectedAnswer } from './reference.js';

type DeleteResult = 'deleted' | 'unsupported';

export interface DeleteOutcome {
  deleted: boolean;
  reason: string;
  result: DeleteResult;
}

/** Tags lists longer than this are not checked tag by tag for sharing. */
const MAX_TAGS_CHECKED = 50;
const CHECK_CONCURRENCY = 8;

export async function deleteImage(client: RegistryClient, call: RegistryCall): Promise<DeleteOutcome> {
  const { ref } = call;
  const head = await client.headManifest(call, ref.tag);
  if (head.status === 404) return { deleted: true, reason: 'already absent', result: 'deleted' };
  if (head.status !== 200) throw unexpectedAnswer(ref, head.status);
  const digest = head.digest ?? (await client.getManifest(call, ref.tag))?.digest;
  if (!digest) return { deleted: true, reason: 'already absent', result: 'deleted' };

  const shared = await otherTagsOf(client, call, digest);
  const sharedNote =
    shared === undefined
      ? ''
      : shared.length > 0
        ? `; the digest was shared by other tags (${shared.join(', ')}), which no longer resolve to it`
        : '';

  const path = `${ref.name}/manifests/${digest}`;
  let res = await client.request(call, 'DELETE', path, { maxBytes: LIMITS.errorBytes });
  let codes = errorCodes(res.body);
  if (codes.includes('GOOGLE_MANIFEST_DANGLING_TAG')) {
    // Artifact Registry keeps a tagged manifest: remove the tag first, then the digest.
    const untag = await client.request(call, 'DELETE', `${ref.name}/manifests/${ref.tag}`, {
      maxBytes: LIMITS.errorBytes,
    });
    if (!deleteDone(untag.status) && untag.status !== 404) {
      throw unexpectedAnswer(ref, untag.status);
    }
    res = await client.request(call, 'DELETE', path, { maxBytes: LIMITS.errorBytes });
    codes = errorCodes(res.body);
    if (codes.includes('GOOGLE_MANIFEST_DANGLING_TAG')) {
      const others = shared && shared.length > 0 ? ` (${shared.join(', ')})` : '';
      return {
        deleted: true,
        reason: `tag ${ref.tag} deleted; manifest ${digest} kept because other tags${others} still reference it`,
        result: 'deleted',
      };
    }
  }
  if (deleteDone(res.status))
    return { deleted: true, reason: `deleted manifest ${digest}${sharedNote}`, result: 'deleted' };
  if (res.status === 404) return { deleted: true, reason: 'already absent', result: 'deleted' };
  if (deleteUnsupported(res.status, codes)) {
    const code = codes.includes('UNSUPPORTED') ? ' UNSUPPORTED' : '';
    return {
      deleted: false,
      reason: `${ref.registry} does not support deleting manifests (answered ${res.status}${code})`,
      result: 'unsupported',
    };
  }
  throw unexpectedAnswer(ref, res.status);
}

/** Whether a registry's answer to a DELETE says it deleted (200, 202 or 204). */
export const deleteDone = (status: number): boolean => status === 200 || status === 202 || status === 204;

/** Whether a registry's answer to a manifest DELETE says it does not delete (405, 501, `UNSUPPORTED`). */
export const deleteUnsupported = (status: number, codes: readonly string[]): boolean =>
  status === 405 || status === 501 || codes.includes('UNSUPPORTED');

/**
 * The other tags of the repository that point at `digest`, when that is cheap to know (a
 * tags list of at most MAX_TAGS_CHECKED tags); undefined when unknown.
 */
async function otherTagsOf(
  client: RegistryClient,
  call: RegistryCall,
  digest: string,
): Promise<string[] | undefined> {
  try {
    const res = await client.request(call, 'GET', `${call.ref.name}/tags/list`, {
      maxBytes: LIMITS.tagsBytes,
    });
    if (res.status !== 200) return undefined;
    const tags = (JSON.parse(res.body.toString('utf8')) as { tags?: unknown }).tags;
    if (!Array.isArray(tags)) return [];
    const others = tags.filter(
      (t): t is string => typeof t === 'string' && t !== call.ref.tag && isValidTag(t),
    );
    if (others.length > MAX_TAGS_CHECKED || res.headers.link) return undefined;
    const shared: string[] = [];
    for (let i = 0; i < others.length; i += CHECK_CONCURRENCY) {
      const batch = others.slice(i, i + CHECK_CONCURRENCY);
      const heads = await Promise.all(batch.map((tag) => client.headManifest(call, tag)));
      heads.forEach((head, index) => {
        if (head.status === 200 && head.digest === digest) shared.push(batch[index] as string);
      });
    }
    return shared;
  } catch {
    return undefined;
  }
}
