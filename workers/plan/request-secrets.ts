/**
 * The request's `buildSecrets` (`{"<id>": "<value>"}`) checked against the rules of
 * src/rules/build-secret-rules.ts, each failure its own 400 (src/errors/errors.ts) naming the id, never the
 * value. Pure: runs in the plan, before anything is cloned.
 */
import {
  type BuildSecret,
  buildSecretTooLarge as isTooLarge,
  isBuildSecretId,
  MAX_BUILD_SECRETS,
} from '../../src/rules/build-secret-rules.js';
import { serviceError } from '../../src/errors/errors.js';

export function requestSecrets(given: Readonly<Record<string, unknown>> | null | undefined): BuildSecret[] {
  if (given === undefined || given === null) return [];
  const entries = Object.entries(given);
  if (entries.length > MAX_BUILD_SECRETS)
    throw serviceError('TOO_MANY_BUILD_SECRETS', { count: entries.length });
  return entries.map(([id, value]) => {
    if (!isBuildSecretId(id)) throw serviceError('INVALID_BUILD_SECRET_ID', { id });
    if (typeof value !== 'string') throw serviceError('BUILD_SECRET_NOT_STRING', { id });
    if (isTooLarge(value)) throw serviceError('BUILD_SECRET_TOO_LARGE', { id });
    return { id, value };
  });
}
