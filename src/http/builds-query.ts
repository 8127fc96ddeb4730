/** The filters of GET /builds (pure): an ajv schema compiled once; anything else is a 400. */
import type { ErrorObject, JSONSchemaType } from 'ajv';
import { ajv } from '../rules/ajv.js';
import type { BuildFilter, BuildStatusFilter } from '../builds/types.js';
import { serviceError } from '../errors/errors.js';
import { BUILD_STATUSES } from '../observability/metrics.js';
import { REQUEST_ID_PATTERN } from '../rules/limits.js';
import { MAX_REPOSITORY_FILTER_LENGTH } from '../rules/request-shapes.js';

const STATUS_VALUES: readonly BuildStatusFilter[] = ['running', 'queued', ...BUILD_STATUSES];

interface BuildsQuery {
  requestId?: string;
  repository?: string;
  status?: BuildStatusFilter;
}

const schema: JSONSchemaType<BuildsQuery> = {
  type: 'object',
  additionalProperties: false,
  properties: {
    requestId: { type: 'string', nullable: true, pattern: REQUEST_ID_PATTERN.source },
    repository: {
      type: 'string',
      nullable: true,
      minLength: 1,
      maxLength: MAX_REPOSITORY_FILTER_LENGTH,
      pattern: '^[^\\x00-\\x1f\\x7f]+$',
    },
    status: { type: 'string', nullable: true, enum: [...STATUS_VALUES] },
  },
};

const validate = ajv.compile(schema);

const FILTERS: readonly string[] = Object.keys(schema.properties as object);

function offending(errors: ErrorObject[] | null | undefined): string[] {
  const out = new Set<string>();
  for (const e of errors ?? []) {
    const field =
      e.keyword === 'additionalProperties'
        ? String((e.params as { additionalProperty?: unknown }).additionalProperty)
        : e.instancePath.replace(/^\//, '').split('/')[0];
    if (field) out.add(FILTERS.includes(field) ? field : 'other');
  }
  return [...out];
}

/** The filter of a GET /builds query (koa's parsed query: repeated parameters are arrays, hence refused). */
export function parseBuildsQuery(query: unknown): BuildFilter {
  if (!validate(query)) throw serviceError('INVALID_BUILD_FILTERS', { filters: offending(validate.errors) });
  return {
    ...(query.requestId === undefined ? {} : { requestId: query.requestId }),
    ...(query.repository === undefined ? {} : { repository: query.repository }),
    ...(query.status === undefined ? {} : { status: query.status }),
  };
}

/** The long poll's bounds, in seconds. */
export const WAIT_SECONDS = { min: 1, max: 60 } as const;

/** GET /builds/{id}'s only parameter: `wait`, whole seconds from 1 to 60; anything else is a 400. */
export function parseWait(query: Record<string, unknown>): number | undefined {
  const names = Object.keys(query);
  if (names.some((name) => name !== 'wait')) throw serviceError('INVALID_WAIT', WAIT_SECONDS);
  const value = query.wait;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,2}$/.test(value))
    throw serviceError('INVALID_WAIT', WAIT_SECONDS);
  const seconds = Number(value);
  if (seconds < WAIT_SECONDS.min || seconds > WAIT_SECONDS.max)
    throw serviceError('INVALID_WAIT', WAIT_SECONDS);
  return seconds;
}
