import test from 'ava';
import {
  BUILD_PROCESS_VERSION,
  buildKey,
  buildKeyTag,
  type BuildKeyInput,
} from '../../../../workers/reuse/build-key.js';
import { changedInputs } from '../../../../workers/reuse/input-changes.js';

const base: BuildKeyInput = {
  configDigest: 'sha256:' + 'a'.repeat(64),
  paths: [
    { path: '.devcontainer', kind: 'dir', objectId: '1'.repeat(40) },
    { path: 'app', kind: 'dir', objectId: '2'.repeat(40) },
  ],
  baseImages: [{ ref: 'localhost:5000/dev/base:1', digest: 'sha256:' + 'b'.repeat(64) }],
  features: [{ ref: 'localhost:5000/f/x:1', digest: 'sha256:' + 'c'.repeat(64) }],
  platforms: ['linux/amd64'],
  cliVersion: '0.89.0',
  buildProcessVersion: BUILD_PROCESS_VERSION,
};

test('the key is 64 hex digits, stable, and independent of list order', (t) => {
  const key = buildKey(base);
  t.regex(key, /^[0-9a-f]{64}$/);
  t.is(buildKey({ ...base }), key);
  t.is(buildKey({ ...base, paths: [...base.paths].reverse() }), key);
  t.regex(buildKeyTag(key), /^build-key-[0-9a-f]{64}$/);
});

test('every input changes the key and is named in the diff', (t) => {
  const variants: Array<[Partial<BuildKeyInput>, RegExp]> = [
    [{ configDigest: 'sha256:' + 'd'.repeat(64) }, /^the config file$/],
    [
      { paths: [base.paths[0]!, { path: 'app', kind: 'dir', objectId: '3'.repeat(40) }] },
      /^path app: 222222222222 -> 333333333333$/,
    ],
    [
      { baseImages: [{ ref: 'localhost:5000/dev/base:1', digest: 'sha256:' + 'e'.repeat(64) }] },
      /^base image localhost:5000\/dev\/base:1: sha256:b+ -> sha256:e+$/,
    ],
    [
      { features: [{ ref: 'localhost:5000/f/x:1', digest: 'sha256:' + 'f'.repeat(64) }] },
      /^feature localhost:5000\/f\/x:1: /,
    ],
    [{ platforms: ['linux/amd64', 'linux/386'] }, /^platforms: linux\/amd64 -> linux\/amd64,linux\/386$/],
    [{ cliVersion: '0.90.0' }, /^Dev Containers CLI: 0.89.0 -> 0.90.0$/],
    [{ buildProcessVersion: BUILD_PROCESS_VERSION + 1 }, /^build process version: /],
  ];
  for (const [change, named] of variants) {
    const after = { ...base, ...change };
    t.not(buildKey(after), buildKey(base), JSON.stringify(change));
    const diff = changedInputs(base, after);
    t.is(diff.length, 1, diff.join('; '));
    t.regex(diff[0] ?? '', named);
  }
  t.deepEqual(changedInputs(base, base), []);
});

test('the root tree is named as such in the diff', (t) => {
  const root = (id: string): BuildKeyInput => ({ ...base, paths: [{ path: '', kind: 'dir', objectId: id }] });
  t.deepEqual(changedInputs(root('1'.repeat(40)), root('2'.repeat(40))), [
    'path / (the repository root): 111111111111 -> 222222222222',
  ]);
});

test('the secrets identity changes the key and is named without a value; without secrets the key has no secrets input', (t) => {
  const withSecrets: BuildKeyInput = { ...base, secretIds: ['npmrc'], secretsIdentity: 'a'.repeat(64) };
  const rotated: BuildKeyInput = { ...withSecrets, secretsIdentity: 'b'.repeat(64) };
  t.not(buildKey(rotated), buildKey(withSecrets));
  t.deepEqual(changedInputs(withSecrets, rotated), ['build secrets: other values']);
  t.deepEqual(changedInputs(base, withSecrets), ['build secret ids: none -> npmrc']);
  t.is(buildKey({ ...base, secretIds: [] }), buildKey(base));
});
