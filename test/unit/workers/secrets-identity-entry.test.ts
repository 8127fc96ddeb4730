/**
 * Every way into the build worker (a synchronous POST /build and an async one, which prebuilds
 * use too) hands the build a plan keyed by its secrets' identity (docs/secrets.md, The builder's
 * cache), before admission: the same secrets give the same identity, another value another one.
 */
import test from 'ava';
import type { BuildPlan } from '../../../workers/plan/plan-types.js';
import { startApp } from '../../helpers/app.js';
import { REPO, RESULT } from '../../helpers/fake-build.js';

const CANARY = 'npm_canary-3c1d9e';

test('sync and async builds are both keyed by the secrets offered, never by a plain value', async (t) => {
  const calls: BuildPlan[] = [];
  const app = await startApp(
    {},
    {
      app: {
        build: {
          runJob: (plan) => {
            calls.push(plan);
            return Promise.resolve(RESULT);
          },
        },
      },
    },
  );
  t.teardown(app.close);
  const post = async (buildSecrets: Record<string, string> | undefined, async: boolean): Promise<void> => {
    const res = await fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(async ? { Prefer: 'respond-async' } : {}) },
      body: JSON.stringify({
        repository: REPO,
        image: { registry: 'registry.example.com' },
        ...(buildSecrets === undefined ? {} : { buildSecrets }),
      }),
    });
    t.is(res.status, async ? 202 : 200);
    if (async) {
      const { id } = (await res.json()) as { id: string };
      const record = (await (await fetch(`${app.url}/builds/${id}?wait=30`)).json()) as { answer?: unknown };
      t.deepEqual(record.answer, { status: 200, body: RESULT });
    }
  };

  await post({ npmrc: CANARY }, false);
  await post({ npmrc: CANARY }, true);
  await post({ npmrc: `${CANARY}-rotated` }, true);
  await post(undefined, true);

  t.is(calls.length, 4);
  const [syncKeyed, asyncKeyed, rotated, none] = calls.map((plan) => plan.secretsIdentity);
  t.regex(syncKeyed ?? '', /^[0-9a-f]{64}$/);
  t.is(asyncKeyed, syncKeyed, 'the same secret gives the same identity on either entry');
  t.regex(rotated ?? '', /^[0-9a-f]{64}$/);
  t.not(rotated, syncKeyed, 'a new value gives another identity');
  t.is(none, undefined, 'a build offered no secret is not keyed');
  t.false(JSON.stringify([syncKeyed, rotated]).includes(CANARY));
});
