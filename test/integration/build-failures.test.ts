/**
 * POST /build failures against the real stack: a 500 naming the failed command, with a log
 * that holds the real error; timeouts that leave no process behind; definitions escaping the
 * clone refused with 400.
 */
import test from 'ava';
import { symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  fetchLog,
  httpsCreds,
  httpsRepo,
  postBuild,
  servedRepo,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';
import { cmdlineOf, descendantPids } from '../helpers/processes.js';
import { freePort } from '../stack/proc.js';

test('wrong git password: 500 from git clone, the log says why and never shows the password', async (t) => {
  const app = await startBuildApp();
  t.teardown(() => app.close());
  const wrong = `wrong-${uniqueName('pw').slice(3)}`;
  const res = await postBuild(app, {
    repository: httpsRepo('image'),
    gitCredentials: { username: stack.GIT_HTTPS_USER, token: wrong },
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('wrongpw') },
  });
  t.is(res.status, 500);
  t.true(
    String(res.body.error).startsWith(
      `git clone --config core.sparseCheckout=true --config core.sparseCheckoutCone=false --filter=blob:none --no-checkout --depth 1 --single-branch --no-tags -- ${httpsRepo('image')} /`,
    ),
  );
  t.regex(String(res.body.error), / exited with code 128$/);
  t.regex(String(res.body.logId), /^git-/);
  const log = await fetchLog(app, res.body.logId);
  t.is(log.status, 200);
  t.regex(log.text, /Authentication failed|401|could not read/i);
  t.false(log.text.includes(wrong));
  t.false(JSON.stringify(res.body).includes(wrong));
});

test('missing repository: 500 from git clone with its log', async (t) => {
  const app = await startBuildApp();
  t.teardown(() => app.close());
  const res = await postBuild(app, {
    repository: httpsRepo('does-not-exist'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('missing') },
  });
  t.is(res.status, 500);
  t.regex(String(res.body.error), /^git clone .*does-not-exist\.git .* exited with code 128$/);
  const log = await fetchLog(app, res.body.logId);
  t.is(log.status, 200);
  t.regex(log.text, /not found|does not appear to be a git repository|404/i);
});

test('registry push denied: 500 from devcontainer build, the registry refusal in the img log', async (t) => {
  const app = await startBuildApp();
  t.teardown(() => app.close());
  const name = uniqueName('denied');
  const res = await postBuild(app, {
    repository: httpsRepo('image'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_BASIC, name },
  });
  t.is(res.status, 500);
  t.regex(
    String(res.body.error),
    /^devcontainer build .*--image-name localhost:\d+\/it\/denied-[0-9a-f]+:sha-[0-9a-f]{7} .*exited with code 1$/,
  );
  t.regex(String(res.body.logId), /^img-/);
  const log = await fetchLog(app, res.body.logId);
  t.is(log.status, 200);
  t.regex(log.text, /401|unauthorized|authorization/i);
});

