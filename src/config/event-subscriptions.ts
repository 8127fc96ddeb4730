/**
 * The event subscriptions (docs/events.md): `{name, url, secrets, types?, repositories?, statuses?}`
 * from the subscriptions file or the settings file's `events.subscriptions`, checked at startup. A
 * problem names the entry by its name and never echoes a secret.
 */
import {
  EVENT_STATUSES,
  isKnownType,
  MAX_SECRET_BYTES,
  MIN_SECRET_BYTES,
  SUBSCRIPTION_NAME,
  WEBHOOK_SECRET,
  type EventStatus,
} from '../rules/event-types.js';
import { scopeProblems } from './build-secrets.js';
import type { EventSubscription } from './types.js';

const KEYS = new Set(['name', 'url', 'secrets', 'types', 'repositories', 'statuses']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function urlProblems(url: unknown): string[] {
  if (typeof url !== 'string') return ['url must be an http:// or https:// URL'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['url must be an http:// or https:// URL'];
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return ['url must be an http:// or https:// URL'];
  if (parsed.username !== '' || parsed.password !== '') return ['url must not hold credentials'];
  return [];
}

function secretProblems(secrets: unknown): string[] {
  if (!Array.isArray(secrets) || secrets.length === 0)
    return ['secrets must be a list of one or more whsec_...'];
  return secrets.flatMap((secret: unknown, index) => {
    const match = typeof secret === 'string' ? WEBHOOK_SECRET.exec(secret) : null;
    const bytes = match === null ? 0 : Buffer.from(match[1] ?? '', 'base64').length;
    return bytes >= MIN_SECRET_BYTES && bytes <= MAX_SECRET_BYTES
      ? []
      : [
          `secrets[${index}] is malformed: whsec_ and the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`,
        ];
  });
}

function listProblems(key: string, what: string, value: unknown, known: (item: string) => boolean): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0) return [`${key} must be a non-empty list`];
  return value.flatMap((item: unknown) =>
    typeof item === 'string' && known(item) ? [] : [`${key}: unknown ${what} ${JSON.stringify(item)}`],
  );
}

function entryProblems(raw: Record<string, unknown>): string[] {
  const problems = Object.keys(raw)
    .filter((key) => !KEYS.has(key))
    .map((key) => `unknown key "${key}"`);
  problems.push(...urlProblems(raw.url), ...secretProblems(raw.secrets));
  problems.push(...listProblems('types', 'type', raw.types, isKnownType));
  problems.push(
    ...listProblems('statuses', 'status', raw.statuses, (s) =>
      (EVENT_STATUSES as readonly string[]).includes(s),
    ),
  );
  if (raw.repositories !== undefined) problems.push(...scopeProblems(raw.repositories));
  return problems;
}

function entryOf(raw: Record<string, unknown>): EventSubscription {
  return {
    name: String(raw.name),
    url: String(raw.url),
    secrets: (raw.secrets as string[]).map(String),
    ...(raw.types === undefined ? {} : { types: (raw.types as string[]).map(String) }),
    ...(raw.statuses === undefined ? {} : { statuses: raw.statuses as EventStatus[] }),
    ...(raw.repositories === undefined
      ? {}
      : {
          repositories: (raw.repositories as Record<string, unknown>[]).map((scope) => ({
            host: String(scope.host),
            ...(typeof scope.pathPrefix === 'string' ? { pathPrefix: scope.pathPrefix } : {}),
          })),
        }),
  };
}

/** The subscriptions of `raw` (a list), every problem pushed to `problems` prefixed by `source`. */
export function eventSubscriptions(raw: unknown, source: string, problems: string[]): EventSubscription[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(`${source}: must be a list of {name, url, secrets, types?, repositories?, statuses?}`);
    return [];
  }
  const names = new Set<string>();
  return raw.flatMap((entry: unknown, index): EventSubscription[] => {
    if (!isObject(entry)) {
      problems.push(`${source}: subscription ${index + 1} must be a mapping {name, url, secrets, ...}`);
      return [];
    }
    const validName = typeof entry.name === 'string' && SUBSCRIPTION_NAME.test(entry.name);
    const label = validName ? `subscription "${String(entry.name)}"` : `subscription ${index + 1}`;
    const found = entryProblems(entry);
    if (!validName) found.push('name must be lower-case letters, digits, ".", "_" or "-" (at most 63)');
    else if (names.has(String(entry.name))) found.push('name is used twice');
    if (validName) names.add(String(entry.name));
    problems.push(...found.map((problem) => `${source}: ${label}: ${problem}`));
    return found.length === 0 ? [entryOf(entry)] : [];
  });
}
