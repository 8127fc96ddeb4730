import test from 'ava';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../../src/exec/run.js';
import {
  cloneArgs,
  credentialConfig,
  gitEnv,
  repoOrigin,
  sshCommand,
  withGitConfig,
} from '../../../../workers/git/git-env.js';
import { prepareKnownHosts, tofuKnownHostsFile } from '../../../../workers/git/host-keys.js';

const tofu = { file: '/s/ssh/known_hosts', strictHostKeyChecking: 'accept-new' as const };

for (const [name, branch, expected] of [
  [
    'default branch',
    undefined,
    [
      'clone',
      '--config',
      'core.sparseCheckout=true',
      '--config',
      'core.sparseCheckoutCone=false',
      '--filter=blob:none',
      '--no-checkout',
      '--depth',
      '1',
      '--single-branch',
      '--no-tags',
      '--',
      'https://h/x.git',
      '/d',
    ],
  ],
  [
    'explicit branch',
    'release/1.x',
    [
      'clone',
      '--config',
      'core.sparseCheckout=true',
      '--config',
      'core.sparseCheckoutCone=false',
      '--filter=blob:none',
      '--no-checkout',
      '--depth',
      '1',
      '--single-branch',
      '--no-tags',
      '--branch',
      'release/1.x',
      '--',
      'https://h/x.git',
      '/d',
    ],
  ],
] as const) {
  test(`cloneArgs: ${name}`, (t) => t.deepEqual(cloneArgs('https://h/x.git', '/d', branch), [...expected]));
}

test('sshCommand: no config, batch mode, only our identity, explicit known_hosts and policy', (t) => {
  t.is(
    sshCommand(tofu, "/s/req/it's/id_key"),
    "ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i '/s/req/it'\\''s/id_key'" +
      " -o UserKnownHostsFile='/s/ssh/known_hosts' -o GlobalKnownHostsFile=/dev/null" +
      ' -o StrictHostKeyChecking=accept-new -o UpdateHostKeys=no -o HashKnownHosts=no',
  );
  t.regex(sshCommand({ file: '/k', strictHostKeyChecking: 'yes' }), /StrictHostKeyChecking=yes/);
  t.notRegex(sshCommand(tofu), / -i /);
});

test('gitEnv: hardened variables, base env kept, inherited ssh/askpass settings dropped', (t) => {
  const env = gitEnv({
    baseEnv: { PATH: '/bin', GIT_SSL_CAINFO: '/ca.pem', SSH_AUTH_SOCK: '/agent', GIT_ASKPASS: '/evil' },
    allowInsecureProtocols: false,
    home: '/s/req/home',
    knownHosts: tofu,
  });
  t.is(env.PATH, '/bin');
  t.is(env.GIT_SSL_CAINFO, '/ca.pem');
  t.is(env.HOME, '/s/req/home');
  t.is(env.TMPDIR, '/s/req/home');
  t.is(env.GIT_CONFIG_NOSYSTEM, '1');
  t.is(env.GIT_CONFIG_GLOBAL, '/dev/null');
  t.is(env.GIT_TERMINAL_PROMPT, '0');
  t.is(env.GIT_ALLOW_PROTOCOL, 'https:ssh');
  t.is(env.SSH_AUTH_SOCK, undefined);
  t.is(env.GIT_ASKPASS, undefined);
  const config = Object.fromEntries(
    Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [
      env[`GIT_CONFIG_KEY_${i}`],
      env[`GIT_CONFIG_VALUE_${i}`],
    ]),
  );
  t.like(config, {
    'core.hooksPath': '/dev/null',
    'protocol.file.allow': 'never',
    'submodule.recurse': 'false',
    'credential.helper': '',
  });
});

test('withGitConfig: appends to the GIT_CONFIG_* list, leaving the hardened entries in place', (t) => {
  const base = gitEnv({ baseEnv: {}, allowInsecureProtocols: false, home: '/h', knownHosts: tofu });
  const count = Number(base.GIT_CONFIG_COUNT);
  const env = withGitConfig(base, [['remote.origin.url', 'https://h/x.git']]);
  t.is(env.GIT_CONFIG_COUNT, String(count + 1));
  t.is(env[`GIT_CONFIG_KEY_${count}`], 'remote.origin.url');
  t.is(env[`GIT_CONFIG_VALUE_${count}`], 'https://h/x.git');
  t.is(env.GIT_CONFIG_KEY_0, 'core.hooksPath');
  t.is(base.GIT_CONFIG_COUNT, String(count), 'the given environment is not changed');
  t.deepEqual(withGitConfig({}, [['a.b', 'c']]), {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'a.b',
    GIT_CONFIG_VALUE_0: 'c',
  });
});

