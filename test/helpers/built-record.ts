/**
 * A synchronous build POSTed and its record read back as a user would: POST /build (200 expected,
 * else the test fails with the answer and its log), the build found in GET /builds by its log id,
 * then GET /builds/{id} checked against the API's BuildRecord schema.
 */
import type { ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import type { RunningApp } from './app.js';
import { fetchLog, postBuild } from './build-support.js';
import { loadOpenApi, schemaValidator } from './openapi.js';
import { listBuilds } from './replicas.js';

const recordSchema = schemaValidator(loadOpenApi())({ $ref: '#/components/schemas/BuildRecord' });

export interface BuiltRecord {
  readonly id: string;
  readonly record: BuildRecord;
  /** The build's img log. */
  readonly log: string;
}

export async function builtRecord(t: ExecutionContext, app: RunningApp, body: unknown): Promise<BuiltRecord> {
  const res = await postBuild(app, body);
  if (res.status !== 200) {
    t.fail(`${res.status} ${JSON.stringify(res.body)}\n${(await fetchLog(app, res.body.logId)).text}`);
  }
  const [listed] = (await listBuilds(app, 'status=success')).filter(
    (item) => item.imageBuildLogId === res.body.imageBuildLogId,
  );
  const id = listed?.id ?? 'none';
  const record = (await (await fetch(`${app.url}/builds/${id}`)).json()) as BuildRecord;
  t.true(recordSchema(record), JSON.stringify(recordSchema.errors));
  return { id, record, log: (await fetchLog(app, res.body.imageBuildLogId)).text };
}
