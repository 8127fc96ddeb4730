import test from 'ava';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import { withSecretsIdentity } from '../../../../workers/builder/secret-identity.js';
import { requestIdentity } from '../../../../workers/reuse/request-identity.js';
import { PLAN } from '../../../helpers/fake-build.js';

const plan = PLAN;
const key = async (): Promise<Buffer> => Buffer.alloc(32, 1);
const offered = (value: string): BuildPlan => ({
  ...plan,
  buildSecrets: [{ id: 'npmrc', value }],
  secrets: [value],
});

test('requests offered other values of a secret are not the same request; the same value is', async (t) => {
  const [a, b, again] = await Promise.all([
    withSecretsIdentity(offered('token-a'), key),
    withSecretsIdentity(offered('token-b'), key),
    withSecretsIdentity(offered('token-a'), key),
  ]);
  t.not(requestIdentity(a), requestIdentity(b));
  t.is(requestIdentity(a), requestIdentity(again));
});

test('a plan offered no secret is left as it is', async (t) => {
  t.is(await withSecretsIdentity(plan, key), plan);
});
