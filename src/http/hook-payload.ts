/**
 * A signed webhook delivery read into what the prebuilds take: its event (push, ping, or another)
 * and, for a push, the ref, the two commits and the repository's URLs. Everything else in the
 * payload is ignored; a missing or malformed field is a 400 naming it, and nothing is built.
 */
import { serviceError } from '../errors/errors.js';
import type { Forge, PushEvent } from '../prebuilds/types.js';
import { GIT_OBJECT_ID_PATTERN } from '../rules/text-patterns.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const COMMIT = new RegExp(GIT_OBJECT_ID_PATTERN);
const REF = /^refs\/[^\s\0]{1,1024}$/;
const MAX_URL = 2048;

export type HookDelivery = { readonly kind: 'ping' } | { readonly kind: 'push'; readonly event: PushEvent };

/** The event name the forge sends in its header. */
function eventOf(forge: Forge, header: (name: string) => string | undefined): string {
  const name = forge === 'gitlab' ? 'x-gitlab-event' : forge === 'gitea' ? 'x-gitea-event' : 'x-github-event';
  return header(name) ?? header('x-github-event') ?? '';
}

function parseBody(body: Buffer): Json {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw serviceError('INVALID_JSON');
  }
  if (!isObject(json)) throw serviceError('INVALID_JSON');
  return json;
}

const URL_FIELDS: Readonly<Record<Forge, { readonly object: string; readonly fields: readonly string[] }>> = {
  github: { object: 'repository', fields: ['clone_url', 'ssh_url', 'html_url', 'git_url'] },
  gitea: { object: 'repository', fields: ['clone_url', 'ssh_url', 'html_url'] },
  gitlab: { object: 'project', fields: ['git_http_url', 'git_ssh_url', 'web_url'] },
};

function repositoryUrls(forge: Forge, json: Json): string[] {
  const { object, fields } = URL_FIELDS[forge];
  const repo = json[object];
  if (!isObject(repo)) throw serviceError('INVALID_HOOK_PAYLOAD', { forge, field: object });
  const urls = fields
    .map((field) => repo[field])
    .filter((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_URL);
  if (urls.length === 0)
    throw serviceError('INVALID_HOOK_PAYLOAD', { forge, field: `${object}.${fields[0] ?? 'url'}` });
  return urls;
}

function field(forge: Forge, json: Json, name: string, pattern: RegExp): string {
  const value = json[name];
  if (typeof value !== 'string' || !pattern.test(value))
    throw serviceError('INVALID_HOOK_PAYLOAD', { forge, field: name });
  return value;
}

/** The delivery of a signed body: a ping, or a push; any other event or a bad payload is a 400. */
export function readHookDelivery(
  forge: Forge,
  body: Buffer,
  header: (name: string) => string | undefined,
): HookDelivery {
  const event = eventOf(forge, header);
  if (event === 'ping') return { kind: 'ping' };
  if (event !== (forge === 'gitlab' ? 'Push Hook' : 'push'))
    throw serviceError('HOOK_EVENT_UNSUPPORTED', { forge, event });
  const json = parseBody(body);
  const deliveryId =
    header('x-github-delivery') ?? header('x-gitea-delivery') ?? header('x-gitlab-event-uuid');
  return {
    kind: 'push',
    event: {
      forge,
      ...(deliveryId === undefined ? {} : { deliveryId: deliveryId.slice(0, 128) }),
      repositoryUrls: repositoryUrls(forge, json),
      ref: field(forge, json, 'ref', REF),
      before: field(forge, json, 'before', COMMIT),
      after: field(forge, json, 'after', COMMIT),
    },
  };
}
