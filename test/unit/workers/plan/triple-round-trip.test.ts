// Every triple POST /build can answer (registry from the request or a mapping rule, with or
// without a namespace path; given or derived name; given or derived tag) is accepted as is by
// the registry endpoints' reference parser, which names the same image.
import test from 'ava';
import { parseReference } from '../../../../src/registry/reference.js';
import { planBuild } from '../../../../workers/plan/plan.js';
import { testConfig } from '../../../helpers/app.js';

const REGISTRIES = [
  'r.example',
  'r.example:5000',
  'localhost:5000/team',
  'ghcr.io/org/sub-team',
  '127.0.0.1:5000/a.b/c__d',
  '[::1]:5000/ns',
  'docker.io/myorg',
  'docker.io',
  'Registry.Example.com/org',
];
const IMAGES: { name?: string; tag?: string }[] = [
  {},
  { name: 'app' },
  { name: 'dev/app', tag: 'v1.2_3-x' },
  { tag: '_'.padEnd(128, 'x') },
];
const REPOSITORY = 'https://git.example.com/org/My_Repo.git';
const COMMIT_TAG = 'sha-0123abc';

for (const registry of REGISTRIES) {
  test(`the triples POST /build answers for registry ${registry} are accepted by the registry endpoints`, (t) => {
    const fromRule = testConfig({ scratchDir: '/nonexistent', registryMappingRules: [{ registry }] });
    for (const image of IMAGES) {
      for (const [body, config] of [
        [
          { repository: REPOSITORY, image: { ...image, registry } },
          testConfig({ scratchDir: '/nonexistent' }),
        ],
        [{ repository: REPOSITORY, image }, fromRule],
      ] as const) {
        const plan = planBuild(body, config);
        const tag = plan.image.tag ?? COMMIT_TAG;
        const answered = `${plan.image.registry}/${plan.image.name}:${tag}`;
        const ref = parseReference({ registry: plan.image.registry, name: plan.image.name, tag }, []);
        t.is(ref.image, answered, JSON.stringify(body));
      }
    }
  });
}
