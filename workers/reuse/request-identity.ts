/**
 * What makes two build requests the same (pure), told once: the fields of a request, and the two
 * digests over them. The identity (following an identical build) takes them all and the
 * credentials as a digest; the shape (answered commits, docs/reuse.md) takes them but `noCache` and
 * the credentials, plus the fallback definition. Build secrets enter by id and keyed identity
 * (docs/secrets.md); each digest is itself a digest: nothing secret is kept.
 */
import { createHash } from 'node:crypto';
import type { BuildPlan } from '../plan/plan-types.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The fields of a request both digests read, each once. */
function requestFields(plan: BuildPlan) {
  return {
    /** Repository, branch, target and platforms. */
    target: [
      plan.url.cloneUrl,
      plan.branch ?? null,
      plan.image.registry,
      plan.image.name,
      plan.image.tag ?? null,
      plan.platforms,
    ],
    noCache: plan.noCache,
    /** The cache options and the builder mode. */
    cache: [plan.cacheFrom ?? null, plan.cacheTo ?? null, plan.mode],
    secretIds: plan.buildSecrets.map((secret) => secret.id),
    secretsIdentity: plan.secretsIdentity,
    compression: plan.compression,
    credentials: sha256(JSON.stringify([plan.gitCredential ?? null, plan.registryCredentials ?? null])),
  };
}

/** The identity of a request for following: the same identity, the same build. */
export function requestIdentity(plan: BuildPlan): string {
  const fields = requestFields(plan);
  return sha256(
    JSON.stringify([
      ...fields.target,
      fields.noCache,
      ...fields.cache,
      fields.credentials,
      fields.secretIds,
      // Written only when set (and compression but gzip), so the other requests keep their identity.
      ...(fields.secretsIdentity === undefined ? [] : [fields.secretsIdentity]),
      ...(fields.compression === 'gzip' ? [] : [['compression', fields.compression]]),
    ]),
  );
}

/**
 * The shape of a request: what, with the commit, decides its answer. Never the credentials: the
 * `ls-remote` and the registry calls of the memo use the request's own, so a caller is answered
 * only what it may read.
 */
export function requestShape(plan: BuildPlan, fallbackImage: string | undefined): string {
  const fields = requestFields(plan);
  return sha256(
    JSON.stringify([
      'ibs-request-shape-v1',
      ...fields.target,
      ...fields.cache,
      fields.secretIds,
      fields.secretsIdentity ?? null,
      fallbackImage ?? null,
      fields.compression,
    ]),
  );
}
