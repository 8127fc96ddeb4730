/**
 * The identity of the secrets a build is offered (docs/secrets.md, The builder's cache): an
 * HMAC-SHA256, under the service's identity key, of each secret's id and value. It enters the cache
 * key of every RUN step (a build argument, docker-wrapper.ts), so a layer built with a secret is
 * answered only to builds offered the same one. Keyed, so that it never reveals a value.
 */
import { createHmac } from 'node:crypto';
import type { BuildSecret } from '../../src/rules/build-secret-rules.js';
import type { BuildPlan } from '../plan/plan-types.js';

/** The hex digest of `secrets` (any order: sorted by id here); undefined when there are none. */
export function secretsIdentity(key: Buffer, secrets: readonly BuildSecret[]): string | undefined {
  if (secrets.length === 0) return undefined;
  const sorted = [...secrets].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // JSON: an unambiguous encoding of the (id, value) pairs.
  const canonical = JSON.stringify(sorted.map((secret) => [secret.id, secret.value]));
  return createHmac('sha256', key).update(canonical).digest('hex');
}

/** `plan` with its secrets' identity (the same plan when it offers none, or already has it). */
export async function withSecretsIdentity(plan: BuildPlan, key: () => Promise<Buffer>): Promise<BuildPlan> {
  if (plan.buildSecrets.length === 0 || plan.secretsIdentity !== undefined) return plan;
  const identity = secretsIdentity(await key(), plan.buildSecrets);
  return identity === undefined ? plan : { ...plan, secretsIdentity: identity };
}
