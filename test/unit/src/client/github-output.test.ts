import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOutputs, formatOutputs, writeGithubOutput } from '../../../../src/client/github-output.js';

const answer = {
  image: 'r.example/app:sha-1234567',
  registry: 'r.example',
  name: 'app',
  tag: 'sha-1234567',
  branch: 'main',
  commit: 'a'.repeat(40),
  digest: `sha256:${'b'.repeat(64)}`,
  gitCloneLogId: 'git-x',
};

test('the outputs are the six fields a workflow uses', (t) => {
  t.deepEqual(Object.keys(buildOutputs(answer)), ['image', 'registry', 'name', 'tag', 'commit', 'digest']);
  t.is(buildOutputs({}).digest, '');
});

test('one key=value line each; a value with a newline uses the delimiter form', (t) => {
  t.is(formatOutputs({ a: '1', b: 'x=y' }, 'EOF'), 'a=1\nb=x=y\n');
  t.is(formatOutputs({ a: 'one\ntwo' }, 'D'), 'a<<D\none\ntwo\nD\n');
});

test('appended to the GITHUB_OUTPUT file, keeping what other steps wrote', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-gho-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'out');
  await writeFile(file, 'earlier=1\n');
  await writeGithubOutput(file, buildOutputs(answer));
  t.is(
    await readFile(file, 'utf8'),
    `earlier=1\nimage=${answer.image}\nregistry=r.example\nname=app\ntag=sha-1234567\ncommit=${answer.commit}\ndigest=${answer.digest}\n`,
  );
});
