/**
 * Query parameters of GET/DELETE /image and GET /devcontainer: ajv schemas compiled once.
 * The grammar of registry/name/tag is checked afterwards by src/registry/reference.ts. Pure.
 */
import type { ErrorObject, JSONSchemaType } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { serviceError } from '../errors/errors.js';
import { PLATFORM_PARAM_PATTERN } from '../rules/image-reference.js';
import { NO_CONTROL_PATTERN } from '../rules/text-patterns.js';

const DEFAULT_PLATFORM = 'linux/amd64';

export interface ImageQuery {
  registry: string;
  name: string;
  tag: string;
}

export interface DevcontainerQuery extends ImageQuery {
  platform?: string;
}

const param = { type: 'string', minLength: 1, pattern: NO_CONTROL_PATTERN } as const;

const imageQuerySchema: JSONSchemaType<ImageQuery> = {
  type: 'object',
  required: ['registry', 'name', 'tag'],
  properties: { registry: param, name: param, tag: param },
};

const devcontainerQuerySchema: JSONSchemaType<DevcontainerQuery> = {
  type: 'object',
  required: ['registry', 'name', 'tag'],
  properties: {
    registry: param,
    name: param,
    tag: param,
    platform: { type: 'string', nullable: true, pattern: PLATFORM_PARAM_PATTERN },
  },
};

const validateImage = ajv.compile(imageQuerySchema);
const validateDevcontainer = ajv.compile(devcontainerQuerySchema);

function fieldsOf(errors: ErrorObject[] | null | undefined): string[] {
  const fields = new Set<string>();
  for (const e of errors ?? []) {
    const field =
      e.keyword === 'required'
        ? String((e.params as { missingProperty?: unknown }).missingProperty)
        : e.instancePath.replace(/^\//, '').split('/')[0];
    if (field) fields.add(field);
  }
  return [...fields];
}

function fail(errors: ErrorObject[] | null | undefined): never {
  throw serviceError('INVALID_QUERY', { parameters: fieldsOf(errors) });
}

export function parseImageQuery(query: unknown): ImageQuery {
  if (!validateImage(query)) fail(validateImage.errors);
  return { registry: query.registry, name: query.name, tag: query.tag };
}

export function parseDevcontainerQuery(query: unknown): Required<DevcontainerQuery> {
  if (!validateDevcontainer(query)) fail(validateDevcontainer.errors);
  return {
    registry: query.registry,
    name: query.name,
    tag: query.tag,
    platform: query.platform ?? DEFAULT_PLATFORM,
  };
}
