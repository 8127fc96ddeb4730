import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import { knownHostsName, parseRepoUrl } from '../../../../workers/plan/repo-url.js';

const strict = { allowInsecureGitProtocols: false };
const insecure = { allowInsecureGitProtocols: true };

const accepted = [
  {
    in: 'https://github.com/org/repo.git',
    out: {
      scheme: 'https',
      scpStyle: false,
      host: 'github.com',
      path: 'org/repo.git',
      cloneUrl: 'https://github.com/org/repo.git',
    },
  },
  {
    in: 'https://Git.Example.COM:8443/a/b/c',
    out: {
      scheme: 'https',
      scpStyle: false,
      host: 'git.example.com',
      port: 8443,
      path: 'a/b/c',
      cloneUrl: 'https://git.example.com:8443/a/b/c',
    },
  },
  {
    in: 'HTTPS://127.0.0.1:4443/image.git',
    out: {
      scheme: 'https',
      scpStyle: false,
      host: '127.0.0.1',
      port: 4443,
      path: 'image.git',
      cloneUrl: 'https://127.0.0.1:4443/image.git',
    },
  },
  {
    in: 'ssh://git@host.example/org/repo.git',
    out: {
      scheme: 'ssh',
      scpStyle: false,
      user: 'git',
      host: 'host.example',
      path: 'org/repo.git',
      cloneUrl: 'ssh://git@host.example/org/repo.git',
    },
  },
  {
    in: 'ssh://root@127.0.0.1:2222/srv/git/image.git',
    out: {
      scheme: 'ssh',
      scpStyle: false,
      user: 'root',
      host: '127.0.0.1',
      port: 2222,
      path: 'srv/git/image.git',
      cloneUrl: 'ssh://root@127.0.0.1:2222/srv/git/image.git',
    },
  },
  {
    in: 'ssh://[::1]:2222/x.git',
    out: {
      scheme: 'ssh',
      scpStyle: false,
      host: '::1',
      port: 2222,
      path: 'x.git',
      cloneUrl: 'ssh://[::1]:2222/x.git',
    },
  },
  {
    in: 'git@github.com:org/repo.git',
    out: {
      scheme: 'ssh',
      scpStyle: true,
      user: 'git',
      host: 'github.com',
      path: 'org/repo.git',
      cloneUrl: 'git@github.com:org/repo.git',
    },
  },
  {
    in: 'host.example:/srv/repo',
    out: {
      scheme: 'ssh',
      scpStyle: true,
      host: 'host.example',
      path: 'srv/repo',
      cloneUrl: 'host.example:/srv/repo',
    },
  },
  {
    in: 'deploy@[fe80::1]:repo',
    out: {
      scheme: 'ssh',
      scpStyle: true,
      user: 'deploy',
      host: 'fe80::1',
      path: 'repo',
      cloneUrl: 'deploy@[fe80::1]:repo',
    },
  },
] as const;

for (const { in: input, out } of accepted) {
  test(`accepts ${input}`, (t) => {
    t.deepEqual(parseRepoUrl(input, strict), out);
  });
}

test('git:// and http:// only when insecure git protocols are allowed, ports kept', (t) => {
  for (const url of ['git://127.0.0.1:9418/x.git', 'http://127.0.0.1:8080/x.git']) {
    const err = t.throws(() => parseRepoUrl(url, strict));
    t.true(isServiceError(err));
    t.is((err as { code?: string }).code, 'SCHEME_NOT_ALLOWED');
    t.is(parseRepoUrl(url, insecure).cloneUrl, url);
  }
  t.is(
    t.throws(() => parseRepoUrl('git://h/x', strict))?.message,
    'repository URL scheme "git://" is not allowed: use https://, ssh:// or SCP-style (user@host:path) (git:// and http:// need insecure git protocols allowed)',
  );
});

