// .ci/no-services.sh, which .ci/install.sh uses for the bookworm packages: while apt-get runs, a
// policy-rc.d forbids starting services; afterwards it is gone, and the services of every package
// the run installed (dependencies too) are disabled, those of packages installed before are not.
// apt-get, dpkg-query, deb-systemd-helper and update-rc.d are stubs that record their calls.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../.ci/no-services.sh', import.meta.url));

const FILES: Record<string, string[]> = {
  newsvc: [
    '/usr/bin/newsvc',
    '/lib/systemd/system/newsvc.service',
    '/lib/systemd/system/newsvc@.service',
    '/lib/systemd/system/newsvc.socket',
    '/etc/init.d/newsvc',
  ],
  newdep: ['/usr/lib/systemd/system/newdep.service'],
  oldsvc: ['/lib/systemd/system/oldsvc.service', '/etc/init.d/oldsvc'],
};

const STUBS: Record<string, string> = {
  // Installs the named packages (plus the dependency newdep) unless FAIL_APT is set; records
  // what the policy says about starting a service at that moment.
  'apt-get': `#!/bin/bash
if [ -x "$POLICY" ]; then "$POLICY" ssh start; echo "apt-get $* policy-exit=$?" >> "$CALLS"
else echo "apt-get $* policy-exit=none" >> "$CALLS"; fi
[ -n "$FAIL_APT" ] && exit 100
if [ "$1" = -o ]; then shift 2; fi
if [ "$1" = install ]; then shift 3; for p in "$@" newdep; do echo "$p" >> "$DB"; done; fi
exit 0
`,
  'dpkg-query': `#!/bin/bash
if [ "$1" = -W ]; then while read -r p; do echo "installed $p"; done < "$DB"; exit 0; fi
if [ "$1" = -L ]; then cat "$FILES_DIR/$2" 2>/dev/null; exit 0; fi
exit 1
`,
  'deb-systemd-helper': '#!/bin/bash\necho "deb-systemd-helper $*" >> "$CALLS"\n',
  'update-rc.d': '#!/bin/bash\necho "update-rc.d $*" >> "$CALLS"\n',
};

function scratch(t: { teardown(fn: () => void): void }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ibs-no-services-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'bin');
  const filesDir = path.join(dir, 'files');
  fs.mkdirSync(bin);
  fs.mkdirSync(filesDir);
  for (const [name, body] of Object.entries(STUBS))
    fs.writeFileSync(path.join(bin, name), body, { mode: 0o755 });
  for (const [pkg, files] of Object.entries(FILES))
    fs.writeFileSync(path.join(filesDir, pkg), files.join('\n'));
  const db = path.join(dir, 'db');
  fs.writeFileSync(db, 'oldsvc\n');
  const calls = path.join(dir, 'calls');
  fs.writeFileSync(calls, '');
  const policy = path.join(dir, 'policy-rc.d');
  const install = (extraEnv: Record<string, string> = {}) =>
    spawnSync(
      'bash',
      ['-c', `set -euo pipefail; SUDO=""; log() { :; }; . "${SCRIPT}"; install_without_services newsvc`],
      {
        encoding: 'utf8',
        env: {
          PATH: `${bin}:${process.env.PATH ?? ''}`,
          POLICY: policy,
          CALLS: calls,
          DB: db,
          FILES_DIR: filesDir,
          ...extraEnv,
        },
      },
    );
  const callLines = () => fs.readFileSync(calls, 'utf8').trim().split('\n');
  return { policy, install, callLines };
}

test('services are forbidden to start during apt-get, and those it installed are disabled after', (t) => {
  const s = scratch(t);
  const res = s.install();
  t.is(res.status, 0, res.stderr);
  const calls = s.callLines();
  t.regex(calls[0] ?? '', /^apt-get .*install -y --no-install-recommends newsvc policy-exit=101$/);
  t.false(fs.existsSync(s.policy), 'the policy it wrote is removed');
  t.deepEqual(calls.slice(1).sort(), [
    'deb-systemd-helper disable newdep.service',
    'deb-systemd-helper disable newsvc.service',
    'deb-systemd-helper disable newsvc.socket',
    'update-rc.d newsvc disable',
  ]);
  t.false(
    calls.some((c) => c.includes('oldsvc')),
    'a package installed before is left alone',
  );
});

test('an existing policy-rc.d is kept; a failed install still removes the one it wrote', (t) => {
  const kept = scratch(t);
  fs.writeFileSync(kept.policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  t.is(kept.install().status, 0);
  t.is(fs.readFileSync(kept.policy, 'utf8'), '#!/bin/sh\nexit 101\n');

  const failing = scratch(t);
  const res = failing.install({ FAIL_APT: '1' });
  t.not(res.status, 0);
  t.deepEqual(
    failing.callLines().map((c) => c.replace(/^apt-get (-o \S+ )?(\w+).* (policy-exit=\S+)$/, '$2 $3')),
    ['install policy-exit=101', 'update policy-exit=101'],
  );
  t.false(fs.existsSync(failing.policy));
});
