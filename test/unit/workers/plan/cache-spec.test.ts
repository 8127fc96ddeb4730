import test from 'ava';
import { normaliseCacheSpec } from '../../../../workers/plan/plan.js';

const normalised: [string, string][] = [
  ['127.0.0.1:5000/cache/x:buildcache', 'type=registry,ref=127.0.0.1:5000/cache/x:buildcache'],
  ['type=registry,ref=r/x:c,mode=max', 'type=registry,ref=r/x:c,mode=max'],
  ['ref=r/x:c,mode=max', 'type=registry,ref=r/x:c,mode=max'],
  ['type=gha', 'type=gha'],
  ['type=inline', 'type=inline'],
  ['mode=max,type=registry,ref=r/x', 'mode=max,type=registry,ref=r/x'],
];

for (const [spec, want] of normalised) {
  test(`cache spec ${spec}`, (t) => {
    t.is(normaliseCacheSpec('cacheTo', spec), want);
    t.is(normaliseCacheSpec('cacheFrom', spec), want);
  });
}

const refusedType: [string, string][] = [
  ['type=local,dest=/etc', 'local'],
  ['type=s3,bucket=x', 's3'],
  ['type=,ref=x', ''],
  ['type=REGISTRY,ref=x', 'REGISTRY'],
  ['ref=x,TYPE=local', 'local'],
];

for (const [spec, type] of refusedType) {
  test(`cache type refused: ${spec}`, (t) => {
    for (const field of ['cacheFrom', 'cacheTo'] as const) {
      const err = t.throws(() => normaliseCacheSpec(field, spec));
      t.is((err as { code?: string }).code, 'CACHE_TYPE_NOT_ALLOWED');
      t.is(
        err?.message,
        `buildOptions.${field}: cache type "${type}" is not allowed (allowed: registry, gha, inline)`,
      );
    }
  });
}

for (const spec of [
  'type=registry,type=local',
  'a,b',
  'type=registry,novalue',
  '"type=local",ref=x',
  'type=gha, x=y',
  '',
]) {
  test(`malformed cache spec refused: ${JSON.stringify(spec)}`, (t) => {
    const err = t.throws(() => normaliseCacheSpec('cacheTo', spec));
    t.is((err as { status?: number }).status, 400);
  });
}
