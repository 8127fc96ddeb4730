import test from 'ava';
import { NAME_PATTERN } from '../../../../src/rules/image-reference.js';
import { deriveImageName } from '../../../../workers/plan/image-name.js';

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
    if (got !== undefined) t.regex(got, new RegExp(NAME_PATTERN));
  });
}
