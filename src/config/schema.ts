/**
 * ajv schemas generated from the option table (settings file) plus the git credential entry and
 * registry mapping rule shapes, compiled once, and a formatter that turns ajv errors into
 * problem texts that never echo a secret.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { REGISTRY_PATTERN } from '../rules/image-reference.js';
import { isPinnedHostKey } from './known-hosts.js';
import { OPTIONS, type OptionSpec, type ValueSchema } from './options.js';

const NON_EMPTY = { type: 'string', minLength: 1 } as const;
/** A host name or IP address (IPv6 in brackets): no scheme, user, port or path. */
const HOST = {
  type: 'string',
  pattern: '^(?:[^\\s/@:\\[\\]]+|\\[[0-9A-Fa-f:.]+\\])$',
  description: 'a host name or IP address, without scheme, user, port or path',
} as const;

export const GIT_CREDENTIAL_SCHEMA = {
  type: 'object',
  required: ['host', 'kind'],
  properties: {
    host: HOST,
    kind: { type: 'string', enum: ['https', 'ssh'] },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    username: NON_EMPTY,
    token: NON_EMPTY,
    privateKey: {
      type: 'string',
      pattern: '-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----',
      description: 'the text of a PEM/OpenSSH private key (not a path)',
    },
    pinnedHostKey: {
      type: 'string',
      format: 'known-hosts',
      description: 'known_hosts lines "[host] <type> <base64> [comment]"',
    },
  },
  additionalProperties: false,
  allOf: [
    {
      if: { type: 'object', properties: { kind: { const: 'https' } }, required: ['kind'] },
      then: { required: ['username', 'token'], properties: { privateKey: false, pinnedHostKey: false } },
    },
    {
      if: { type: 'object', properties: { kind: { const: 'ssh' } }, required: ['kind'] },
      then: { required: ['privateKey'], properties: { username: false, token: false } },
    },
  ],
} as const;

export const REGISTRY_MAPPING_RULE_SCHEMA = {
  type: 'object',
  required: ['registry'],
  properties: {
    registry: {
      type: 'string',
      pattern: REGISTRY_PATTERN,
      description: 'a registry host[:port], optionally followed by a namespace path (ghcr.io/org)',
    },
    hostMatch: HOST,
    pathPrefix: { type: 'string' },
  },
  additionalProperties: false,
} as const;

/** The schema of one option's value (a list option validates each item with the option's schema). */
export function valueSchema(option: OptionSpec): ValueSchema {
  return option.type === 'list' ? { type: 'array', items: option.schema } : option.schema;
}

/** The settings file: keys nested as in the option table's settings keys, nothing else allowed. */
export function settingsSchema(): Record<string, unknown> {
  const root: Record<string, unknown> = {
    type: 'object',
    properties: {
      gitCredentials: {
        type: 'object',
        properties: { entries: { type: 'array', items: GIT_CREDENTIAL_SCHEMA } },
        additionalProperties: false,
      },
      registryMapping: {
        type: 'object',
        properties: { rules: { type: 'array', items: REGISTRY_MAPPING_RULE_SCHEMA } },
        additionalProperties: false,
      },
      // Each configuration is checked by config/prebuilds.ts (problems name it by position and repository).
      prebuilds: {
        type: 'object',
        properties: { configurations: { type: 'array' } },
        additionalProperties: false,
      },
      // Each entry is checked by config/build-secrets.ts (problems name it by id, never by value).
      buildSecrets: {
        type: 'object',
        properties: { entries: { type: 'array' } },
        additionalProperties: false,
      },
      // Each subscription is checked by config/event-subscriptions.ts (never echoing a secret).
      events: {
        type: 'object',
        properties: { subscriptions: { type: 'array' } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  };
  for (const option of OPTIONS) {
    if (option.settingsKey === undefined) continue;
    const parts = option.settingsKey.split('.');
    let node = root;
    for (const [i, part] of parts.entries()) {
      const properties = node.properties as Record<string, Record<string, unknown>>;
      if (i === parts.length - 1) {
        properties[part] = { ...valueSchema(option) };
      } else {
        properties[part] ??= { type: 'object', properties: {}, additionalProperties: false };
        node = properties[part];
      }
    }
  }
  return root;
}

ajv.addFormat('known-hosts', isPinnedHostKey);

export const validateSettings: ValidateFunction = ajv.compile(settingsSchema());
export const validateGitCredentialsFile: ValidateFunction = ajv.compile({
  type: 'array',
  items: GIT_CREDENTIAL_SCHEMA,
});
export const validateRegistryMappingFile: ValidateFunction = ajv.compile({
  type: 'array',
  items: REGISTRY_MAPPING_RULE_SCHEMA,
});
export const optionValidators: ReadonlyMap<string, ValidateFunction> = new Map(
  OPTIONS.map((option) => [option.name, ajv.compile(valueSchema(option))]),
);

/** `/build/platforms/0` -> `build.platforms[0]`. */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  array: 'a list',
  object: 'a mapping (object)',
};

export interface FormatOptions {
  /** Prefix of every problem, e.g. `settings file /etc/s.yaml`. */
  readonly source: string;
  /** Whether the offending value may be shown for an error at this path. */
  readonly showValue: (path: string) => boolean;
}

/** ajv errors -> problem texts (one per error; `if` wrappers dropped). Values shown only when allowed. */
export function formatAjvErrors(errors: readonly ErrorObject[], options: FormatOptions): string[] {
  const problems: string[] = [];
  for (const error of errors) {
    const path = pointerToPath(error.instancePath);
    const at = path === '' ? '' : `${path}: `;
    const params = error.params as Record<string, unknown>;
    let text: string | undefined;
    let showValue = false;
    switch (error.keyword) {
      case 'if':
        text = undefined;
        break;
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        text = `unknown key "${path === '' ? key : `${path}.${key}`}"`;
        break;
      }
      case 'required':
        text = `${at}missing required key "${String(params.missingProperty)}"`;
        break;
      case 'type':
        text = `${at}must be ${TYPE_WORDS[String(params.type)] ?? String(params.type)}`;
        showValue = true;
        break;
      case 'enum':
        text = `${at}must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
        showValue = true;
        break;
      case 'minimum':
      case 'maximum':
        text = `${at}must be ${error.keyword === 'minimum' ? '>=' : '<='} ${String(params.limit)}`;
        showValue = true;
        break;
      case 'minLength':
        text = `${at}must not be empty`;
        break;
      case 'format':
      case 'pattern': {
        const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
        text = `${at}must be ${typeof description === 'string' ? description : `match ${String(params.pattern)}`}`;
        showValue = true;
        break;
      }
      case 'false schema':
        text = `${at}is not allowed for this kind of entry`;
        break;
      default:
        text = `${at}${error.message ?? 'is invalid'}`;
    }
    if (text === undefined) continue;
    if (showValue && options.showValue(path)) text += ` (got ${JSON.stringify(error.data)})`;
    problems.push(`${options.source}: ${text}`);
  }
  return problems;
}
