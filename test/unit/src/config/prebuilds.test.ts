// The prebuild settings: configurations checked at startup (a bad entry is named), the webhook
// secrets read from their files, and GET /config's view, which lists configurations, never a secret.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';
import { effectiveConfigView } from '../../../../src/config/view.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-prebuilds-config-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const env = { HOME: dir, DOCKER_CONFIG: join(dir, 'docker') };
const write = (name: string, value: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};
const good = {
  repository: 'https://git.example/team/app.git',
  branches: ['main', 'release/*'],
  paths: ['.devcontainer/**'],
  image: { registry: 'registry.example:5000', name: 'team/app' },
};

test('configurations load from their file with refreshOnBaseChange true by default', (t) => {
  const path = write('ok.json', [good, { ...good, branches: ['dev'], refreshOnBaseChange: false }]);
  const config = loadConfig({ argv: ['--prebuild-configurations-path', path], env });
  t.deepEqual(
    config.prebuilds.configurations.map((c) => [c.branches, c.refreshOnBaseChange]),
    [
      [['main', 'release/*'], true],
      [['dev'], false],
    ],
  );
});

test('the settings file holds configurations and intervals', (t) => {
  const settings = write('settings.json', {
    prebuilds: { configurations: [good], reconcileIntervalSeconds: 7, refreshIntervalSeconds: 8 },
  });
  const config = loadConfig({ argv: ['--settings', settings], env });
  t.is(config.prebuilds.configurations.length, 1);
  t.is(config.prebuilds.reconcileIntervalSeconds, 7);
  t.is(config.prebuilds.refreshIntervalSeconds, 8);
});

test('startup refuses bad entries, naming each by position and repository', (t) => {
  const path = write('bad.json', [
    good,
    { ...good, branches: [] },
    { ...good, repository: 'https://git.example/other.git', image: { registry: 'r.example', name: 'Upper' } },
    { branches: ['main'], image: good.image },
    { ...good, extra: true },
  ]);
  const err = t.throws(() => loadConfig({ argv: ['--prebuild-configurations-path', path], env }), {
    instanceOf: ConfigError,
  });
  const text = (err as ConfigError).problems.join('\n');
  t.regex(text, /prebuild configuration 1 \(https:\/\/git\.example\/team\/app\.git\).*branches/);
  t.regex(text, /prebuild configuration 2 \(https:\/\/git\.example\/other\.git\).*image\.name/);
  t.regex(text, /prebuild configuration 3:.*repository/);
  t.regex(text, /prebuild configuration 4 .*extra/);
  t.notRegex(text, /prebuild configuration 0/);
});

test('a hook secret file that cannot be read is refused without its content', (t) => {
  const multi = write('multi-line', 'line-one-secret\nline-two\n');
  const err = t.throws(
    () =>
      loadConfig({
        argv: ['--github-hook-secret-file', join(dir, 'missing'), '--gitea-hook-secret-file', multi],
        env,
      }),
    { instanceOf: ConfigError },
  );
  t.regex(err?.message ?? '', /GitHub webhook secret file .*missing cannot be read \(ENOENT\)/);
  t.regex(err?.message ?? '', /Gitea webhook secret file .* must hold one non-empty line/);
  t.notRegex(err?.message ?? '', /line-one-secret/);
});

test('GET /config lists configurations and which hooks are set, never a secret', (t) => {
  const secret = 'canary-hook-secret-8d1f';
  const path = write('ok2.json', [good]);
  const config = loadConfig({
    argv: ['--prebuild-configurations-path', path, '--gitlab-hook-token-file', write('gl', `${secret}\n`)],
    env,
  });
  t.is(config.prebuilds.hookSecrets.gitlab, secret);
  const view = effectiveConfigView(config);
  t.false(JSON.stringify(view).includes(secret));
  t.deepEqual(view.prebuilds, {
    configurations: [{ ...good, refreshOnBaseChange: true }],
    reconcileIntervalSeconds: 300,
    refreshIntervalSeconds: 21600,
    hooks: { github: false, gitlab: true, gitea: false },
  });
});
