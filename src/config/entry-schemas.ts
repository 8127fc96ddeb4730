/**
 * The shapes of a git credential entry and a registry mapping rule, for ajv: the side files and
 * the settings file check their lists with them. Pure.
 */
import { ajv } from '../rules/ajv.js';
import { REGISTRY_PATTERN } from '../rules/image-reference.js';
import { isPinnedHostKey } from './known-hosts.js';

ajv.addFormat('known-hosts', isPinnedHostKey);

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

export const TENANT_QUOTA_SCHEMA = {
  type: 'object',
  required: ['tenant'],
  properties: {
    tenant: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\s]+$',
      description: 'a tenant glob',
    },
    maxRunning: { type: 'integer', minimum: 1 },
    maxQueued: { type: 'integer', minimum: 0 },
    monthlyBuildMinutes: { type: 'number', minimum: 0 },
    warnAtPercent: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
  },
  additionalProperties: false,
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
