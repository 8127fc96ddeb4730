/**
 * POST /build over ssh against the stack's sshd: trust on first use (remembered; a changed
 * key refused afterwards) and pinned host keys.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPinnedHostKey } from '../../src/config/known-hosts.js';
import type { SshHostKeyPolicy } from '../../src/config/types.js';
import { tofuKnownHostsFile } from '../../workers/git/host-keys.js';
import {
  fetchLog,
  fixtureCommit,
  postBuild,
  sshRepo,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';

const privateKey = readFileSync(stack.GIT_SSH_KEY_FILE, 'utf8');
const serverKey = stack.GIT_SSH_HOST_KEY.split(' ').slice(1).join(' ');
const port = Number(stack.GIT_SSH_PORT);

/** A freshly generated ed25519 public key (`ssh-ed25519 AAAA...`), not the server's. */
function otherHostKey(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-otherkey-'));
  try {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
    return readFileSync(join(dir, 'k.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function sshApp(policy: SshHostKeyPolicy, pinnedHostKey?: string) {
  return startBuildApp({
    sshHostKeyPolicy: policy,
    gitCredentials: [
      {
        host: stack.GIT_SSH_HOST,
        port,
        kind: 'ssh',
        privateKey,
        ...(pinnedHostKey === undefined ? {} : { pinnedHostKey }),
      },
    ],
  });
}

const request = (name: string) => ({
  repository: sshRepo('image'),
  image: { registry: stack.REGISTRY_ANON, name },
});

test('tofu: the first build remembers the host key, the second reuses it, a changed key is refused', async (t) => {
  const app = await sshApp('tofu');
  t.teardown(() => app.close());
  const name = uniqueName('ssh-tofu');
  const commit = fixtureCommit('image', 'main');

  const first = await postBuild(app, request(name));
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.commit, commit);
  t.is(first.body.image, `${stack.REGISTRY_ANON}/${name}:sha-${commit.slice(0, 7)}`);
  const knownHosts = tofuKnownHostsFile(app.ctx.config.scratchDir);
  const remembered = readFileSync(knownHosts, 'utf8');
  t.true(remembered.includes(`[${stack.GIT_SSH_HOST}]:${port} ${serverKey}`), remembered);

  const second = await postBuild(app, request(name));
  t.is(second.status, 200, JSON.stringify(second.body));
  t.is(readFileSync(knownHosts, 'utf8'), remembered, 'nothing new learnt');

  // The server "changes" its key: the remembered entry no longer matches what it presents.
  writeFileSync(knownHosts, `[${stack.GIT_SSH_HOST}]:${port} ${otherHostKey()}\n`);
  const third = await postBuild(app, request(name));
  t.is(third.status, 500);
  t.regex(
    String(third.body.error),
    /^git clone --config core.sparseCheckout=true --config core.sparseCheckoutCone=false --filter=blob:none --no-checkout --depth 1 --single-branch --no-tags -- ssh:\/\/.* exited with code 128$/,
  );
  const log = await fetchLog(app, third.body.logId);
  t.is(log.status, 200);
  t.regex(log.text, /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
});

test('pinned: the pinned key (a known_hosts line with a trailing comment) is required and used; no instance-wide file is written', async (t) => {
  const pinned = `${stack.GIT_SSH_HOST_KEY} git-ssh server of the stack`;
  t.true(isPinnedHostKey(pinned), 'the configuration accepts it');
  const app = await sshApp('pinned', pinned);
  t.teardown(() => app.close());
  const name = uniqueName('ssh-pinned');
  const res = await postBuild(app, request(name));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.commit, fixtureCommit('image', 'main'));
  t.is(res.body.branch, 'main');
  t.false(existsSync(tofuKnownHostsFile(app.ctx.config.scratchDir)));
});

test('pinned with a key the server does not have: 500 with the ssh refusal in the log', async (t) => {
  const app = await sshApp('pinned', otherHostKey());
  t.teardown(() => app.close());
  const res = await postBuild(app, request(uniqueName('ssh-pinned-wrong')));
  t.is(res.status, 500);
  t.regex(String(res.body.error), / exited with code 128$/);
  const log = await fetchLog(app, res.body.logId);
  t.regex(log.text, /Host key verification failed/);
});
