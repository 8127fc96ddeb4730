/**
 * The identity of a build request for following (pure): two requests with the same repository,
 * branch, target, platforms, build options, credentials and build secrets are the same request.
 * Credentials enter only as a digest, build secrets by id and keyed identity (docs/secrets.md), and
 * the identity itself is a digest: nothing secret is kept.
 */
import { createHash } from 'node:crypto';
import type { BuildPlan } from '../plan/plan-types.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function requestIdentity(plan: BuildPlan): string {
  const credentials = sha256(JSON.stringify([plan.gitCredential ?? null, plan.registryCredentials ?? null]));
  return sha256(
    JSON.stringify([
      plan.url.cloneUrl,
      plan.branch ?? null,
      plan.image.registry,
      plan.image.name,
      plan.image.tag ?? null,
      plan.platforms,
      plan.noCache,
      plan.cacheFrom ?? null,
      plan.cacheTo ?? null,
      plan.mode,
      credentials,
      plan.buildSecrets.map((secret) => secret.id),
      ...(plan.secretsIdentity === undefined ? [] : [plan.secretsIdentity]),
      ...(plan.compression === 'gzip' ? [] : [['compression', plan.compression]]),
    ]),
  );
}
