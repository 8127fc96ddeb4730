// The webhook checks and payload reading (pure): signatures and tokens, what a push selects with,
// and the 400 of a malformed payload; the globs, the branch tag and the repository key.
import { createHmac } from 'node:crypto';
import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import { readHookDelivery } from '../../../../src/http/hook-payload.js';
import { validHookSignature } from '../../../../src/http/hook-signature.js';
import { branchTag, repositoryKey } from '../../../../src/prebuilds/names.js';
import { globToRegExp, matchesAny } from '../../../../src/rules/globs.js';

const secret = 's3cret';
const body = Buffer.from(JSON.stringify({ hello: 'world' }));
const sign = (key: string, data: Buffer): string =>
  `sha256=${createHmac('sha256', key).update(data).digest('hex')}`;
const headers = (h: Record<string, string>) => (name: string) => h[name];

test('GitHub and Gitea: only the HMAC-SHA256 of the exact body with the secret passes', (t) => {
  for (const forge of ['github', 'gitea'] as const) {
    t.true(validHookSignature(forge, secret, body, headers({ 'x-hub-signature-256': sign(secret, body) })));
    t.false(validHookSignature(forge, secret, body, headers({ 'x-hub-signature-256': sign('other', body) })));
    t.false(
      validHookSignature(
        forge,
        secret,
        Buffer.concat([body, Buffer.from(' ')]),
        headers({ 'x-hub-signature-256': sign(secret, body) }),
      ),
    );
    t.false(validHookSignature(forge, secret, body, headers({ 'x-hub-signature-256': 'sha256=abc' })));
    t.false(validHookSignature(forge, secret, body, headers({})));
  }
});

test('GitLab: only the exact token passes (any length)', (t) => {
  t.true(validHookSignature('gitlab', secret, body, headers({ 'x-gitlab-token': secret })));
  for (const wrong of ['', 's3cre', 's3cretx', 'S3CRET'])
    t.false(validHookSignature('gitlab', secret, body, headers({ 'x-gitlab-token': wrong })));
  t.false(validHookSignature('gitlab', secret, body, headers({})));
});

const push = {
  ref: 'refs/heads/main',
  before: 'a'.repeat(40),
  after: 'b'.repeat(40),
  repository: {
    clone_url: 'https://git.example/o/r.git',
    ssh_url: 'git@git.example:o/r.git',
    options: '--upload-pack=x',
  },
};

test('a push gives its ref, commits and repository URLs, nothing else', (t) => {
  const read = readHookDelivery(
    'github',
    Buffer.from(JSON.stringify(push)),
    headers({ 'x-github-event': 'push', 'x-github-delivery': 'd1' }),
  );
  t.deepEqual(read, {
    kind: 'push',
    event: {
      forge: 'github',
      deliveryId: 'd1',
      repositoryUrls: ['https://git.example/o/r.git', 'git@git.example:o/r.git'],
      ref: 'refs/heads/main',
      before: push.before,
      after: push.after,
    },
  });
  const gitlab = readHookDelivery(
    'gitlab',
    Buffer.from(
      JSON.stringify({
        ...push,
        repository: undefined,
        project: { git_http_url: 'https://git.example/o/r.git' },
      }),
    ),
    headers({ 'x-gitlab-event': 'Push Hook' }),
  );
  t.is(gitlab.kind, 'push');
  t.deepEqual(readHookDelivery('github', Buffer.from('{}'), headers({ 'x-github-event': 'ping' })), {
    kind: 'ping',
  });
});

test('a malformed payload or another event is a 400 naming what is wrong', (t) => {
  const code = (payload: unknown, event = 'push'): string | undefined => {
    try {
      readHookDelivery(
        'github',
        Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)),
        headers({ 'x-github-event': event }),
      );
      return undefined;
    } catch (err) {
      return isServiceError(err) && err.status === 400 ? `${err.code}: ${err.message}` : 'not a 400';
    }
  };
  t.regex(code({ ...push, after: 'HEAD; rm -rf /' }) ?? '', /INVALID_HOOK_PAYLOAD: .*after/);
  t.regex(code({ ...push, ref: 'refs/heads/a b' }) ?? '', /INVALID_HOOK_PAYLOAD: .*ref/);
  t.regex(code({ ...push, repository: 'x' }) ?? '', /INVALID_HOOK_PAYLOAD: .*repository/);
  t.regex(code('not json') ?? '', /INVALID_JSON/);
  t.regex(code(push, 'issues') ?? '', /HOOK_EVENT_UNSUPPORTED/);
});

test('globs: * stays in a segment, ** crosses them', (t) => {
  t.true(matchesAny('release/1.2', ['release/*']));
  t.false(matchesAny('release/1/2', ['release/*']));
  t.true(matchesAny('.devcontainer/a/b.json', ['.devcontainer/**']));
  t.true(matchesAny('package-lock.json', ['**/*.json']));
  t.false(globToRegExp('a.b').test('axb'), 'a dot is literal');
});

test('the branch tag: lower case, anything outside [a-z0-9_.-] made -', (t) => {
  t.is(branchTag('feature/X'), 'feature-x');
  t.is(branchTag('Main'), 'main');
  t.is(branchTag('-x'), '_-x');
});

test('repository URLs match by host and path, whatever the scheme', (t) => {
  const key = repositoryKey('https://Git.Example/O/R.git');
  t.is(key, 'git.example/o/r');
  for (const url of ['ssh://git@git.example:22/o/r', 'git@git.example:o/r.git', 'https://git.example/o/r/'])
    t.is(repositoryKey(url), key, url);
  t.not(repositoryKey('https://git.example/o/other.git'), key);
  t.is(repositoryKey('not a url'), undefined);
});
