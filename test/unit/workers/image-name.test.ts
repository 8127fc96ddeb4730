import test from 'ava';
import {
  deriveImageName,
  IMAGE_NAME_PATTERN,
  IMAGE_TAG_PATTERN,
  REGISTRY_PATTERN,
} from '../../../workers/image-name.js';

const derived: [string, string | undefined][] = [
  ['org/repo.git', 'repo'],
  ['org/repo', 'repo'],
  ['org/My_Repo.GIT', 'my_repo'],
  ['srv/git/image.git', 'image'],
  ['a/b/c/', 'c'],
  ['org/Hello World', 'hello-world'],
  ['org/hello%20world.git', 'hello-world'],
  ['org/a..b', 'a-b'],
  ['org/a._b', 'a-b'],
  ['org/a__b', 'a__b'],
  ['org/a---b', 'a---b'],
  ['org/a___b', 'a-b'],
  ['org/-x-', 'x'],
  ['org/.hidden.git', 'hidden'],
  ['org/.git', undefined],
  ['org/___.git', undefined],
  ['org/✓', undefined],
  ['org/%E2%9C%93', undefined],
  ['org/%zz', 'zz'],
  ['x'.repeat(300), 'x'.repeat(128)],
];

for (const [path, name] of derived) {
  test(`image name of ${path.slice(0, 40)}`, (t) => {
    const got = deriveImageName(path);
    t.is(got, name);
    if (got !== undefined) t.regex(got, new RegExp(IMAGE_NAME_PATTERN));
  });
}

test('OCI patterns', (t) => {
  const name = new RegExp(IMAGE_NAME_PATTERN);
  for (const ok of ['a', 'dev/base', 'a.b/c_d/e__f/g-h', 'a--b']) t.true(name.test(ok), ok);
  for (const bad of ['A', 'a/', '/a', 'a..b', 'a_-b', '-a', 'a b', 'a\nb']) t.false(name.test(bad), bad);

  const tag = new RegExp(IMAGE_TAG_PATTERN);
  for (const ok of ['1', 'latest', 'sha-abc1234', 'V1.2_3-x']) t.true(tag.test(ok), ok);
  for (const bad of ['', '.x', '-x', 'a:b', 'x'.repeat(129), 'a\n'])
    t.false(tag.test(bad), JSON.stringify(bad));

  const registry = new RegExp(REGISTRY_PATTERN);
  for (const ok of [
    'ghcr.io',
    '127.0.0.1:5000',
    'localhost:5000',
    'ghcr.io/org',
    'r.example:443/team/sub',
    '[::1]:5000',
  ])
    t.true(registry.test(ok), ok);
  for (const bad of ['', 'https://ghcr.io', 'ghcr.io/', '-r.io', 'r.io/Org', 'r io', 'r.io\r\n', 'user@r.io'])
    t.false(registry.test(bad), JSON.stringify(bad));
});