test('builder unreachable: 500 before the build, its img log naming the builder', async (t) => {
  const port = await freePort(); // nothing listens there
  const app = await startBuildApp({
    builderEndpoints: [`tcp://127.0.0.1:${port}`],
    builderName: 'it-unreachable',
  });
  t.teardown(() => app.close());
  const res = await postBuild(app, {
    repository: httpsRepo('image'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('nobuilder') },
  });
  t.is(res.status, 500);
  // The fleet probes its builder before the first buildx step (docs/fleet.md): nothing runs.
  t.is(res.body.error, 'image build failed');
  const log = await fetchLog(app, res.body.logId);
  t.false(log.text.includes('$ devcontainer build'), log.text);
  t.is(log.status, 200);
  t.regex(log.text, new RegExp(`127\\.0\\.0\\.1:${port}|connection refused`, 'i'));
});

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const scheme of ['https', 'ssh'] as const) {
  test(`clone timeout against a ${scheme} server that never answers: 500, nothing left running`, async (t) => {
    const silent = await silentServer();
    t.teardown(() => silent.close());
    const app = await startBuildApp({ build: { cloneTimeoutSeconds: 2 } });
    t.teardown(() => app.close());
    const repository =
      scheme === 'https'
        ? `https://127.0.0.1:${silent.port}/x.git`
        : `ssh://git@127.0.0.1:${silent.port}/x.git`;
    const seen = new Set<number>();
    const sampler = setInterval(() => {
      for (const pid of descendantPids()) if (cmdlineOf(pid).includes(`${silent.port}`)) seen.add(pid);
    }, 50);
    const started = Date.now();
    const res = await postBuild(app, {
      repository,
      ...(scheme === 'https' ? { gitCredentials: httpsCreds() } : {}),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('timeout') },
    });
    clearInterval(sampler);
    const elapsed = Date.now() - started;
    t.is(res.status, 500);
    t.regex(
      String(res.body.error),
      /^git clone --config core.sparseCheckout=true --config core.sparseCheckoutCone=false --filter=blob:none --no-checkout --depth 1 --single-branch --no-tags -- .* timed out after 2 s$/,
    );
    // Never before the timeout; the upper bound only tells a kill from a hang (a loaded machine
    // delays the answer by seconds: 30 times the timeout).
    t.true(elapsed >= 2000 && elapsed < 60_000, `answered after ${elapsed} ms`);
    t.true(seen.size > 0, 'the clone ran (git or ssh seen talking to the server)');
    const log = await fetchLog(app, res.body.logId);
    t.is(log.status, 200);
    t.true(log.text.includes('# timed out after 2 s'));
    const left = descendantPids().filter((pid) => cmdlineOf(pid).includes(`${silent.port}`) || seen.has(pid));
    t.deepEqual(left, [], `still running: ${left.map(cmdlineOf).join('; ')}`);
  });
}

for (const [what, files] of [
  [
    'a definition that is a symbolic link out of the clone',
    (dir: string) => symlinkSync('/etc/hostname', join(dir, '.devcontainer.json')),
  ],
  [
    'a Dockerfile reached through ..',
    (dir: string) => {
      mkdirSync(join(dir, '.devcontainer'));
      writeFileSync(
        join(dir, '.devcontainer', 'devcontainer.json'),
        JSON.stringify({ build: { dockerfile: '../../outside/Dockerfile' } }),
      );
    },
  ],
  [
    'a build context reached through a symbolic link',
    (dir: string) => {
      mkdirSync(join(dir, '.devcontainer'));
      symlinkSync('/etc', join(dir, '.devcontainer', 'ctx'));
      writeFileSync(
        join(dir, '.devcontainer', 'devcontainer.json'),
        // JSONC, as devcontainer.json allows.
        '{\n  // comment\n  "build": { "dockerfile": "Dockerfile", "context": "ctx", },\n}\n',
      );
      writeFileSync(join(dir, '.devcontainer', 'Dockerfile'), `FROM ${stack.BASE_IMAGE_ANON}\n`);
    },
  ],
] as const) {
  test(`${what}: 400 after the clone, nothing built`, async (t) => {
    const repo = servedRepo(files);
    t.teardown(repo.remove);
    const app = await startBuildApp();
    t.teardown(() => app.close());
    const name = uniqueName('escape');
    const res = await postBuild(app, {
      repository: httpsRepo(repo.name),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.regex(String(res.body.error), /resolves outside the repository/);
    t.is((await fetch(`http://${stack.REGISTRY_ANON}/v2/${name}/tags/list`)).status, 404);
  });
}

test('a repository without commits: 500 from reading HEAD, with the clone log', async (t) => {
  const app = await startBuildApp();
  t.teardown(() => app.close());
  const res = await postBuild(app, {
    repository: httpsRepo('empty'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('empty') },
  });
  t.is(res.status, 500);
  t.regex(String(res.body.error), /^git -C \S+ rev-parse HEAD --abbrev-ref HEAD exited with code 128$/);
  const log = await fetchLog(app, res.body.logId);
  t.regex(log.text, /empty repository/);
});
