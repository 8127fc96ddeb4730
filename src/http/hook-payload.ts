/**
 * A signed webhook delivery read into what the prebuilds take: its event (push, ping, or another)
 * and, for a push, the ref, the two commits and the repository's URLs. Everything else in the
 * payload is ignored; a missing or malformed field is a 400 naming it, and nothing is built.
 */
import { serviceError } from '../errors/errors.js';
import type { PushEvent } from '../prebuilds/types.js';
import { FORGES, type Forge } from '../rules/forges.js';
import { GIT_OBJECT_ID_PATTERN } from '../rules/text-patterns.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const COMMIT = new RegExp(GIT_OBJECT_ID_PATTERN);
const REF = /^refs\/[^\s\0]{1,1024}$/;
const MAX_URL = 2048;

export type HookDelivery = { readonly kind: 'ping' } | { readonly kind: 'push'; readonly event: PushEvent };

/** The value of the first of `names` the delivery has. */
const firstHeader = (
  names: readonly string[],
  header: (name: string) => string | undefined,
): string | undefined => names.map(header).find((value) => value !== undefined);

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

function repositoryUrls(forge: Forge, json: Json): string[] {
  const { object, fields } = FORGES[forge].repository;
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
  const facts = FORGES[forge];
  const event = firstHeader(facts.eventHeaders, header) ?? '';
  if (event === facts.events.ping) return { kind: 'ping' };
  if (event !== facts.events.push) throw serviceError('HOOK_EVENT_UNSUPPORTED', { forge, event });
  const json = parseBody(body);
  const deliveryId = firstHeader(facts.deliveryHeaders, header);
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
