import test from 'ava';
import { defaultTag, ImageTarget } from '../../../../src/rules/image-target.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

test('a target without a tag names its repository until the commit gives it sha-<7 hex>', (t) => {
  const planned = ImageTarget.of({ registry: '127.0.0.1:5000/org', name: 'app' });
  t.is(planned.repository, '127.0.0.1:5000/org/app');
  t.is(planned.image, '127.0.0.1:5000/org/app');
  const built = planned.atCommit(COMMIT);
  t.is(built.tag, 'sha-0123456');
  t.is(built.tag, defaultTag(COMMIT));
  t.is(built.image, '127.0.0.1:5000/org/app:sha-0123456');
});

test('a tag the request named is kept whatever the commit', (t) => {
  const named = new ImageTarget('ghcr.io', 'team/app', 'v1');
  t.is(named.image, 'ghcr.io/team/app:v1');
  t.is(named.atCommit(COMMIT).image, 'ghcr.io/team/app:v1');
  t.is(named.withTag('build-key-ab').image, 'ghcr.io/team/app:build-key-ab');
  t.is(named.atDigest('sha256:ff'), 'ghcr.io/team/app@sha256:ff');
});

test('the in-flight and recent ids name the repository, never the tag', (t) => {
  const a = new ImageTarget('r', 'n', 'one');
  const b = new ImageTarget('r', 'n', 'two');
  t.is(a.keyInFlightId('k'), 'key:r/n:k');
  t.is(a.keyInFlightId('k'), b.keyInFlightId('k'));
  t.not(a.keyInFlightId('k'), new ImageTarget('r', 'm').keyInFlightId('k'));
  t.is(a.recentId('https://git/x.git', 'main'), b.recentId('https://git/x.git', 'main'));
  t.not(a.recentId('https://git/x.git', 'main'), a.recentId('https://git/x.git', 'dev'));
  t.not(
    a.recentId('https://git/x.git', 'main'),
    new ImageTarget('r2', 'n').recentId('https://git/x.git', 'main'),
  );
});
