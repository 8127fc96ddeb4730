import test from 'ava';
import { globMatches, planRepository, type RetentionPolicy } from '../../../../src/retention/policy.js';
import type { RepositorySnapshot, ServiceImage } from '../../../../src/retention/snapshot-types.js';

const HOUR = 3600 * 1000;
const NOW = Date.parse('2026-11-26T09:00:00Z');
const digest = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;
const KEY = 'ab'.repeat(32);

const image = (n: number, branch: string, extra: Partial<ServiceImage> = {}): ServiceImage => ({
  tag: `sha-${n}`,
  digest: digest(n),
  children: [digest(100 + n), digest(200 + n)],
  source: 'https://git.example/app.git',
  branch,
  builtMs: NOW - (50 - n) * HOUR,
  namedTag: '',
  key: KEY,
  ...extra,
});

const snapshot = (images: ServiceImage[], extra: Partial<RepositorySnapshot> = {}): RepositorySnapshot => ({
  repository: 'r.example/app',
  images,
  others: [],
  keyTags: [],
  signatureTags: [],
  ...extra,
});

const policy: RetentionPolicy = { keepPerBranch: 2, keepServedDays: 0, keepTags: [] };

const byTag = (plan: ReturnType<typeof planRepository>) => new Map(plan.images.map((p) => [p.image.tag, p]));

test('the newest N of each branch are kept; the rest deleted with children and signatures', (t) => {
  const images = [1, 2, 3].map((n) => image(n, 'main')).concat([4, 5, 6].map((n) => image(n, 'feature-x')));
  const plan = byTag(
    planRepository(
      snapshot(images, {
        signatureTags: [{ tag: `sha256-${'0'.repeat(63)}1.sig`, digest: digest(900), of: digest(1) }],
      }),
      policy,
      new Map(),
      NOW,
    ),
  );
  t.is(plan.get('sha-3')?.reason, 'newest 2 of branch main');
  t.is(plan.get('sha-2')?.reason, 'newest 2 of branch main');
  t.is(plan.get('sha-1')?.reason, 'older than the newest 2 of branch main');
  t.is(plan.get('sha-4')?.reason, 'older than the newest 2 of branch feature-x');
  t.deepEqual(
    plan.get('sha-1')?.steps.map((s) => s.target),
    [digest(1), digest(101), digest(201), digest(900)],
  );
});

test('served within D days keeps an image; with 30 days every young image stays', (t) => {
  const images = [1, 2, 3].map((n) => image(n, 'main'));
  const served = new Map([[`tag:sha-1`, NOW - HOUR]]);
  const plan = byTag(
    planRepository(snapshot(images), { ...policy, keepPerBranch: 0, keepServedDays: 0.1 }, served, NOW),
  );
  t.is(plan.get('sha-1')?.reason, 'served 2026-11-26');
  t.is(plan.get('sha-2')?.action, 'delete');
  t.is(plan.get('sha-2')?.reason, 'not served in 0.1 days');
  // Built 47 h ago, so with 30 days nothing goes.
  const month = planRepository(
    snapshot(images),
    { ...policy, keepPerBranch: 0, keepServedDays: 30 },
    new Map(),
    NOW,
  );
  t.true(month.images.every((p) => p.action === 'keep'));
});

test('a named tag is kept unless keepTags is set and does not match it', (t) => {
  const images = [image(1, 'main', { tag: 'v1', namedTag: 'v1' }), image(2, 'main'), image(3, 'main')];
  const none = byTag(planRepository(snapshot(images), policy, new Map(), NOW));
  t.is(none.get('v1')?.reason, 'kept tag');
  const other = byTag(
    planRepository(snapshot(images), { ...policy, keepTags: ['release-*'] }, new Map(), NOW),
  );
  t.is(other.get('v1')?.action, 'delete');
  const match = byTag(planRepository(snapshot(images), { ...policy, keepTags: ['v?'] }, new Map(), NOW));
  t.is(match.get('v1')?.reason, 'kept tag');
});

test('a digest a kept tag reaches is never deleted; the build key moves to a kept image with that key', (t) => {
  const shared = image(1, 'main', { children: [digest(101), digest(777)] });
  const images = [shared, image(2, 'main', { children: [digest(102), digest(777)] }), image(3, 'main')];
  const keyTags = [{ tag: `build-key-${KEY}`, digest: digest(1), of: KEY }];
  const others = [{ tag: 'pinned', digest: digest(50), children: [digest(202)] }];
  const plan = byTag(planRepository(snapshot(images, { keyTags, others }), policy, new Map(), NOW));
  const steps = plan.get('sha-1')?.steps ?? [];
  t.deepEqual(steps[0], {
    action: 'move',
    target: `build-key-${KEY}`,
    to: digest(3),
    reference: `r.example/app:build-key-${KEY} (moves to sha-3, ${digest(3)})`,
  });
  t.deepEqual(
    steps.filter((s) => s.action === 'delete').map((s) => s.target),
    [digest(1), digest(101)],
    'the child shared with a kept image stays',
  );
  // An old image whose manifest a tag outside the service names is kept.
  const pinned = [image(1, 'main', { digest: digest(50) }), image(2, 'main'), image(3, 'main')];
  const kept = byTag(planRepository(snapshot(pinned, { others }), policy, new Map(), NOW));
  t.is(kept.get('sha-1')?.reason, 'its manifest is also under kept tag pinned');
});

test('without a kept image with its key, the key tag goes with its image', (t) => {
  const images = [image(1, 'main', { key: 'cd'.repeat(32) }), image(2, 'main'), image(3, 'main')];
  const keyTags = [{ tag: `build-key-${'cd'.repeat(32)}`, digest: digest(1), of: 'cd'.repeat(32) }];
  const plan = byTag(planRepository(snapshot(images, { keyTags }), policy, new Map(), NOW));
  const steps = plan.get('sha-1')?.steps ?? [];
  t.false(steps.some((s) => s.action === 'move'));
  t.is(steps[0]?.reference, `r.example/app@${digest(1)} (tags sha-1, build-key-${'cd'.repeat(32)})`);
});

test('globs: * and ? only, everything else literal', (t) => {
  t.true(globMatches('release-*', 'release-1.2'));
  t.true(globMatches('v?', 'v1'));
  t.false(globMatches('v?', 'v10'));
  t.false(globMatches('v.1', 'vx1'));
});
