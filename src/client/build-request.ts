/**
 * The `POST /build` body of `ibs build`'s arguments and environment credentials (pure), and the
 * checks ibs makes itself before sending anything (exit 2).
 */
import { UsageError, type Values } from './args.js';
import type { Credentials } from './env.js';
import { REQUEST_ID_CHARACTERS, REQUEST_ID_MAX_LENGTH, REQUEST_ID_PATTERN } from '../rules/limits.js';

const text = (value: Values[string]): string | undefined => (typeof value === 'string' ? value : undefined);

export function buildBody(values: Values, credentials: Credentials): Record<string, unknown> {
  const repository = text(values.repository);
  if (repository === undefined || repository === '') throw new UsageError('ibs build needs --repository');
  const image = { registry: text(values.registry), name: text(values.name), tag: text(values.tag) };
  const buildOptions = {
    ...(values['no-cache'] === true ? { noCache: true } : {}),
    ...(text(values['cache-from']) === undefined ? {} : { cacheFrom: text(values['cache-from']) }),
    ...(text(values['cache-to']) === undefined ? {} : { cacheTo: text(values['cache-to']) }),
  };
  const platforms = Array.isArray(values.platform) ? values.platform : [];
  return {
    repository,
    ...(text(values.branch) === undefined ? {} : { branch: text(values.branch) }),
    ...(Object.values(image).some((v) => v !== undefined) ? { image } : {}),
    ...(platforms.length > 0 ? { platforms } : {}),
    ...(Object.keys(buildOptions).length > 0 ? { buildOptions } : {}),
    ...(credentials.git ? { gitCredentials: credentials.git } : {}),
    ...(credentials.registry ? { registryCredentials: credentials.registry } : {}),
  };
}

export function timeoutSeconds(value: Values[string]): number {
  const raw = text(value) ?? '3600';
  if (!/^\d+$/.test(raw) || Number(raw) === 0)
    throw new UsageError(`--timeout: a whole number of seconds > 0, not "${raw}"`);
  return Number(raw);
}

export function requestIdOf(value: Values[string], fresh: () => string): string {
  const id = text(value) ?? fresh();
  if (!REQUEST_ID_PATTERN.test(id))
    throw new UsageError(
      `--request-id: 1 to ${REQUEST_ID_MAX_LENGTH} of ${REQUEST_ID_CHARACTERS}, not "${id}"`,
    );
  return id;
}

export function serverUrl(value: Values[string]): URL {
  const raw = text(value);
  if (raw === undefined || raw === '') throw new UsageError('no server: give --server URL or set IBS_SERVER');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--server: not a URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError('--server: http:// or https:// only');
  if (url.username || url.password) throw new UsageError('--server: no credentials in the URL');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
