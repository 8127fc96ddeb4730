/**
 * No token, password or private key of a build in: the captured logs, the service's own logs,
 * the argv (/proc/<pid>/cmdline) and environment of the processes it starts (sampled during
 * the builds), the clone's .git/config, or any file left in the scratch space afterwards.
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  fetchLog,
  filesUnder,
  httpsRepo,
  postBuild,
  sshRepo,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';
import { cmdlineOf, descendantPids } from '../helpers/processes.js';

const b64 = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
const privateKey = readFileSync(stack.GIT_SSH_KEY_FILE, 'utf8');

test('secrets stay out of argv, environments, logs, .git/config and the scratch space', async (t) => {
  const secrets = [
    stack.GIT_HTTPS_PASSWORD,
    b64(stack.GIT_HTTPS_USER, stack.GIT_HTTPS_PASSWORD),
    stack.REGISTRY_BASIC_PASSWORD,
    b64(stack.REGISTRY_BASIC_USER, stack.REGISTRY_BASIC_PASSWORD),
    stack.REGISTRY_TOKEN_PASSWORD,
    b64(stack.REGISTRY_TOKEN_USER, stack.REGISTRY_TOKEN_PASSWORD),
    // The private key's body lines (the armour lines are not secret).
    ...privateKey.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----')),
  ];
  const leaks = (text: string): string[] => secrets.filter((s) => text.includes(s)).map((s) => s.slice(0, 4));

  const app = await startBuildApp({
    gitCredentials: [{ host: stack.GIT_SSH_HOST, port: Number(stack.GIT_SSH_PORT), kind: 'ssh', privateKey }],
    registryAuth: {
      auths: {
        [stack.REGISTRY_TOKEN]: { auth: b64(stack.REGISTRY_TOKEN_USER, stack.REGISTRY_TOKEN_PASSWORD) },
      },
    },
  });
  t.teardown(() => app.close());
  const scratch = app.ctx.config.scratchDir;

  const found: string[] = [];
  const commands = new Set<string>();
  let gitConfigsRead = 0;
  const sample = () => {
    for (const pid of descendantPids()) {
      const cmdline = cmdlineOf(pid);
      if (cmdline === '') continue;
      commands.add(cmdline.split(' ').slice(0, 2).join(' '));
      for (const leak of leaks(cmdline)) found.push(`cmdline of ${cmdline.slice(0, 60)}: ${leak}`);
      try {
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        for (const leak of leaks(environ)) found.push(`environ of ${cmdline.slice(0, 60)}: ${leak}`);
      } catch {
        // exited meanwhile
      }
    }
    let requests: string[] = [];
    try {
      requests = readdirSync(join(scratch, 'requests'));
    } catch {
      // not yet
    }
    for (const id of requests) {
      try {
        const text = readFileSync(join(scratch, 'requests', id, 'src', '.git', 'config'), 'utf8');
        gitConfigsRead++;
        for (const leak of leaks(text)) found.push(`.git/config: ${leak}`);
      } catch {
        // not cloned yet, or gone
      }
    }
  };
  const sampler = setInterval(sample, 20);

  const [https, ssh] = await Promise.all([
    postBuild(app, {
      repository: httpsRepo('feature'),
      gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
      image: { registry: stack.REGISTRY_BASIC, name: uniqueName('secrets-https') },
      registryCredentials: {
        registry: stack.REGISTRY_BASIC,
        username: stack.REGISTRY_BASIC_USER,
        password: stack.REGISTRY_BASIC_PASSWORD,
      },
    }),
    postBuild(app, {
      repository: sshRepo('image'),
      image: { registry: stack.REGISTRY_TOKEN, name: uniqueName('secrets-ssh') },
    }),
  ]);
  clearInterval(sampler);
  t.is(https.status, 200, JSON.stringify(https.body));
  t.is(ssh.status, 200, JSON.stringify(ssh.body));

  // The sampling really saw the commands and the clones.
  t.true(
    [...commands].some((c) => c.startsWith('git ')),
    [...commands].join(', '),
  );
  t.true(
    [...commands].some((c) => c.includes('devcontainer')),
    [...commands].join(', '),
  );
  t.true(gitConfigsRead > 0, 'a clone .git/config was read');
  t.deepEqual(found, []);

  for (const body of [https.body, ssh.body]) {
    t.deepEqual(leaks(JSON.stringify(body)), []);
    for (const id of [body.gitCloneLogId, body.imageBuildLogId]) {
      const log = await fetchLog(app, id);
      t.is(log.status, 200);
      t.deepEqual(leaks(log.text), [], `log ${String(id)}`);
    }
  }
  t.deepEqual(leaks(app.logText()), [], 'service logs');

  t.deepEqual(readdirSync(join(scratch, 'requests')), [], 'per-request directories removed');
  const files = filesUnder(scratch);
  t.true(files.length > 0);
  for (const file of files) t.deepEqual(leaks(readFileSync(file, 'utf8')), [], file);
});
