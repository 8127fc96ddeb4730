/**
 * The POST /build body: its JSON schema (docs/openapi.yaml, BuildRequest), compiled
 * once, and the typed request it yields (workers/plan/plan-types.ts). Pure. Unknown top-level fields are tolerated;
 * sub-objects are closed so a misspelt option (`buildOptions.nocache`) is a 400, not a
 * silently ignored setting. Every string that can reach a command, a file or a header
 * is refused when it carries control characters (CR, LF, NUL...); `repository` and
 * `branch` are checked by their own parsers, which answer more precise 400s.
 */
import type { JSONSchemaType } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { serviceError } from '../errors/errors.js';
import { BUILD_PLATFORM_PATTERN } from '../rules/image-reference.js';
import { NAME_PATTERN, REGISTRY_PATTERN, TAG_PATTERN } from '../rules/image-reference.js';
import { BUILDER_MODES, LAYER_COMPRESSIONS } from '../rules/limits.js';
import { BASIC_AUTH_USER_PATTERN, NO_CONTROL_PATTERN } from '../rules/text-patterns.js';
import type { BuildRequest } from '../../workers/plan/plan-types.js';

const nullableString = (pattern: string) =>
  ({ type: 'string', nullable: true, minLength: 1, pattern }) as const;
const requiredString = (pattern: string) => ({ type: 'string', minLength: 1, pattern }) as const;

const buildRequestSchema: JSONSchemaType<BuildRequest> = {
  type: 'object',
  required: ['repository'],
  additionalProperties: true,
  properties: {
    repository: { type: 'string', minLength: 1 },
    branch: { type: 'string', nullable: true, minLength: 1 },
    image: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: [],
      properties: {
        registry: nullableString(REGISTRY_PATTERN),
        name: nullableString(NAME_PATTERN),
        tag: nullableString(TAG_PATTERN),
      },
    },
    gitCredentials: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: ['username', 'token'],
      properties: {
        username: requiredString(BASIC_AUTH_USER_PATTERN),
        token: requiredString(NO_CONTROL_PATTERN),
      },
    },
    registryCredentials: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: ['registry', 'username', 'password'],
      properties: {
        registry: requiredString(REGISTRY_PATTERN),
        username: requiredString(BASIC_AUTH_USER_PATTERN),
        password: requiredString(NO_CONTROL_PATTERN),
      },
    },
    platforms: {
      type: 'array',
      nullable: true,
      items: { type: 'string', minLength: 1, pattern: BUILD_PLATFORM_PATTERN },
    },
    buildSecrets: { type: 'object', nullable: true, required: [] },
    buildOptions: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: [],
      properties: {
        noCache: { type: 'boolean', nullable: true },
        // Checked by the one cache spec parser (src/rules/cache-spec.ts) in the plan.
        cacheFrom: { type: 'string', nullable: true, minLength: 1 },
        cacheTo: { type: 'string', nullable: true, minLength: 1 },
        mode: { type: 'string', nullable: true, enum: [...BUILDER_MODES] },
        compression: { type: 'string', nullable: true, enum: [...LAYER_COMPRESSIONS] },
      },
    },
  },
};

const validate = ajv.compile(buildRequestSchema);

/** Returns the typed request, or throws the shape-check 400 (docs/errors.md) (`missing or invalid fields: ...`). */
export function parseBuildRequest(body: unknown): BuildRequest {
  if (validate(body)) return body;
  const err = serviceError('INVALID_FIELDS');
  // For the service's own log only (never in the response): where the shape check failed.
  Object.assign(err.details, {
    cause: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim()),
  });
  throw err;
}
