/**
 * The server's build secrets (docs/secrets.md): entries `{id, value | file, repositories}` from
 * the build secrets file or the settings file's `buildSecrets.entries`, each checked here and
 * its `file` read once, at startup. A problem names the entry by its id (or its position when the
 * id itself is wrong), never by its value; an entry without a scope is refused.
 */
import { isAbsolute } from 'node:path';
import {
  BUILD_SECRET_ID_RULE,
  type BuildSecretScope,
  buildSecretTooLarge,
  isBuildSecretId,
  MAX_BUILD_SECRET_BYTES,
  type ServerBuildSecret,
} from '../rules/build-secret-rules.js';
import { readText } from './files.js';

const ENTRY_KEYS = new Set(['id', 'value', 'file', 'repositories']);
const SCOPE_KEYS = new Set(['host', 'pathPrefix']);
/** A host name or IP address: no scheme, user, port or path (the URL's host name is compared). */
const HOST = /^(?:[^\s/@:[\]]+|\[[0-9A-Fa-f:.]+\])$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const unknownKeys = (object: Record<string, unknown>, allowed: ReadonlySet<string>): string[] =>
  Object.keys(object).filter((key) => !allowed.has(key));

export function scopeProblems(scopes: unknown): string[] {
  const refused =
    'no repositories: an entry open to every repository is refused (any Dockerfile could copy it into' +
    ' its image); give repositories: [{host, pathPrefix?}]';
  if (scopes === undefined || (Array.isArray(scopes) && scopes.length === 0)) return [refused];
  if (!Array.isArray(scopes)) return ['repositories must be a list of {host, pathPrefix?}'];
  return scopes.flatMap((scope: unknown, index): string[] => {
    const at = `repositories[${index}]`;
    if (!isObject(scope)) return [`${at} must be a mapping {host, pathPrefix?}`];
    const problems = unknownKeys(scope, SCOPE_KEYS).map((key) => `${at}: unknown key "${key}"`);
    if (typeof scope.host !== 'string' || !HOST.test(scope.host))
      problems.push(`${at}.host must be a host name or IP address, without scheme, user, port or path`);
    const prefix = scope.pathPrefix;
    if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '' || prefix.startsWith('/')))
      problems.push(`${at}.pathPrefix must be a non-empty path prefix without a leading "/"`);
    return problems;
  });
}

/** The entry's value (from `value` or its `file`), or the problem; never echoes the value. */
function entryValue(entry: Record<string, unknown>): { value: string } | { problem: string } {
  const { value, file } = entry;
  if ((value === undefined) === (file === undefined))
    return { problem: 'give exactly one of value and file' };
  let text: string;
  if (file !== undefined) {
    if (typeof file !== 'string' || !isAbsolute(file)) return { problem: 'file must be an absolute path' };
    const read = readText(file);
    if (!read.ok) return { problem: `file ${file} ${read.why}` };
    text = read.text;
  } else {
    if (typeof value !== 'string') return { problem: 'value must be a string' };
    text = value;
  }
  if (buildSecretTooLarge(text))
    return { problem: `the value is larger than ${MAX_BUILD_SECRET_BYTES} bytes` };
  return { value: text };
}

function entryOf(
  raw: unknown,
  index: number,
  problems: string[],
  source: string,
): ServerBuildSecret | undefined {
  if (!isObject(raw)) {
    problems.push(`${source}: entry ${index + 1} must be a mapping {id, value | file, repositories}`);
    return undefined;
  }
  const id = raw.id;
  const validId = typeof id === 'string' && isBuildSecretId(id);
  const name = validId ? `entry "${id}"` : `entry ${index + 1}`;
  const found: string[] = unknownKeys(raw, ENTRY_KEYS).map((key) => `unknown key "${key}"`);
  if (!validId) found.push(`id must be ${BUILD_SECRET_ID_RULE}`);
  const value = entryValue(raw);
  if ('problem' in value) found.push(value.problem);
  found.push(...scopeProblems(raw.repositories));
  problems.push(...found.map((problem) => `${source}: ${name}: ${problem}`));
  if (found.length > 0 || !('value' in value)) return undefined;
  const repositories = (raw.repositories as Record<string, unknown>[]).map((scope): BuildSecretScope => ({
    host: String(scope.host),
    ...(typeof scope.pathPrefix === 'string' ? { pathPrefix: scope.pathPrefix } : {}),
  }));
  return { id: String(id), value: value.value, repositories };
}

/** The entries of `raw` (a list), every problem pushed to `problems` prefixed by `source`. */
export function buildSecretEntries(raw: unknown, source: string, problems: string[]): ServerBuildSecret[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(`${source}: must be a list of {id, value | file, repositories} entries`);
    return [];
  }
  return raw.flatMap((entry: unknown, i) => entryOf(entry, i, problems, source) ?? []);
}
