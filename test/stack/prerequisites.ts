// What the stack needs on the machine before `up` starts anything: every program it spawns (looked
// up in the PATH its daemons get, see baseEnv) and the files .ci/install.sh fetches. Checked up front
// so that a missing one ends `up` with its name and the install command, not a spawn error.
import fs from 'node:fs';
import path from 'node:path';
import { COSIGN_BIN, DOCKER_BIN_DIR, I386_DEB_DIR } from './layout.js';

export const INSTALL_COMMAND = 'bash .ci/install.sh';

export interface Prerequisite {
  /** A program name (found in PATH) or an absolute path. */
  readonly what: string;
  /** Where it comes from (a Debian package or the install script's step). */
  readonly from: string;
  /** An alternative check for what is not a single program (a file pattern in a directory). */
  readonly present?: () => boolean;
}

const BUILDX_PLUGIN_DIRS = ['/usr/local/lib/docker/cli-plugins', '/usr/libexec/docker/cli-plugins'];

export const PREREQUISITES: readonly Prerequisite[] = [
  { what: path.join(DOCKER_BIN_DIR, 'dockerd'), from: "trixie's docker.io" },
  { what: COSIGN_BIN, from: "trixie's cosign" },
  { what: 'containerd', from: 'Debian package containerd' },
  { what: 'runc', from: 'Debian package runc' },
  { what: 'docker', from: 'the docker CLI (or trixie docker-cli)' },
  {
    what: 'docker-buildx (docker CLI plugin)',
    from: "trixie's docker-buildx",
    present: () => BUILDX_PLUGIN_DIRS.some((dir) => isExecutable(path.join(dir, 'docker-buildx'))),
  },
  { what: 'docker-registry', from: 'Debian package docker-registry' },
  { what: 'htpasswd', from: 'Debian package apache2-utils' },
  { what: 'git', from: 'Debian package git' },
  { what: '/usr/sbin/sshd', from: 'Debian package openssh-server' },
  { what: 'ssh-keygen', from: 'Debian package openssh-client' },
  { what: 'openssl', from: 'Debian package openssl' },
  { what: 'ip', from: 'Debian package iproute2' },
  { what: '/bin/busybox', from: 'Debian package busybox-static' },
  {
    what: `${I386_DEB_DIR}/busybox-static_*_i386.deb`,
    from: 'the i386 busybox-static package',
    present: () => {
      try {
        return fs.readdirSync(I386_DEB_DIR).some((f) => /^busybox-static_.*_i386\.deb$/.test(f));
      } catch {
        return false;
      }
    },
  },
  { what: 'tar', from: 'Debian package tar' },
  { what: 'dpkg', from: 'Debian package dpkg' },
  // Not spawned by the stack: the tests put it in front of the service (test/helpers/nginx.ts).
  { what: '/usr/sbin/nginx', from: 'Debian package nginx' },
];

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether a program name is found in `searchPath`, or an absolute path is executable. */
function found(program: string, searchPath: string): boolean {
  if (path.isAbsolute(program)) return isExecutable(program);
  return searchPath
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .some((dir) => isExecutable(path.join(dir, program)));
}

/** The prerequisites that are not on this machine, for the PATH the stack's commands get. */
export function missingPrerequisites(searchPath: string): Prerequisite[] {
  return PREREQUISITES.filter((p) => !(p.present ? p.present() : found(p.what, searchPath)));
}

/** The message `up` prints when something is missing. */
export function missingMessage(missing: readonly Prerequisite[]): string {
  const width = Math.max(...missing.map((p) => p.what.length));
  return [
    'stack up: missing prerequisites (nothing was started):',
    ...missing.map((p) => `  ${p.what.padEnd(width)}  from ${p.from}`),
    `Install them with: ${INSTALL_COMMAND}`,
  ].join('\n');
}
