/**
 * Answered commits, the pure parts: the request shape (what makes two requests the same for a
 * commit, credentials never among it), the inputs that can move under a commit, the in-memory
 * store's bounds, and records read back from a shared store.
 */
import test from 'ava';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import {
  createMemoryAnsweredCommits,
  MAX_COMMITS_PER_SHAPE,
  parseAnswered,
  type AnsweredCommit,
} from '../../../../workers/leases/answered-commits.js';
import { movableReferences } from '../../../../workers/reuse/commit-memo.js';
import { requestShape } from '../../../../workers/reuse/request-identity.js';
import type { Keyed } from '../../../../workers/reuse/checkout-key.js';
import { PLAN } from '../../../helpers/fake-build.js';

const shape = (plan: Partial<BuildPlan>, fallback?: string): string =>
  requestShape({ ...PLAN, ...plan }, fallback);

test('the request shape: options, platforms, target and secrets count; credentials do not', (t) => {
  const base = shape({});
  t.is(shape({}), base);
  t.is(shape({ gitCredential: { kind: 'https', username: 'u', token: 't' } }), base);
  t.is(shape({ registryCredentials: { registry: 'r.example', username: 'u', password: 'p' } }), base);
  t.is(shape({ secrets: ['t'] }), base);
  for (const other of [
    shape({ platforms: ['linux/amd64'] }),
    shape({ branch: 'dev' }),
    shape({ image: { registry: 'r.example', name: 'app', tag: 'latest' } }),
    shape({ image: { registry: 'r.example', name: 'other' } }),
    shape({ cacheTo: 'type=inline' }),
    shape({ mode: 'never' }),
    shape({ secretsIdentity: 'x' }),
    shape({}, 'mcr.microsoft.com/devcontainers/base:ubuntu'),
  ])
    t.not(other, base);
});

test('what can move under a commit: base images and features by tag, not by digest', (t) => {
  const pinned = `r.example/base@sha256:${'1'.repeat(64)}`;
  const keyed = {
    key: 'k',
    input: {
      baseImages: [
        { ref: 'r.example/base:1', digest: `sha256:${'2'.repeat(64)}` },
        { ref: pinned, digest: `sha256:${'1'.repeat(64)}` },
      ],
      features: [{ ref: 'r.example/features/greet:1', digest: `sha256:${'3'.repeat(64)}` }],
    },
  } as unknown as Keyed;
  t.deepEqual(movableReferences(keyed, []), [
    { ref: 'r.example/base:1', digest: `sha256:${'2'.repeat(64)}`, what: 'base image' },
    { ref: 'r.example/features/greet:1', digest: `sha256:${'3'.repeat(64)}`, what: 'feature' },
  ]);
});

const answer = (commit: string, answeredAt: number): AnsweredCommit => ({
  commit,
  branch: 'main',
  registry: 'r.example',
  name: 'app',
  tag: 'latest',
  digest: `sha256:${'d'.repeat(64)}`,
  key: 'k',
  movable: [],
  cliVersion: '1',
  buildProcessVersion: 1,
  answeredAt,
});

test('in memory: the newest commits per shape, the least recent shapes go first, forget', async (t) => {
  const store = createMemoryAnsweredCommits(2);
  for (let i = 0; i < MAX_COMMITS_PER_SHAPE + 2; i++) await store.set('a', answer(String(i), i));
  const kept = await store.get('a');
  t.is(kept.size, MAX_COMMITS_PER_SHAPE);
  t.false(kept.has('0'));
  t.true(kept.has(String(MAX_COMMITS_PER_SHAPE + 1)));
  await store.set('b', answer('x', 1));
  await store.set('c', answer('y', 1));
  t.is((await store.get('a')).size, 0, 'the shape answered least recently is dropped');
  await store.forget('c', 'y');
  t.is((await store.get('c')).size, 0);
});

test('a record read back: a well-formed one, nothing else', (t) => {
  const good = answer('c'.repeat(40), 5);
  t.deepEqual(parseAnswered(JSON.stringify(good)), good);
  t.is(parseAnswered('{'), undefined);
  t.is(parseAnswered(JSON.stringify({ ...good, digest: 1 })), undefined);
  t.is(
    parseAnswered(JSON.stringify({ ...good, movable: [{ ref: 'x', digest: 'y', what: 'z' }] })),
    undefined,
  );
});
