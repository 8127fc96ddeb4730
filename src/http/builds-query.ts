/** The filters and page of GET /builds (pure): an ajv schema compiled once; anything else is a 400. */
import type { ErrorObject, JSONSchemaType } from 'ajv';
import { ajv } from '../rules/ajv.js';
import { decodeCursor, PAGE_LIMIT } from '../builds/build-pages.js';
import type { BuildFilter, BuildStatusFilter, BuildTrigger } from '../builds/types.js';
import { BUILD_TRIGGERS } from '../rules/build-classes.js';
import { serviceError } from '../errors/errors.js';
import { BUILD_STATUSES } from '../observability/metrics.js';
import { REQUEST_ID_PATTERN } from '../rules/limits.js';
import { MAX_REPOSITORY_FILTER_LENGTH } from '../rules/request-shapes.js';

const STATUS_VALUES: readonly BuildStatusFilter[] = ['running', 'queued', ...BUILD_STATUSES];

interface BuildsQuery {
  requestId?: string;
  repository?: string;
  status?: BuildStatusFilter;
  branch?: string;
  trigger?: BuildTrigger;
  caller?: string;
  tenant?: string;
  limit?: string;
  after?: string;
}

/** A text filter: 1 to MAX_REPOSITORY_FILTER_LENGTH characters, no control character. */
const TEXT = {
  type: 'string',
  nullable: true,
  minLength: 1,
  maxLength: MAX_REPOSITORY_FILTER_LENGTH,
  pattern: '^[^\\x00-\\x1f\\x7f]+$',
} as const;

const schema: JSONSchemaType<BuildsQuery> = {
  type: 'object',
  additionalProperties: false,
  properties: {
    requestId: { type: 'string', nullable: true, pattern: REQUEST_ID_PATTERN.source },
    repository: TEXT,
    status: { type: 'string', nullable: true, enum: [...STATUS_VALUES] },
    branch: TEXT,
    trigger: { type: 'string', nullable: true, enum: [...BUILD_TRIGGERS] },
    caller: TEXT,
    tenant: TEXT,
    // Checked by parseBuildsPage (INVALID_BUILDS_PAGE).
    limit: { type: 'string', nullable: true },
    after: { type: 'string', nullable: true },
  },
};

const validate = ajv.compile(schema);

const FILTERS: readonly string[] = [
  'requestId',
  'repository',
  'status',
  'branch',
  'trigger',
  'caller',
  'tenant',
];

function offending(errors: ErrorObject[] | null | undefined): string[] {
  const out = new Set<string>();
  for (const e of errors ?? []) {
    const field =
      e.keyword === 'additionalProperties'
        ? String((e.params as { additionalProperty?: unknown }).additionalProperty)
        : e.instancePath.replace(/^\//, '').split('/')[0];
    if (field === 'limit' || field === 'after') out.add(field);
    else if (field) out.add(FILTERS.includes(field) ? field : 'other');
  }
  return [...out];
}

/** The filter of a GET /builds query (koa's parsed query: repeated parameters are arrays, hence refused). */
export function parseBuildsQuery(query: unknown): BuildFilter {
  if (!validate(query)) {
    const fields = offending(validate.errors);
    const filters = fields.filter((field) => field !== 'limit' && field !== 'after');
    if (filters.length === 0) throw serviceError('INVALID_BUILDS_PAGE', PAGE_LIMIT);
    throw serviceError('INVALID_BUILD_FILTERS', { filters });
  }
  const filter: Record<string, string> = {};
  for (const name of FILTERS) {
    const value = (query as Record<string, string | undefined>)[name];
    if (value !== undefined) filter[name] = value;
  }
  return filter as BuildFilter;
}

/** The page a GET /builds query asks for: `limit` (whole, PAGE_LIMIT.min..max) and `after` (a `next`). */
export function parseBuildsPage(query: Record<string, unknown>): { limit: number; after?: string } {
  const { limit, after } = query;
  let size: number = PAGE_LIMIT.default;
  if (limit !== undefined) {
    if (typeof limit !== 'string' || !/^[0-9]{1,3}$/.test(limit))
      throw serviceError('INVALID_BUILDS_PAGE', PAGE_LIMIT);
    size = Number(limit);
    if (size < PAGE_LIMIT.min || size > PAGE_LIMIT.max) throw serviceError('INVALID_BUILDS_PAGE', PAGE_LIMIT);
  }
  if (after === undefined) return { limit: size };
  if (typeof after !== 'string' || decodeCursor(after) === undefined)
    throw serviceError('INVALID_BUILDS_PAGE', PAGE_LIMIT);
  return { limit: size, after };
}

/** The long poll's bounds, in seconds. */
const WAIT_SECONDS = { min: 1, max: 60 } as const;

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
