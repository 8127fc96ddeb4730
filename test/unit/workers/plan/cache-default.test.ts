// The seam between configuration and plan for cache specs: a default the configuration accepts
// always plans a request that names no cache option, and a spec is accepted by configuration
// exactly when a request may carry it (both sides use src/rules/cache-spec.ts).
import test from 'ava';
import { loadConfig } from '../../../../src/config/load.js';
import { isServiceError } from '../../../../src/errors/errors.js';
import { planBuild } from '../../../../workers/plan/plan.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { baseEnv } = configScratch('ibs-cache-default-');
const REQUEST = { repository: 'https://git.example.com/o/app.git', image: { registry: 'r.example' } };

/** Every accepted form, with what the plan passes to buildx. */
const ACCEPTED: [spec: string, planned: string][] = [
  ['r.example:5000/cache/app:buildcache', 'type=registry,ref=r.example:5000/cache/app:buildcache'],
  ['type=registry,ref=r/c', 'type=registry,ref=r/c'],
  [
    'type=registry,ref=r/c,mode=max,oci-mediatypes=true',
    'type=registry,ref=r/c,mode=max,oci-mediatypes=true',
  ],
  ['ref=r/c,mode=max', 'type=registry,ref=r/c,mode=max'],
  ['mode=max,type=registry,ref=r/c', 'mode=max,type=registry,ref=r/c'],
  ['TYPE=registry,ref=r/c', 'TYPE=registry,ref=r/c'],
  ['type=gha', 'type=gha'],
  ['type=gha,scope=main', 'type=gha,scope=main'],
  ['type=inline', 'type=inline'],
];

/** Forms refused at startup, and by a request that carries them. */
const REFUSED = [
  'type=registry, ref=r/c',
  ' type=gha',
  'type=gha ',
  'type = gha',
  'type=local,dest=/tmp/c',
  'type=REGISTRY,ref=r/c',
  'type=registry,type=local',
  'type=',
  'a,b',
  'type=registry,novalue',
  '"type=local",ref=x',
  '=x',
];

const load = (flag: '--build-cache-from' | '--build-cache-to', spec: string) =>
  loadConfig({ argv: [flag, spec], env: baseEnv });
const plain = loadConfig({ argv: [], env: baseEnv });

for (const [spec, planned] of ACCEPTED) {
  test(`cache default ${JSON.stringify(spec)}: accepted at startup, plans ${planned}`, (t) => {
    const from = load('--build-cache-from', spec);
    t.is(planBuild(REQUEST, from).cacheFrom, planned);
    const to = load('--build-cache-to', spec);
    t.is(planBuild(REQUEST, to).cacheTo, planned);
    // The same text in a request plans the same way.
    t.is(planBuild({ ...REQUEST, buildOptions: { cacheTo: spec } }, to).cacheTo, planned);
  });
}

for (const spec of REFUSED) {
  test(`cache spec ${JSON.stringify(spec)}: refused at startup and in a request`, (t) => {
    t.throws(() => load('--build-cache-to', spec), { message: /--build-cache-to/ });
    const error = t.throws(() => planBuild({ ...REQUEST, buildOptions: { cacheFrom: spec } }, plain));
    t.true(isServiceError(error));
    t.is((error as { status?: number }).status, 400);
  });
}
