import test from 'ava';
import { parseImageString } from '../../../../src/registry/image-string.js';

test('image strings split as docker normalises them', (t) => {
  const local = parseImageString('localhost:5000/dev/base:1', ['localhost:5000'])!;
  t.is(local.ref.host, 'localhost:5000');
  t.is(local.ref.scheme, 'http');
  t.is(local.ref.name, 'dev/base');
  t.is(local.ref.tag, '1');
  t.is(local.digest, undefined);
  const hub = parseImageString('ubuntu', [])!;
  t.is(hub.ref.host, 'registry-1.docker.io');
  t.is(hub.ref.name, 'library/ubuntu');
  t.is(hub.ref.tag, 'latest');
  const feature = parseImageString('ghcr.io/devcontainers/features/node:1', [])!;
  t.is(feature.ref.host, 'ghcr.io');
  t.is(feature.ref.name, 'devcontainers/features/node');
  const pinned = parseImageString(`127.0.0.1:5000/a/b@sha256:${'a'.repeat(64)}`, [])!;
  t.is(pinned.digest, `sha256:${'a'.repeat(64)}`);
});

test('what the grammar refuses is undefined', (t) => {
  for (const bad of ['UPPER/case:1', 'a/b:', 'a@sha256', 'localhost:5000/x:t@nope']) {
    t.is(parseImageString(bad, []), undefined, bad);
  }
});
