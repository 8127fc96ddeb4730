/**
 * A refresh pass resolves each base image and feature once, however many repositories name it: a
 * small fake registry counts the manifest HEADs of a pass over many prebuild plans that share one
 * base, and a new pass asks again.
 */
import test from 'ava';
import { tmpdir } from 'node:os';
import { RegistryClient } from '../../../../src/registry/client.js';
import { prebuildPlan } from '../../../../workers/prebuilds/plan.js';
import {
  digestsAgain,
  type PassResolutions,
  type ReferenceDigests,
} from '../../../../workers/prebuilds/reference-digests.js';
import { testConfig } from '../../../helpers/app.js';
import { fakeServer } from '../../../helpers/fake-registry.js';

const DIGEST = `sha256:${'1'.repeat(64)}`;

test('one HEAD per reference and pass, whatever the number of repositories', async (t) => {
  const fake = await fakeServer((req, res) => {
    res.writeHead(200, { 'docker-content-digest': DIGEST }).end();
  });
  t.teardown(() => fake.close());
  const config = testConfig({ scratchDir: tmpdir(), insecureRegistries: [fake.host] });
  const deps = { config, client: new RegistryClient({ insecureRegistries: [fake.host] }) };
  const before: ReferenceDigests = {
    baseImages: [{ ref: `${fake.host}/org/base:1`, digest: `sha256:${'0'.repeat(64)}` }],
    features: [{ ref: `${fake.host}/org/feature:1`, digest: `sha256:${'0'.repeat(64)}` }],
  };
  const heads = () => fake.requests.filter((r) => r.method === 'HEAD').map((r) => r.url);
  const pass = async (repositories: number) => {
    const resolutions: PassResolutions = new Map();
    const plans = Array.from({ length: repositories }, (_, i) =>
      prebuildPlan(
        {
          repository: `https://git.example.com/org/app-${i}.git`,
          branches: ['main'],
          image: { registry: fake.host, name: `org/app-${i}` },
          refreshOnBaseChange: true,
        },
        'main',
        config,
      ),
    );
    return Promise.all(plans.map((plan) => digestsAgain(plan, deps, before, resolutions)));
  };

  const read = await pass(50);
  t.is(read.length, 50);
  for (const digests of read)
    t.deepEqual(digests, {
      baseImages: [{ ref: before.baseImages[0]?.ref, digest: DIGEST }],
      features: [{ ref: before.features[0]?.ref, digest: DIGEST }],
    });
  t.deepEqual(heads().sort(), ['/v2/org/base/manifests/1', '/v2/org/feature/manifests/1']);
  await pass(50);
  t.is(heads().length, 4, 'a new pass resolves every reference again');
});