test('gitEnv: insecure protocols and the credential config file when asked', (t) => {
  const env = gitEnv({
    baseEnv: {},
    allowInsecureProtocols: true,
    home: '/h',
    knownHosts: tofu,
    credentialConfigFile: '/s/req/git/gitconfig',
  });
  t.is(env.GIT_ALLOW_PROTOCOL, 'https:ssh:git:http');
  t.is(env.GIT_CONFIG_GLOBAL, '/s/req/git/gitconfig');
});

for (const [url, origin] of [
  [{ scheme: 'https', host: 'git.example.com' }, 'https://git.example.com'],
  [{ scheme: 'https', host: '127.0.0.1', port: 8443 }, 'https://127.0.0.1:8443'],
  [{ scheme: 'http', host: '::1', port: 80 }, 'http://[::1]:80'],
] as const) {
  test(`repoOrigin: ${origin}`, (t) => t.is(repoOrigin(url), origin));
}

test('git itself honours the hardened config: hooks path, file protocol refused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gitenv-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const env = gitEnv({
    baseEnv: { PATH: '/usr/bin:/bin' },
    allowInsecureProtocols: true,
    home: dir,
    knownHosts: tofu,
  });
  const hooks = await run('git', ['config', 'core.hooksPath'], {
    baseEnv: env,
    captureStdout: true,
    cwd: dir,
  });
  t.is(hooks.stdout.trim(), '/dev/null');
  await run('git', ['init', '-q', '--bare', join(dir, 'r.git')], { baseEnv: env });
  let output = '';
  const log = {
    id: 'git-00000000-0000-0000-0000-000000000000',
    write: (c: string | Uint8Array) => void (output += String(c)),
    addSecrets: () => undefined,
    close: async () => undefined,
  };
  await t.throwsAsync(run('git', cloneArgs(`file://${dir}/r.git`, join(dir, 'c')), { baseEnv: env, log }));
  t.regex(output, /transport 'file' not allowed/);
});

test('the credential config gives git the header for its origin only', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'credcfg-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'gitconfig');
  await writeFile(file, credentialConfig('https://127.0.0.1:8443', 'git-user', 'tok:en'), { mode: 0o600 });
  const env = gitEnv({
    baseEnv: { PATH: '/usr/bin:/bin' },
    allowInsecureProtocols: false,
    home: dir,
    knownHosts: tofu,
    credentialConfigFile: file,
  });
  const header = async (url: string) =>
    (
      await run('git', ['config', '--get-urlmatch', 'http.extraHeader', url], {
        baseEnv: env,
        captureStdout: true,
      }).catch(() => ({ stdout: '' }))
    ).stdout.trim();
  t.is(
    await header('https://127.0.0.1:8443/team/x.git'),
    `Authorization: Basic ${Buffer.from('git-user:tok:en').toString('base64')}`,
  );
  t.is(await header('https://127.0.0.1:9443/team/x.git'), '');
  t.is(await header('https://other.example/x.git'), '');
});

test('host keys: tofu uses one instance-wide file, created once and never truncated', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'hostkeys-test-'));
  t.teardown(() => rm(scratch, { recursive: true, force: true }));
  const first = await prepareKnownHosts({
    policy: 'tofu',
    scratchDir: scratch,
    requestSecretsDir: '/nonexistent',
  });
  t.deepEqual(first, { file: tofuKnownHostsFile(scratch), strictHostKeyChecking: 'accept-new' });
  await writeFile(first.file, '[h]:22 ssh-ed25519 AAAA\n');
  await prepareKnownHosts({ policy: 'tofu', scratchDir: scratch, requestSecretsDir: '/nonexistent' });
  t.is(await readFile(first.file, 'utf8'), '[h]:22 ssh-ed25519 AAAA\n');
  t.is((await stat(first.file)).mode & 0o777, 0o600);
});

test('host keys: pinned writes only the pinned key, per request, with strict checking', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'hostkeys-test-'));
  t.teardown(() => rm(scratch, { recursive: true, force: true }));
  const pinned = await prepareKnownHosts({
    policy: 'pinned',
    scratchDir: scratch,
    requestSecretsDir: scratch,
    pinnedHostKey: '[h]:2222 ssh-ed25519 AAAAPIN',
  });
  t.deepEqual(pinned, { file: join(scratch, 'known_hosts'), strictHostKeyChecking: 'yes' });
  t.is(await readFile(pinned.file, 'utf8'), '[h]:2222 ssh-ed25519 AAAAPIN\n');
  await t.throwsAsync(stat(tofuKnownHostsFile(scratch)), { code: 'ENOENT' });
});