const refused: [string, string, string][] = [
  // [input, code, message]
  ['file:///etc', 'SCHEME_NOT_ALLOWED', 'repository URL scheme "file://" is not allowed: '],
  ['FILE:///etc/passwd', 'SCHEME_NOT_ALLOWED', 'repository URL scheme "file://" is not allowed: '],
  ['ftp://host/x', 'SCHEME_NOT_ALLOWED', 'repository URL scheme "ftp://" is not allowed: '],
  ['git+ssh://host/x', 'SCHEME_NOT_ALLOWED', 'repository URL scheme "git+ssh://" is not allowed: '],
  [
    'ext::sh -c touch% /tmp/canary',
    'INVALID_REPOSITORY_URL',
    'unable to parse git repository URL: ext::sh -c touch% /tmp/canary',
  ],
  ['ext::sh', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: ext::sh'],
  ['fd::3', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: fd::3'],
  [
    'ssh://-oProxyCommand=touch /tmp/canary/x',
    'INVALID_REPOSITORY_URL',
    'unable to parse git repository URL: ',
  ],
  [
    'ssh://-oProxyCommand=touch%20/tmp/canary/x',
    'INVALID_REPOSITORY_URL',
    'unable to parse git repository URL: ',
  ],
  ['ssh://-oProxyCommand=id@host/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['-oProxyCommand=x:path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['--upload-pack=touch /tmp/canary', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['--upload-pack=touch', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['-host:path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['git@-host:path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['-u@host:path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['u@host:-path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['/srv/git/repo.git', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: /srv/git/repo.git'],
  ['./repo', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: ./repo'],
  ['../x:y', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: ../x:y'],
  ['repo', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: repo'],
  ['~/repo', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: ~/repo'],
  ['https:///x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: https:///x'],
  ['ssh://@/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: ssh://@/x'],
  [':path', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: :path'],
  ['https://host', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: https://host'],
  ['https://host/', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: https://host/'],
  ['https://host:/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: https://host:/x'],
  [
    'https://host:99999/x',
    'INVALID_REPOSITORY_URL',
    'unable to parse git repository URL: https://host:99999/x',
  ],
  ['https://host:0/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: https://host:0/x'],
  ['https://host/x?upload-pack=y', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['https://host/a/../b', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['https://hôst/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['https://host/x\r\nHost: evil', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['https://host/x\n', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['https://host/x\u0000', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  ['git@host:repo\u001b[31m', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  [' https://host/x', 'INVALID_REPOSITORY_URL', 'unable to parse git repository URL: '],
  [
    'https://user:tok@host/x',
    'CREDENTIALS_IN_URL',
    'repository URL must not contain credentials: pass them in gitCredentials (username and token)',
  ],
  ['https://ghp_token@host/x', 'CREDENTIALS_IN_URL', 'repository URL must not contain credentials: '],
  ['ssh://git:secret@host/x', 'CREDENTIALS_IN_URL', 'repository URL must not contain credentials: '],
  ['user:tok@host:org/repo', 'CREDENTIALS_IN_URL', 'repository URL must not contain credentials: '],
];

for (const [input, code, message] of refused) {
  test(`refuses ${JSON.stringify(input)} with ${code}`, (t) => {
    for (const policy of [strict, insecure]) {
      const err = t.throws(() => parseRepoUrl(input, policy));
      t.true(isServiceError(err));
      t.is((err as { code?: string }).code, code);
      t.is((err as { status?: number }).status, 400);
      t.true(err?.message.startsWith(message), err?.message);
    }
  });
}

test('an unparseable URL is echoed whole in the message', (t) => {
  t.is(
    t.throws(() => parseRepoUrl('not a url', strict))?.message,
    'unable to parse git repository URL: not a url',
  );
});

test('known_hosts name carries the port unless it is 22', (t) => {
  t.is(knownHostsName({ host: 'h', port: 2222 }), '[h]:2222');
  t.is(knownHostsName({ host: 'h', port: 22 }), 'h');
  t.is(knownHostsName({ host: 'h' }), 'h');
});
